package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
)

// buildServebench builds the servebench binary into dir: the orphan
// tests kill it outright, so it must be a process of its own.
func buildServebench(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "servebench")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/servebench")
	cmd.Dir = filepath.Dir(testenv.RepoFile(t, "go.mod"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// daemonizingOllamaProfile writes a profile whose server is the testbed's
// Ollama started by a shell that first double-forks a daemon through
// setsid (its own session and process group, orphaned at once), as
// servers' helper scripts do. The daemon is "sleep MARK", MARK unique to
// the test, so it can be found in /proc.
func daemonizingOllamaProfile(t *testing.T, dir string) (profile, mark string) {
	t.Helper()
	base, _ := ollamaProfile(t, dir, "daemonizing", 1)
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.OllamaBinary(t)
	mark = fmt.Sprintf("%d.%06d", 7000+rand.IntN(1000), rand.IntN(1000000))
	// $$0 is the profile's escape for the shell's $0 (the ollama binary).
	cmd := fmt.Sprintf("command: [sh, -c, \"setsid -f sleep %s; exec \\\"$$0\\\" serve\", %q]", mark, bin)
	body := strings.Replace(string(b), fmt.Sprintf("command: [%q, serve]", bin), cmd, 1)
	if body == string(b) {
		t.Fatalf("profile has no command line to replace:\n%s", b)
	}
	profile = filepath.Join(dir, "daemonizing.yaml")
	if err := os.WriteFile(profile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return profile, mark
}

// markedSleeps lists the live processes running "sleep MARK".
func markedSleeps(mark string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(cl, []byte("sleep\x00"+mark+"\x00")) {
			continue
		}
		if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); bytes.Contains(st, []byte(") Z ")) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// waitFor polls cond every 50 ms up to limit.
func waitFor(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func launchArgs(dir, p string) []string {
	return []string{"launch", "--profile", p, "--log", filepath.Join(dir, "server.log")}
}

func launchUp(_, output string) bool { return strings.Contains(output, "is up at") }

// TestLaunchedServerTreeLeavesNoOrphan (item 10): a daemon the
// launched server double-forks through setsid is stopped with the server
// when `servebench launch` gets Ctrl-C (SIGINT), when `launch` is
// SIGKILLed, and when `run --profile` is SIGKILLed mid-sweep. Before, it
// survived all three: only the server's process group was signalled.
func TestLaunchedServerTreeLeavesNoOrphan(t *testing.T) {
	testenv.Ollama(t)
	sb := buildServebench(t, t.TempDir())
	cases := []struct {
		name string
		args func(dir, profile string) []string
		sig  syscall.Signal
		// ready says, from servebench's output and its folder, when to
		// interrupt it.
		ready func(dir, output string) bool
	}{
		{"launch Ctrl-C", launchArgs, syscall.SIGINT, launchUp},
		{"launch SIGKILL", launchArgs, syscall.SIGKILL, launchUp},
		{"run --profile SIGKILL", func(dir, p string) []string {
			return []string{"run", "--profile", p, "--concurrency", "1", "--requests", "100000", "--max-tokens", "64", "--warmup", "0",
				"--out", filepath.Join(dir, "out.json"), "--records", filepath.Join(dir, "out.jsonl"), "--quiet"}
		}, syscall.SIGKILL, func(dir, _ string) bool {
			// Mid-sweep: some requests recorded.
			b, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			return bytes.Count(b, []byte("\n")) >= 5
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			profile, mark := daemonizingOllamaProfile(t, dir)
			defer func() {
				for _, p := range markedSleeps(mark) {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}()
			var out syncBuffer
			cmd := exec.Command(sb, c.args(dir, profile)...)
			cmd.Dir = dir
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			if !waitFor(2*time.Minute, func() bool { return c.ready(dir, out.String()) }) {
				t.Fatalf("servebench never got ready:\n%s", out.String())
			}
			if !waitFor(10*time.Second, func() bool { return len(markedSleeps(mark)) == 1 }) {
				t.Fatalf("the server's daemon (sleep %s) is not running: %v", mark, markedSleeps(mark))
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			// The profile's stop_grace is 5 s; the watchdog's SIGKILL
			// follows it.
			if !waitFor(20*time.Second, func() bool { return len(markedSleeps(mark)) == 0 }) {
				t.Fatalf("after %s of servebench the server's setsid daemon is still running: %v", c.sig, markedSleeps(mark))
			}
		})
	}
}
