//go:build unix && !linux

package launch

import "syscall"

// sysProcAttr puts the server in its own process group, so a terminal's
// Ctrl-C reaches servebench only and Stop can signal the whole group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
