//go:build unix && !linux

package launch

import (
	"errors"
	"syscall"
)

// serverProcAttr puts the server in its own process group, so a
// terminal's Ctrl-C reaches servebench only and the group can be
// signalled whole.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// becomeSubreaper is Linux's PR_SET_CHILD_SUBREAPER; elsewhere orphans of
// the server go to init and only its process group can be stopped.
func becomeSubreaper() error {
	return errors.New("no child subreaper on this system")
}
