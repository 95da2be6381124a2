//go:build unix

package launch

import (
	"os"
	"strconv"
	"strings"
)

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
	st, ok := readStat(pid)
	return st.state, st.pgrp, ok
}

// stat is what readStat takes from /proc/pid/stat.
type stat struct {
	state      string
	ppid, pgrp int
}

// readStat reads /proc/pid/stat: "pid (comm) state ppid pgrp ...", where
// comm may hold spaces and parentheses.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{state: f[0], ppid: ppid, pgrp: pgrp}, true
}

// descendants lists the live (non-zombie) descendants of root, read from
// /proc; nil where /proc is not available.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	live := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			children[st.ppid] = append(children[st.ppid], pid)
			live[pid] = st.state != "Z" && st.state != "X"
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if live[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}
