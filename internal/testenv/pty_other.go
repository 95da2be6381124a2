//go:build !linux

package testenv

import (
	"os"
	"testing"
)

// PTY opens a pseudo-terminal on Linux; elsewhere the test is skipped
// (fails under SERVEBENCH_STRICT=1).
func PTY(t testing.TB) (controller, terminal *os.File) {
	t.Helper()
	Missing(t, "the pseudo-terminal helper is written for Linux")
	return nil, nil
}

// PTYSize is PTY with a size: elsewhere than Linux the test is skipped.
func PTYSize(t testing.TB, cols, rows int) (controller, terminal *os.File) {
	t.Helper()
	Missing(t, "the pseudo-terminal helper is written for Linux")
	return nil, nil
}
