package filecap

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// leftovers fails the test if dir holds anything but want.
func leftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(want) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %q, want %q", dir, names, want)
	}
}

func writeOut(t *testing.T, path, text string) error {
	t.Helper()
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(text)); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func TestCommitReplacesAndKeepsPermission(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := writeOut(t, path, "new"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != newPerm {
		t.Errorf("a new file has mode %v, want %v", st.Mode().Perm(), os.FileMode(newPerm))
	}
	os.Chmod(path, 0o600)
	if err := writeOut(t, path, "second"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "second" || st.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %v, want %q mode 0600", b, st.Mode().Perm(), "second")
	}
	leftovers(t, dir, "r.json")
}

// TestAbortLeavesTheTarget: a failure mid-write keeps what was there.
func TestAbortLeavesTheTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	os.WriteFile(path, []byte("precious"), 0o644)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	f.Abort() // twice is harmless
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatalf("target now %q", b)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	leftovers(t, dir, "r.json")
}

// TestSymlinkIsFollowed: the file a link names is replaced, the link kept.
func TestSymlinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.WriteFile(real, []byte("old"), 0o644)
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if err := writeOut(t, link, "new"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v %v", st, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Fatalf("the linked file holds %q", b)
	}
	leftovers(t, dir, "link.json", "real.json")
}

// TestDeviceIsWrittenInPlace: a device is neither renamed over nor
// removed when its write fails (/dev/full refuses every write).
func TestDeviceIsWrittenInPlace(t *testing.T) {
	for _, dev := range []string{"/dev/null", "/dev/full"} {
		before, err := os.Stat(dev)
		if err != nil {
			t.Skip(err)
		}
		err = writeOut(t, dev, "bytes")
		if (dev == "/dev/full") != (err != nil) {
			t.Errorf("%s: err %v", dev, err)
		}
		after, err := os.Stat(dev)
		if err != nil || after.Mode() != before.Mode() {
			t.Fatalf("%s changed: %v → %v (%v)", dev, before.Mode(), after, err)
		}
	}
}

// TestUnwritableFolder: Create fails at once, naming the path, and
// leaves nothing behind.
func TestUnwritableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes any folder of a disk's, but no one creates files in
		// /proc: the same refusal, with no target to keep.
		path := "/proc/self/servebench-r.json"
		_, err := Create(path)
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Path != path {
			t.Fatalf("err %v, want a PathError naming %s", err, path)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s was created", path)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	os.WriteFile(path, []byte("precious"), 0o644)
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	_, err := Create(path)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != path {
		t.Fatalf("err %v, want a PathError naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatalf("target now %q", b)
	}
	leftovers(t, dir, "r.json")
}
