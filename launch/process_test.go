package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the "server" under test: with
// SERVEBENCH_LAUNCH_HELPER set, TestMain runs helperMain instead of the
// tests. Modes:
//
//	serve        print log lines, start a grandchild in the same process
//	             group, serve /health on HELPER_PORT after HELPER_DELAY,
//	             exit 0 on SIGTERM
//	stubborn     like serve, but it and its grandchild ignore SIGTERM
//	crash        print log lines, exit with code 3
//	grandchild   sleep forever (ignoring SIGTERM when HELPER_IGNORE=1)
//	parent       launch a server (HELPER_SERVER_MODE, default "serve") with
//	             launch.Start, print its pid, then wait to be killed
//	daemonizing  like serve, but first double-fork a stubborn grandchild
//	             through setsid (its own session and process group, then
//	             orphaned), as a daemon does; its pid goes to HELPER_PIDFILE
//	setsid-middle  the middle process of that double fork
func TestMain(m *testing.M) {
	if mode := os.Getenv("SERVEBENCH_LAUNCH_HELPER"); mode != "" {
		helperMain(mode)
		return
	}
	os.Exit(m.Run())
}

func helperMain(mode string) {
	switch mode {
	case "grandchild":
		if os.Getenv("HELPER_IGNORE") == "1" {
			signal.Ignore(syscall.SIGTERM)
		}
		select {}
	case "leaky":
		// Prints its arguments and settings as vLLM does at start-up.
		fmt.Println("args:", strings.Join(os.Args[1:], " "))
		fmt.Println("INFO non-default args: {'model': 'm', 'api_key': ['sk-list-5e6f7a'], 'hf_token': 'hf_tok_1b2c3d'}")
		fmt.Println("INFO args: Namespace(api_key='sk-ns-9a8b7c', port=8000)")
		fmt.Println("using credential " + os.Getenv("MY_SERVICE_TOKEN"))
		fmt.Println("print_info: EOS token        = 2 '</s>'")
		os.Exit(3)
	case "crash":
		fmt.Println("loading model")
		fmt.Fprintln(os.Stderr, "error: out of memory allocating KV cache")
		os.Exit(3)
	case "serve", "stubborn":
		helperServe(mode == "stubborn")
	case "daemonizing":
		helperDaemonize()
		helperServe(false)
	case "setsid-middle":
		d := exec.Command(os.Args[0])
		d.Env = append(os.Environ(), "SERVEBENCH_LAUNCH_HELPER=grandchild", "HELPER_IGNORE=1")
		if err := d.Start(); err != nil {
			os.Exit(1)
		}
		os.WriteFile(os.Getenv("HELPER_PIDFILE"), []byte(strconv.Itoa(d.Process.Pid)), 0o644)
		os.Exit(0) // orphan the grandchild
	case "parent":
		mode := os.Getenv("HELPER_SERVER_MODE")
		if mode == "" {
			mode = "serve"
		}
		p := helperSpec(mode, mustAtoi(os.Getenv("HELPER_PORT")))
		p.Env = append(p.Env, "HELPER_PIDFILE="+os.Getenv("HELPER_PIDFILE"))
		srv, err := Start(p, os.Getenv("HELPER_LOG"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(srv.PID())
		select {}
	}
	os.Exit(2)
}

// helperDaemonize double-forks through setsid: a middle process in a new
// session starts the grandchild and exits, so the grandchild is orphaned
// outside the server's process group and session.
func helperDaemonize() {
	m := exec.Command(os.Args[0])
	m.Env = append(os.Environ(), "SERVEBENCH_LAUNCH_HELPER=setsid-middle")
	m.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := m.Run(); err != nil {
		fmt.Println("setsid-middle:", err)
		os.Exit(1)
	}
}

func helperServe(stubborn bool) {
	term := make(chan os.Signal, 1)
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	gc := exec.Command(os.Args[0])
	gc.Env = append(os.Environ(), "SERVEBENCH_LAUNCH_HELPER=grandchild", "HELPER_IGNORE="+map[bool]string{true: "1"}[stubborn])
	if err := gc.Start(); err != nil {
		fmt.Println("grandchild:", err)
		os.Exit(1)
	}
	fmt.Println("llama_kv_cache_unified: KV self size  =   16.00 MiB, K (f16):    8.00 MiB, V (f16):    8.00 MiB")
	fmt.Fprintf(os.Stderr, "grandchild %d\n", gc.Process.Pid)
	delay, _ := time.ParseDuration(os.Getenv("HELPER_DELAY"))
	time.Sleep(delay)
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("HELPER_PORT"))
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	fmt.Println("server is listening")
	<-term
	fmt.Println("terminating")
	os.Exit(0)
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// helperSpec is a Spec that runs this test binary in mode on port.
func helperSpec(mode string, port int) *Spec {
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	return &Spec{
		Label: "helper-" + mode, Argv: []string{os.Args[0]},
		Env:  []string{"SERVEBENCH_LAUNCH_HELPER=" + mode, "HELPER_PORT=" + strconv.Itoa(port), "HELPER_DELAY=300ms"},
		Port: port, BaseURL: base, HealthURL: base + "/health",
		StartDeadline: 20 * time.Second, StopGrace: 2 * time.Second,
	}
}

func assertNoMembers(t *testing.T, pgid int) {
	t.Helper()
	pids, ok := GroupMembers(pgid)
	if !ok {
		t.Fatal("no /proc: cannot check for orphans")
	}
	if len(pids) > 0 {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("processes left in group %d: %v", pgid, pids)
	}
}

func TestStartHealthyStop(t *testing.T) {
	s := helperSpec("serve", freePort(t))
	log := t.TempDir() + "/helper.log"
	srv, err := Start(s, log)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitHealthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pids, _ := GroupMembers(srv.PID()); len(pids) != 2 {
		t.Fatalf("want server and grandchild in group %d, got %v", srv.PID(), pids)
	}
	if pgid, _ := syscall.Getpgid(srv.PID()); pgid != srv.PID() || pgid == syscall.Getpgrp() {
		t.Fatalf("server pgid %d, servebench pgrp %d: not its own group", pgid, syscall.Getpgrp())
	}
	start := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > s.StopGrace {
		t.Errorf("SIGTERM stop took %s, beyond the grace period", el)
	}
	assertNoMembers(t, srv.PID())
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "KV self size") || !strings.Contains(string(b), "terminating") {
		t.Errorf("log lacks the server's output:\n%s", b)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	s := helperSpec("stubborn", freePort(t))
	s.StopGrace = 500 * time.Millisecond
	srv, err := Start(s, t.TempDir()+"/helper.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitHealthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < s.StopGrace {
		t.Errorf("stop took %s: it cannot have waited the grace period", el)
	}
	if _, how := srv.Exited(); how != "signal: killed" {
		t.Errorf("exit = %q, want signal: killed", how)
	}
	assertNoMembers(t, srv.PID())
}

func TestExitBeforeHealthy(t *testing.T) {
	s := helperSpec("crash", freePort(t))
	srv, err := Start(s, t.TempDir()+"/helper.log")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	err = srv.WaitHealthy(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want *ExitError", err)
	}
	if ee.Status != "code 3" || !strings.Contains(err.Error(), "out of memory allocating KV cache") {
		t.Errorf("error lacks the exit code or the log tail: %v", err)
	}
}

// TestExitErrorRedactsSecrets: the log lines an error quotes have the
// secrets the server printed redacted (flag values, profile env values,
// api_key fields); the log file keeps what the server wrote.
func TestExitErrorRedactsSecrets(t *testing.T) {
	s := helperSpec("leaky", freePort(t))
	s.Argv = append(s.Argv, "--api-key", "sk-argv-3c4d5e", "--hf-token=hf_inline_6f7a8b")
	s.Env = append(s.Env, "MY_SERVICE_TOKEN=tok-env-2e3f4a", "TOKENIZERS_PARALLELISM=false")
	logPath := t.TempDir() + "/helper.log"
	srv, err := Start(s, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	err = srv.WaitHealthy(context.Background())
	if err == nil {
		t.Fatal("leaky helper became healthy")
	}
	msg := err.Error()
	secrets := []string{"sk-argv-3c4d5e", "hf_inline_6f7a8b", "tok-env-2e3f4a", "sk-list-5e6f7a", "hf_tok_1b2c3d", "sk-ns-9a8b7c"}
	for _, k := range secrets {
		if strings.Contains(msg, k) {
			t.Errorf("error quotes secret %q:\n%s", k, msg)
		}
	}
	for _, want := range []string{"--api-key <redacted>", "--hf-token=<redacted>", "credential <redacted>",
		"'api_key': ['<redacted>']", "api_key='<redacted>', port=8000", "EOS token        = 2 '</s>'"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	b, _ := os.ReadFile(logPath)
	for _, k := range secrets {
		if !strings.Contains(string(b), k) {
			t.Errorf("log file lost %q: it must stay as the server wrote it", k)
		}
	}
}

func TestStartDeadline(t *testing.T) {
	s := helperSpec("serve", freePort(t))
	s.Env = append(s.Env, "HELPER_DELAY=1h")
	s.StartDeadline = 700 * time.Millisecond
	srv, err := Start(s, t.TempDir()+"/helper.log")
	if err != nil {
		t.Fatal(err)
	}
	err = srv.WaitHealthy(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not healthy") || !strings.Contains(err.Error(), "KV self size") {
		t.Errorf("err = %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	assertNoMembers(t, srv.PID())
}

func TestPortBusy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := helperSpec("serve", l.Addr().(*net.TCPAddr).Port)
	_, err = Start(s, t.TempDir()+"/helper.log")
	if !errors.Is(err, ErrPortBusy) {
		t.Fatalf("err = %v, want ErrPortBusy", err)
	}
}

func TestMissingBinary(t *testing.T) {
	s := helperSpec("serve", freePort(t))
	s.Argv = []string{"servebench-no-such-server-binary"}
	if _, err := Start(s, t.TempDir()+"/x.log"); err == nil || !strings.Contains(err.Error(), "servebench-no-such-server-binary") {
		t.Fatalf("err = %v", err)
	}
}

// TestParentKilledLeavesNoServer kills (SIGKILL, no cleanup possible) a
// process that launched a server and checks the kernel's death signal
// took the server and its grandchild down.
func TestParentKilledLeavesNoServer(t *testing.T) {
	port := freePort(t)
	dir := t.TempDir()
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), "SERVEBENCH_LAUNCH_HELPER=parent", "HELPER_PORT="+strconv.Itoa(port), "HELPER_LOG="+dir+"/server.log")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		parent.Process.Kill()
		t.Fatalf("parent said %q", buf[:n])
	}
	// Wait until the server is up with its grandchild.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids, _ := GroupMembers(pid); len(pids) == 2 {
			break
		}
		if time.Now().After(deadline) {
			parent.Process.Kill()
			t.Fatal("server never started its grandchild")
		}
		time.Sleep(20 * time.Millisecond)
	}
	parent.Process.Kill()
	parent.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		pids, _ := GroupMembers(pid)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			assertNoMembers(t, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
