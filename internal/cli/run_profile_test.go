package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/launch"
)

// ollamaProfile writes a launch profile for the testbed's ollama binary and
// tiny model (scripts/ollama-testbed) with OLLAMA_NUM_PARALLEL=parallel on
// a free port, and returns its path and the model name.
func ollamaProfile(t testing.TB, dir, label string, parallel int) (string, string) {
	t.Helper()
	_, model := testenv.Ollama(t)
	bin := testenv.OllamaBinary(t)
	models := os.Getenv("SERVEBENCH_OLLAMA_MODELS_DIR")
	if models == "" {
		testenv.Missing(t, "SERVEBENCH_OLLAMA_MODELS_DIR unset (start scripts/ollama-testbed)")
	}
	path := filepath.Join(dir, label+".yaml")
	body := fmt.Sprintf("label: %s\nbackend: ollama\ncommand: [%q, serve]\nmodel: %s\nmodels_dir: %q\nport: 0\nparallel: %d\nstart_deadline: 60s\nstop_grace: 5s\n",
		label, bin, model, models, parallel)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, model
}

// TestRunProfilesOllama is the acceptance test: one command, two profiles
// (OLLAMA_NUM_PARALLEL 1 and 4) → one report with two runs, two logs, the
// parsed KV size equal to the planner's, and the slots at work: at
// concurrency 4, with one slot a request waits at the server for other
// requests' generations, with four it does not. That is measured on the
// server's own clock (serverWait), so it holds on a busy machine; the
// client-side consequences (TTFT, throughput) depend on how busy the
// machine is, and BenchmarkOllamaSlots measures them.
func TestRunProfilesOllama(t *testing.T) {
	dir := t.TempDir()
	p1, _ := ollamaProfile(t, dir, "ollama-np1", 1)
	p4, _ := ollamaProfile(t, dir, "ollama-np4", 4)
	out, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"run", "--profile", p1, "--profile", p4,
		"--concurrency", "4", "--requests", "16", "--warmup", "2", "--max-tokens", "128", "--out", out, "--records", recs, "--quiet"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	doc := readDoc(t, out)
	if b, err := os.ReadFile(out); err == nil && os.Getenv("SERVEBENCH_KEEP_REPORT") != "" {
		os.WriteFile(os.Getenv("SERVEBENCH_KEEP_REPORT"), b, 0o644)
	}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	f := readRecords(t, recs)
	wantMiB := map[string]float64{"ollama-np1-text": 0.5, "ollama-np4-text": 2}
	var tput, ttft, wait, eval []float64
	for _, r := range doc.Runs {
		if _, err := os.Stat(filepath.Join(dir, r.Label+".log")); err != nil {
			t.Errorf("run %s: no server log: %v", r.Label, err)
		}
		if r.Capacity == nil || r.Capacity.KVMiB == nil || *r.Capacity.KVMiB != wantMiB[r.Label] {
			t.Errorf("run %s: capacity %+v, want KV %v MiB", r.Label, r.Capacity, wantMiB[r.Label])
		}
		if r.Profile == nil || r.Profile.Parallel == nil {
			t.Errorf("run %s: profile not recorded", r.Label)
		}
		if r.Runtime == nil || *r.Runtime != "ollama 0.6.5" {
			t.Errorf("run %s: runtime %v", r.Label, r.Runtime)
		}
		if len(r.Levels) != 1 || r.Levels[0].ThroughputTokS == nil || r.Levels[0].TTFTP50Ms == nil || r.Levels[0].Errors != 0 {
			t.Fatalf("run %s: levels %+v", r.Label, r.Levels)
		}
		tput = append(tput, *r.Levels[0].ThroughputTokS)
		ttft = append(ttft, *r.Levels[0].TTFTP50Ms)
		w, e := serverWait(f, r.Label, 4)
		wait, eval = append(wait, w*1e3), append(eval, e*1e3)
	}
	t.Logf("concurrency 4: np1 %.1f tok/s TTFT p50 %.1f ms, server-side wait %.1f ms, decode %.1f ms; np4 %.1f tok/s TTFT p50 %.1f ms, wait %.1f ms, decode %.1f ms",
		tput[0], ttft[0], wait[0], eval[0], tput[1], ttft[1], wait[1], eval[1])
	// With one slot, a request waits for the generations ahead of it (about
	// three at concurrency 4); with four it waits for none.
	if wait[0] < eval[0] {
		t.Errorf("1 slot: requests waited %.1f ms (median) at the server, less than one generation (%.1f ms)", wait[0], eval[0])
	}
	if wait[1] >= eval[1] {
		t.Errorf("4 slots: requests waited %.1f ms (median) at the server, no less than their decode (%.1f ms)", wait[1], eval[1])
	}
	if len(doc.Calibration) != 2 {
		t.Fatalf("%d calibration records, want 2", len(doc.Calibration))
	}
	for _, c := range doc.Calibration {
		if c.ErrorPct != 0 || c.PredictedKVMiB == nil || c.ActualKVMiB == nil || *c.PredictedKVMiB != *c.ActualKVMiB {
			t.Errorf("calibration %+v: the planner's KV size does not match the log's", c)
		}
	}
}

// startedServers records the servers a run starts, by run label (the name
// of their log file), through Deps.StartServer.
type startedServers struct {
	mu      sync.Mutex
	byLabel map[string]*launch.Server
}

// deps are the real parts, with launch.Start recording what it started.
func (s *startedServers) deps() Deps {
	return Deps{StartServer: func(spec *launch.Spec, logPath string) (*launch.Server, error) {
		srv, err := launch.Start(spec, logPath)
		if err == nil {
			s.mu.Lock()
			if s.byLabel == nil {
				s.byLabel = map[string]*launch.Server{}
			}
			s.byLabel[strings.TrimSuffix(filepath.Base(logPath), ".log")] = srv
			s.mu.Unlock()
		}
		return srv, err
	}}
}

// waitLaunched polls until the run has started the server of run label and
// the server answers its health check, and returns it.
func (s *startedServers) waitLaunched(t *testing.T, label string) *launch.Server {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		srv := s.byLabel[label]
		s.mu.Unlock()
		if srv != nil {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			if err := srv.WaitHealthy(ctx); err != nil {
				t.Errorf("server of %s: %v", label, err)
				return nil
			}
			return srv
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("server of " + label + " never launched")
	return nil
}

// TestRunProfileServerKilled kills the first profile's server (SIGKILL to
// its main process) once a few requests of its first level were recorded:
// the level is reported with server_exited errors and a warning, the
// rest of the server's process group is cleaned up, and the second
// profile still runs.
func TestRunProfileServerKilled(t *testing.T) {
	dir := t.TempDir()
	pa, _ := ollamaProfile(t, dir, "victim", 1)
	pb, _ := ollamaProfile(t, dir, "survivor", 4)
	out := filepath.Join(dir, "report.json")
	records := filepath.Join(dir, "records.jsonl")
	killed := make(chan int, 1)
	var started startedServers
	go func() {
		srv := started.waitLaunched(t, "victim-text")
		if srv == nil {
			killed <- 0
			return
		}
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			b, _ := os.ReadFile(records)
			if bytes.Count(b, []byte(`"run":"victim-text","seq"`)) >= 5 {
				break
			}
		}
		syscall.Kill(srv.PID(), syscall.SIGKILL)
		killed <- srv.PID()
	}()
	var stdout, stderr bytes.Buffer
	err := started.deps().Run(context.Background(), []string{"run", "--profile", pa, "--profile", pb,
		"--concurrency", "2,4", "--requests", "40", "--warmup", "1", "--max-tokens", "32",
		"--records", records, "--out", out, "--quiet"}, &stdout, &stderr)
	pid := <-killed
	if pid == 0 {
		t.Fatalf("the victim server was never launched: %v\n%s", err, stderr.String())
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	doc := readDoc(t, out)
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(doc.Runs))
	}
	victim := doc.Runs[0]
	l := victim.Levels[0]
	if l.ErrorsByReason["server_exited"] == 0 || l.Errors == l.Requests ||
		!strings.Contains(strings.Join(l.Warnings, "\n"), "server exited (signal: killed) during this level") {
		t.Errorf("level of the killed server: %d/%d errors %v warnings %q", l.Errors, l.Requests, l.ErrorsByReason, l.Warnings)
	}
	if l2 := victim.Levels[1]; l2.ErrorsByReason["server_exited"] != l2.Requests {
		t.Errorf("level after the kill: %d requests, errors %v", l2.Requests, l2.ErrorsByReason)
	}
	for _, l := range doc.Runs[1].Levels {
		if l.Errors != 0 || l.ThroughputTokS == nil {
			t.Errorf("second profile did not run cleanly: %+v", l)
		}
	}
	if pids, _ := launch.GroupMembers(pid); len(pids) > 0 {
		t.Errorf("processes of the killed server's group left: %v", pids)
	}
}

// TestRunProfileInterrupted cancels the run (Ctrl-C) mid-level and checks
// that no process of the server's group is left.
func TestRunProfileInterrupted(t *testing.T) {
	dir := t.TempDir()
	pa, _ := ollamaProfile(t, dir, "interrupted", 4)
	out := filepath.Join(dir, "report.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pgid := make(chan int, 1)
	var started startedServers
	go func() {
		srv := started.waitLaunched(t, "interrupted-text")
		if srv == nil {
			pgid <- 0
			cancel()
			return
		}
		time.Sleep(1500 * time.Millisecond)
		pgid <- srv.PID()
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	started.deps().Run(ctx, []string{"run", "--profile", pa, "--concurrency", "4", "--requests", "400",
		"--max-tokens", "64", "--out", out, "--quiet"}, &stdout, &stderr)
	g := <-pgid
	if g == 0 {
		t.Fatal("no server launched")
	}
	if pids, ok := launch.GroupMembers(g); !ok || len(pids) > 0 {
		t.Fatalf("processes left in the server's group %d after Ctrl-C: %v", g, pids)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no report after Ctrl-C: %v", err)
	}
}
