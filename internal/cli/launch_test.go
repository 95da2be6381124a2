package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"

	"github.com/servebench/servebench/launch"
)

var updateLaunch = flag.Bool("update-launch", false, "rewrite testdata/launch-*.golden")

func TestLaunchUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.yaml", "backend: ollama\nmodel: m\nparallel: 2\n")
	unknown := write("unknown.yaml", "backend: ollama\nmodel: m\nparalell: 2\n")
	unsupported := write("unsupported.yaml", "backend: vllm\nmodel: m\nparallel: 2\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"launch without profile", []string{"launch"}, "launch: --profile is required"},
		{"launch unknown key", []string{"launch", "--profile", unknown, "--dry-run"}, `unknown.yaml: line 3: unknown key "paralell"`},
		{"launch knob the server lacks", []string{"launch", "--profile", unsupported, "--dry-run"}, "parallel is not a vllm setting (use max_num_seqs)"},
		{"launch missing file", []string{"launch", "--profile", filepath.Join(dir, "nope.yaml"), "--dry-run"}, "nope.yaml"},
		{"run profile with url", []string{"run", "--profile", good, "--url", "http://127.0.0.1:1"}, "--url cannot be combined with --profile"},
		{"run profile unknown key", []string{"run", "--profile", good, "--profile", unknown}, `unknown key "paralell"`},
		{"run profile wrong api", []string{"run", "--profile", good, "--api", "completions"}, `--api "completions": profile`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.wantErr) {
				t.Fatalf("exit %d stderr %q, want 2 and %q", code, stderr, tc.wantErr)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
		})
	}
}

func TestLaunchDryRunGolden(t *testing.T) {
	t.Setenv("OLLAMA_NUM_PARALLEL", "")
	os.Unsetenv("OLLAMA_NUM_PARALLEL")
	for _, k := range []string{"OLLAMA_HOST", "OLLAMA_MODELS", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "q8.json")
	os.WriteFile(p, []byte(`{"label":"ollama-q8kv","backend":"ollama","model":"qwen2.5:7b-instruct","port":11500,
"parallel":4,"kv_cache_dtype":"q8_0","flash_attention":true,"context_length":8192,"env":{"OLLAMA_KEEP_ALIVE":"-1"}}`), 0o644)
	code, stdout, stderr := run(t, "launch", "--profile", p, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden := filepath.Join("testdata", "launch-dry-run.golden")
	testenv.Golden(t, golden, []byte(stdout), *updateLaunch, "go test ./internal/cli -update-launch")
}

// TestLaunchServesUntilInterrupt starts the testbed's Ollama through
// `servebench launch`, waits until it is up, interrupts it like Ctrl-C,
// and checks nothing of the server's process group is left.
func TestLaunchServesUntilInterrupt(t *testing.T) {
	dir := t.TempDir()
	p, _ := ollamaProfile(t, dir, "launched", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	logPath := filepath.Join(dir, "server.log")
	go func() { done <- Run(ctx, []string{"launch", "--profile", p, "--log", logPath}, &stdout, &stderr) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stdout.String(), "is up at") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("server never came up: %s %s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var pid int
	for _, f := range strings.Fields(stdout.String()) {
		if n, err := parsePid(f); err == nil {
			pid = n
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("launch: %v", err)
	}
	if pid == 0 {
		t.Fatalf("no pid in %q", stdout.String())
	}
	if pids, ok := launch.GroupMembers(pid); !ok || len(pids) > 0 {
		t.Fatalf("server group %d left: %v", pid, pids)
	}
	if b, _ := os.ReadFile(logPath); !bytes.Contains(b, []byte("Listening on")) {
		t.Errorf("log %s lacks the server's output", logPath)
	}
}

// parsePid reads "1234)," as printed in "(pid 1234),".
func parsePid(s string) (int, error) {
	return strconv.Atoi(strings.TrimSuffix(s, "),"))
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
