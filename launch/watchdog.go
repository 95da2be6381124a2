//go:build unix

package launch

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog makes "no server process is left behind" hold even when
// servebench itself dies without running its deferred Stop (a panic in
// another goroutine, SIGKILL, an OOM kill). For each launched server,
// Start re-executes the current binary as a small watchdog process that
// holds the read end of a pipe. Stop writes one byte to the pipe, and the
// watchdog exits quietly. If servebench dies instead, the kernel closes
// the pipe, the watchdog reads EOF and stops the server's process group
// itself: SIGTERM, then SIGKILL after the grace period.
//
// The watchdog mode is entered from this package's init, so every binary
// that imports launch (servebench, its tests) can serve as the watchdog.
const watchdogEnv = "SERVEBENCH_LAUNCH_WATCHDOG"

func init() {
	if v := os.Getenv(watchdogEnv); v != "" {
		os.Exit(runWatchdog(v))
	}
}

// watchdog is servebench's end of a watchdog: writing to (or closing)
// w releases the watchdog.
type watchdog struct {
	w    *os.File
	cmd  *exec.Cmd
	once sync.Once
}

// startWatchdog starts a watchdog for process group pgid; errors leave the
// server without one (the kernel death signal still reaches the server's
// main process).
func startWatchdog(pgid int, grace time.Duration) (*watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(exe)
	cmd.Args = []string{"servebench-watchdog"}
	cmd.Env = []string{fmt.Sprintf("%s=%d:%d", watchdogEnv, pgid, grace.Milliseconds())}
	cmd.Stdin = r
	// Its own process group: a terminal's Ctrl-C must not end it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait() // reap it when it exits
	return &watchdog{w: w, cmd: cmd}, nil
}

// release tells the watchdog the server was stopped; it exits quietly.
func (d *watchdog) release() {
	if d == nil {
		return
	}
	d.once.Do(func() {
		_, _ = d.w.Write([]byte{1})
		d.w.Close()
	})
}

// runWatchdog is the watchdog process: spec is "pgid:grace_ms".
func runWatchdog(spec string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM)
	a, b, _ := strings.Cut(spec, ":")
	pgid, err1 := strconv.Atoi(a)
	ms, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || pgid <= 1 {
		return 2
	}
	buf := make([]byte, 1)
	if n, _ := os.Stdin.Read(buf); n == 1 {
		return 0 // released: servebench stopped the server itself
	}
	// servebench is gone: stop the group.
	_ = signalGroup(pgid, sigTerm)
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for groupAlive(pgid) && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
	}
	if groupAlive(pgid) {
		_ = signalGroup(pgid, sigKill)
	}
	return 0
}
