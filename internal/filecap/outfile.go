// Writing output files.
//
// Create writes an output file (a report, a result document, a fitted
// profile) so that a failed write never destroys what was at its
// path: the bytes go to a temporary file in the same folder, renamed over
// the target only once they are all written and closed. Nothing the
// command did not create is ever removed: a failure removes only the
// temporary file.
//
// A target that exists and is not a regular file (a device such as
// /dev/stdout or /dev/null, a FIFO) cannot be replaced by a rename without
// destroying it; it is written in place, and left as it is on failure. A
// symbolic link is followed: the file it names is replaced, the link kept.

package filecap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// newPerm is the permission of a file that did not exist (before the
// umask, as os.Create's 0666 would be, less write for others: reports
// are not shared scratch files).
const newPerm = 0o644

// OutFile is an output being written. Write to it, then Commit; Abort (or a
// failed Commit) leaves the target as it was.
type OutFile struct {
	f      *os.File
	name   string // the path as given, for messages
	final  string // where Commit renames to: name with symbolic links resolved
	direct bool   // the target is not a regular file: written in place
	done   bool
}

// Create starts writing the file at path. It fails at once where path's
// folder does not exist or cannot be written, so that a command can
// refuse before its work rather than after.
func Create(path string) (*OutFile, error) {
	perm := fs.FileMode(newPerm)
	final := path
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &OutFile{f: f, name: path, final: path, direct: true}, nil
	case err == nil:
		perm = st.Mode().Perm()
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			final = resolved
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &fs.PathError{Op: "create", Path: path, Err: pe.Err}
		}
		return nil, err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &OutFile{f: tmp, name: path, final: final}, nil
}

// Name is the path as given to Create.
func (f *OutFile) Name() string { return f.name }

// Write writes to the temporary file (or, for a device, to the target).
func (f *OutFile) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit closes the file and renames it over the target. On failure the
// target is left as it was and the temporary file removed.
func (f *OutFile) Commit() error {
	if f.done {
		return errors.New("filecap: " + f.name + " already committed or aborted")
	}
	f.done = true
	err := f.f.Close()
	if f.direct {
		return err
	}
	if err == nil {
		err = os.Rename(f.f.Name(), f.final)
	}
	if err != nil {
		os.Remove(f.f.Name())
	}
	return err
}

// Abort closes the file and removes the temporary file, leaving the
// target as it was. It does nothing after Commit or Abort.
func (f *OutFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	if !f.direct {
		os.Remove(f.f.Name())
	}
}
