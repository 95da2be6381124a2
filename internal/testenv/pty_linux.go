package testenv

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// PTY opens a pseudo-terminal of 40 rows and 160 columns, as a terminal
// emulator would: what a program writes to terminal (its standard output
// or error) can be read from controller, and terminal is a terminal to
// every check a program makes (isatty). It uses the kernel's /dev/ptmx
// directly (golang.org/x/sys/unix, already a dependency) rather than a pty
// library or script(1). Both ends close when the test ends; a machine
// without pseudo-terminals skips the test (fails under SERVEBENCH_STRICT=1).
func PTY(t testing.TB) (controller, terminal *os.File) {
	t.Helper()
	return PTYSize(t, 160, 40)
}

// PTYSize is PTY with a terminal of cols columns and rows rows, for a
// test of what fits a terminal's width.
func PTYSize(t testing.TB, cols, rows int) (controller, terminal *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		Missing(t, "test needs a pseudo-terminal: "+err.Error())
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open pseudo-terminal %d: %v", n, err)
	}
	t.Cleanup(func() { s.Close() })
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		t.Fatalf("size pseudo-terminal: %v", err)
	}
	return m, s
}
