package launch

import "syscall"

// serverProcAttr puts the server in its own process group (so a
// terminal's Ctrl-C reaches servebench only, and the group can be
// signalled whole) and asks the kernel to send it SIGKILL should its
// parent, the watchdog, die without stopping it.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes the calling process a child subreaper: orphaned
// descendants are re-parented to it instead of to init (Linux ≥ 3.4).
func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
