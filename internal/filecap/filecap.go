// Package filecap reads whole files with a size cap, so that a file given
// by mistake or by an adversary (a 300 MB "profile", a disk image named
// report.json) ends in one clear error instead of filling memory.
package filecap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// The caps servebench applies to the files it reads whole.
const (
	// Config caps small hand-written files: launch profiles, calibration
	// files, Hugging Face config.json (16 MiB; real ones are a few KiB).
	Config int64 = 16 << 20
	// Document caps result documents (512 MiB; a sweep of hundreds of
	// levels is well under 1 MiB). Records files are streamed instead.
	Document int64 = 512 << 20
)

// TooLargeError is a file over its cap.
type TooLargeError struct {
	// Limit is the cap in bytes.
	Limit int64
	// What names the kind of file ("a launch profile").
	What string
}

// Error says the cap and what it is for, e.g. "larger than 16 MiB, the
// most a launch profile may be".
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the most %s may be", Size(e.Limit), e.What)
}

// Size writes n bytes in MiB or GiB.
func Size(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// ReadFile reads the file at path whole, or fails with a *TooLargeError
// once it has read more than limit bytes (what names the kind of file in
// the error). It reads through the limit rather than trusting the size
// the file system states, so pipes and growing files are capped too. A
// failure to open or read is returned as it is.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A regular file's stated size sizes the buffer (one allocation, not
	// io.ReadAll's doublings, which held up to twice the file and more
	// in garbage); bytes.MinRead more lets the read end without growing
	// and tells a file that grew meanwhile.
	size := int64(bytes.MinRead)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, &TooLargeError{Limit: limit, What: what}
		}
		size = st.Size() + bytes.MinRead
	}
	var buf bytes.Buffer
	buf.Grow(int(size))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Limit: limit, What: what}
	}
	return b, nil
}

// IsTooLarge reports whether err is a *TooLargeError.
func IsTooLarge(err error) bool {
	var te *TooLargeError
	return errors.As(err, &te)
}
