package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is where processTree reads the process table (Linux procfs).
const procRoot = "/proc"

// processTree returns root and all its descendants, read from procfs at
// dir: a server's GPU memory may sit in worker processes (vLLM's engine
// core, tensor-parallel workers) rather than the process that was started.
func processTree(dir string, root int) (map[int]bool, error) {
	if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(root))); err != nil {
		return nil, fmt.Errorf("server pid %d: %w", root, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		if ppid, ok := parentPID(string(b)); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	tree := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !tree[c] {
				tree[c] = true
				queue = append(queue, c)
			}
		}
	}
	return tree, nil
}

// parentPID reads the ppid of a /proc/<pid>/stat line: "pid (comm) state
// ppid ...", where comm may hold spaces and parentheses.
func parentPID(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
