package launch

import "syscall"

// sysProcAttr puts the server in its own process group (so a terminal's
// Ctrl-C reaches servebench only, and Stop can signal the whole group) and
// asks the kernel to send it SIGTERM should servebench die without
// stopping it (a crash or SIGKILL), so the server shuts down its own
// children as it does on a normal stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
