//go:build unix

package launch

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalGroup sends sig to every process in group pgid.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.EINVAL
	}
	return syscall.Kill(-pgid, sig)
}

// groupAlive reports whether any live (non-zombie) process is in group
// pgid. Where /proc exists it is read, so zombies left for init to reap
// do not count; elsewhere kill(-pgid, 0) decides.
func groupAlive(pgid int) bool {
	if pids, ok := GroupMembers(pgid); ok {
		return len(pids) > 0
	}
	return syscall.Kill(-pgid, 0) == nil
}

// GroupMembers lists the live (non-zombie) processes whose process group
// is pgid, read from /proc; ok is false where /proc is not available.
func GroupMembers(pgid int) (pids []int, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil, false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if ok && pgrp == pgid && state != "Z" && state != "X" {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// procStat reads the state and process group of pid from /proc/pid/stat.
func procStat(pid int) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	if err != nil {
		return "", 0, false
	}
	return f[0], pgrp, true
}
