package launch

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// daemonPID waits for the daemonizing helper's pid file.
func daemonPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			if err == nil {
				return pid
			}
		}
	}
	t.Fatal("the server's daemon never wrote its pid")
	return 0
}

// killLeftover ends pid if a failing test left it running.
func killLeftover(pid int) {
	if pid > 1 && alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// waitGone waits up to limit for pid to be gone.
func waitGone(pid int, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}

// checkDaemonOutside checks that the daemon left the server's process
// group and session, as a setsid double fork does.
func checkDaemonOutside(t *testing.T, daemon, server int) {
	t.Helper()
	pg, _ := syscall.Getpgid(daemon)
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(daemon), 0, 0)
	ssid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(server), 0, 0)
	if pg == server || sid == ssid {
		t.Fatalf("daemon %d is in the server's group or session (pgid %d, sid %d): the test does not test a setsid double fork", daemon, pg, sid)
	}
}

// TestStopEndsSetsidDaemon (the Ctrl-C case): a
// process that the server moved into its own session by a double fork
// through setsid, and that ignores SIGTERM, is stopped with the server.
// Before, Stop signalled only the server's process group and it
// survived.
func TestStopEndsSetsidDaemon(t *testing.T) {
	s := helperSpec("daemonizing", freePort(t))
	pidfile := filepath.Join(t.TempDir(), "daemon.pid")
	s.Env = append(s.Env, "HELPER_PIDFILE="+pidfile)
	s.StopGrace = 500 * time.Millisecond
	srv, err := Start(s, t.TempDir()+"/helper.log")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitHealthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	daemon := daemonPID(t, pidfile)
	defer killLeftover(daemon)
	checkDaemonOutside(t, daemon, srv.PID())
	waitIgnoresTERM(t, daemon)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if alive(daemon) {
		t.Fatalf("the server's setsid daemon %d outlived Stop", daemon)
	}
	assertNoMembers(t, srv.PID())
}

// TestParentKilledEndsSetsidDaemon (the SIGKILL
// cases: `launch` and `run --profile` both call Start and can be killed
// outright): after SIGKILL of the process that started the server, its
// watchdog stops the whole tree, the setsid daemon included.
func TestParentKilledEndsSetsidDaemon(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "daemon.pid")
	port := freePort(t)
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), "SERVEBENCH_LAUNCH_HELPER=parent", "HELPER_SERVER_MODE=daemonizing",
		"HELPER_PORT="+strconv.Itoa(port), "HELPER_LOG="+dir+"/server.log", "HELPER_PIDFILE="+pidfile)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	server, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("parent said %q", line)
	}
	daemon := daemonPID(t, pidfile)
	defer killLeftover(daemon)
	checkDaemonOutside(t, daemon, server)
	waitIgnoresTERM(t, daemon)
	waitHealthy(t, port)
	killedAt := time.Now()
	parent.Process.Kill()
	parent.Wait()
	// The daemon ignores SIGTERM: the watchdog's SIGKILL after the
	// helper's 2 s grace ends it.
	if !waitGone(daemon, 20*time.Second) {
		t.Fatalf("the server's setsid daemon %d outlived SIGKILL of its launcher", daemon)
	}
	if !waitGone(server, 5*time.Second) {
		t.Fatalf("server %d outlived SIGKILL of its launcher", server)
	}
	if el := time.Since(killedAt); el < 2*time.Second {
		t.Errorf("the daemon that ignores SIGTERM was gone %s after the kill, before the grace period: it was not the watchdog's SIGKILL", el)
	}
}

// waitIgnoresTERM waits until pid ignores SIGTERM (the helper's start-up
// is done), so that only SIGKILL can end it.
func waitIgnoresTERM(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
				if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGTERM-1)) != 0 {
					return
				}
			}
		}
	}
	t.Fatalf("process %d never ignored SIGTERM", pid)
}

// waitHealthy waits until the helper server on port answers.
func waitHealthy(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/health"); err == nil {
			resp.Body.Close()
			return
		}
	}
	t.Fatal("the helper server never answered")
}

// TestServerGetsDefaultSignals: the watchdog catches the terminal's
// signals but the server it starts does not inherit that: a program that
// keeps SIGTERM's default action (sleep; a shell script) ends on Stop's
// SIGTERM, within the grace period.
func TestServerGetsDefaultSignals(t *testing.T) {
	port := freePort(t)
	s := &Spec{Label: "sleep", Argv: []string{"sleep", "60"}, Port: port, StopGrace: 10 * time.Second}
	srv, err := Start(s, t.TempDir()+"/sleep.log")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, how := srv.Exited(); how != "signal: terminated" {
		t.Errorf("sleep ended by %q, want SIGTERM", how)
	}
	if el := time.Since(start); el >= s.StopGrace {
		t.Errorf("stop took %s: SIGTERM did not end sleep", el)
	}
}
