//go:build unix

package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog makes "no server process is left behind" hold for the
// server's whole process tree, whatever servebench does: a normal stop
// (Ctrl-C), a panic in another goroutine, SIGKILL, an OOM kill.
//
// Start re-executes the current binary as a small watchdog process, and
// the watchdog starts the server as its own child. On Linux the watchdog
// is a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process the
// server moves out of its process group and session and orphans (a
// double fork through setsid, as daemons do) is re-parented to the
// watchdog instead of to init, so the server's whole tree stays the
// watchdog's descendants, and the watchdog is done only when it has no
// child left. A subreaper inside servebench would not do: once servebench
// is SIGKILLed it is gone, and its orphans go to init.
//
// Servebench holds the write end of a pipe on the watchdog's stdin.
// Stop writes one byte to it; if servebench dies instead, the kernel
// closes it and the watchdog reads EOF. Either way the watchdog stops the
// tree: SIGTERM to the server's process group and to every other
// descendant, SIGKILL to whatever is left after the grace period, until
// it has no child. It reports on a second pipe (its fd 3): "pid N" once
// the server started (or "error MSG"), "exit STATUS" when the server's
// main process exits, and "gone" (or "left PIDS") when the tree is
// stopped.
//
// The watchdog mode is entered from this package's init, so every binary
// that imports launch (servebench, its tests) can serve as the watchdog.
const watchdogEnv = "SERVEBENCH_LAUNCH_WATCHDOG"

func init() {
	if v, ok := os.LookupEnv(watchdogEnv); ok {
		os.Exit(runWatchdog(v))
	}
}

// watchdog is servebench's end of a watchdog.
type watchdog struct {
	cmd  *exec.Cmd
	life *os.File // write end of the watchdog's stdin
	once sync.Once
}

// startWatchdog starts the watchdog, which starts the server: bin with
// argv and env, its stdout and stderr to log, in a process group of its
// own. It returns once the server started (the watchdog's "pid" line) or
// failed to, with the report pipe for the later lines.
func startWatchdog(bin string, argv, env []string, log *os.File, grace time.Duration) (*watchdog, int, *bufio.Reader, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, nil, fmt.Errorf("no watchdog: %v", err)
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, 0, nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, 0, nil, err
	}
	cmd := exec.Command(exe)
	cmd.Args = append([]string{"servebench-watchdog", bin}, argv...)
	cmd.Env = append(append([]string(nil), env...), fmt.Sprintf("%s=%d", watchdogEnv, grace.Milliseconds()))
	cmd.Stdin = lifeR
	cmd.ExtraFiles = []*os.File{repW, log} // fds 3 and 4
	// Its own process group: a terminal's Ctrl-C must not end it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	lifeR.Close()
	repW.Close()
	if err != nil {
		lifeW.Close()
		repR.Close()
		return nil, 0, nil, fmt.Errorf("watchdog: %v", err)
	}
	wd := &watchdog{cmd: cmd, life: lifeW}
	go cmd.Wait() // reap it when it exits
	rep := bufio.NewReader(repR)
	line, err := rep.ReadString('\n')
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch {
	case verb == "pid":
		pid, perr := strconv.Atoi(arg)
		if perr == nil && pid > 1 {
			return wd, pid, rep, nil
		}
	case verb == "error":
		wd.release()
		return nil, 0, nil, errors.New(arg)
	}
	wd.release()
	return nil, 0, nil, fmt.Errorf("watchdog: unexpected report %q (%v)", line, err)
}

// stop asks the watchdog to stop the server's tree (it exits afterwards).
func (d *watchdog) stop() {
	d.once.Do(func() {
		_, _ = d.life.Write([]byte{1})
		d.life.Close()
	})
}

// release is stop: a watchdog whose server is gone has nothing else to do.
func (d *watchdog) release() {
	if d != nil {
		d.stop()
	}
}

// runWatchdog is the watchdog process: spec is the grace period in
// milliseconds, os.Args[1] the server's binary, os.Args[2:] its argv.
func runWatchdog(spec string) int {
	// Catch (and drop) the signals a terminal or a process-group kill
	// sends, so that only the pipe ends the watchdog. Caught, not
	// ignored: an ignored signal stays ignored in the server across
	// exec, and a shell-script server could then never be stopped by
	// SIGTERM.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGTSTP)
	go func() {
		for range sigs {
		}
	}()
	ms, err := strconv.Atoi(spec)
	if err != nil || len(os.Args) < 3 {
		return 2
	}
	grace := time.Duration(ms) * time.Millisecond
	rep := os.NewFile(3, "report")
	log := os.NewFile(4, "log")
	if rep == nil || log == nil {
		return 2
	}
	// The server gets neither pipe: only the watchdog's exit may close
	// the report pipe, and the server's output goes to its stdout.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	report := func(format string, a ...any) { _, _ = fmt.Fprintf(rep, format+"\n", a...) }
	// Without a subreaper (not Linux) orphans of the server go to init
	// and only its group and the processes still below it are stopped.
	_ = becomeSubreaper()
	pid, err := forkServer(os.Args[1], os.Args[2:], serverEnv(), log)
	log.Close()
	if err != nil {
		report("error %s: %v", os.Args[1], err)
		return 1
	}
	report("pid %d", pid)
	stopRequested := make(chan struct{})
	go func() {
		b := make([]byte, 1)
		_, _ = os.Stdin.Read(b) // a byte: Stop; EOF: servebench is gone
		close(stopRequested)
	}()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	mainDone := false
	for {
		reapChildren(pid, &mainDone, report)
		select {
		case <-stopRequested:
			if left := stopTree(pid, grace, &mainDone, report); len(left) > 0 {
				report("left %v", left)
				return 1
			}
			report("gone")
			return 0
		case <-tick.C:
		}
	}
}

// serverEnv is the watchdog's environment without its own variable: what
// the server gets.
func serverEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, watchdogEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// forkServer starts the server: stdin from /dev/null, stdout and stderr to
// log, in a new process group whose id is its pid, sent SIGKILL should the
// watchdog itself die. The thread that forks stays locked, since the
// kernel ties the death signal to the parent thread.
func forkServer(bin string, argv, env []string, log *os.File) (int, error) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	runtime.LockOSThread()
	return syscall.ForkExec(bin, argv, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{null.Fd(), log.Fd(), log.Fd()},
		Sys:   serverProcAttr(),
	})
}

// reapChildren collects every exited child without blocking; the main
// server process's exit is reported once.
func reapChildren(mainPID int, mainDone *bool, report func(string, ...any)) (none bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return true
		}
		if err != nil || pid <= 0 {
			return false
		}
		if pid == mainPID && !*mainDone {
			*mainDone = true
			report("exit %d", uint32(ws))
		}
	}
}

// stopTree stops the server's tree: SIGTERM to its process group and to
// every other descendant of the watchdog; after grace, SIGKILL to all
// that remain, again until none is left (5 s at most). It returns the
// pids still alive then.
func stopTree(mainPID int, grace time.Duration, mainDone *bool, report func(string, ...any)) []int {
	self := os.Getpid()
	_ = syscall.Kill(-mainPID, syscall.SIGTERM)
	for _, p := range descendants(self) {
		if pg, err := syscall.Getpgid(p); err != nil || pg != mainPID {
			_ = syscall.Kill(p, syscall.SIGTERM)
		}
	}
	if waitNoChildren(mainPID, grace, mainDone, report) {
		return nil
	}
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) {
		_ = syscall.Kill(-mainPID, syscall.SIGKILL)
		for _, p := range descendants(self) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if waitNoChildren(mainPID, 50*time.Millisecond, mainDone, report) {
			return nil
		}
	}
	return descendants(self)
}

// waitNoChildren reaps children until none is left (true) or limit
// passes (false).
func waitNoChildren(mainPID int, limit time.Duration, mainDone *bool, report func(string, ...any)) bool {
	end := time.Now().Add(limit)
	for {
		if reapChildren(mainPID, mainDone, report) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readReports reads the watchdog's report lines after "pid": exit sets
// the server's exit status, gone or left the stop's outcome. It returns
// when the watchdog closes the pipe (it exited).
func readReports(rep *bufio.Reader, onExit func(status string), onStopped func(err error)) {
	stopped := false
	for {
		line, err := rep.ReadString('\n')
		verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch verb {
		case "exit":
			if n, perr := strconv.ParseUint(arg, 10, 32); perr == nil {
				onExit(describeWaitStatus(syscall.WaitStatus(n)))
			}
		case "gone":
			stopped = true
			onStopped(nil)
		case "left":
			stopped = true
			onStopped(fmt.Errorf("processes %s of the server are still alive after SIGKILL", arg))
		}
		if err == io.EOF || err != nil {
			if !stopped {
				onStopped(errors.New("the watchdog ended without stopping the server"))
			}
			return
		}
	}
}

// describeWaitStatus says how a process ended: "code 1", "signal: killed".
func describeWaitStatus(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("code %d", ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return fmt.Sprintf("status %#x", uint32(ws))
}
