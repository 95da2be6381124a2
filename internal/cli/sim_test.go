package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSimUsageErrors: every bad sim command line is one line naming the
// flag or argument at fault, and a usage error (exit 2).
func TestSimUsageErrors(t *testing.T) {
	base := []string{"sim", "serve", "--as", "vllm", "--gpu", "H100 80GB", "--model", "qwen2.5-7b", "--addr", "127.0.0.1:0"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"sim"}, "sim: no subcommand given"},
		{"unknown subcommand", []string{"sim", "fitt"}, `sim: unknown subcommand "fitt"`},
		{"no --as", []string{"sim", "serve", "--gpu", "H100 80GB", "--model", "qwen2.5-7b"}, "--as is required"},
		{"unknown --as", []string{"sim", "serve", "--as", "vllmm", "--gpu", "H100 80GB", "--model", "qwen2.5-7b"}, `--as "vllmm"`},
		{"no --gpu", []string{"sim", "serve", "--as", "vllm", "--model", "qwen2.5-7b"}, "--gpu is required"},
		{"no --model", []string{"sim", "serve", "--as", "vllm", "--gpu", "H100 80GB"}, "--model is required"},
		{"unknown GPU", []string{"sim", "serve", "--as", "vllm", "--gpu", "RTX 9999", "--model", "qwen2.5-7b"}, `--gpu: unknown GPU "RTX 9999"`},
		{"unknown model", []string{"sim", "serve", "--as", "vllm", "--gpu", "H100 80GB", "--model", "no-such-9b"}, `--model: unknown model "no-such-9b"`},
		{"does not fit", []string{"sim", "serve", "--as", "vllm", "--gpu", "RTX 4090", "--model", "qwen2.5-72b"}, "--model/--gpu: does not fit"},
		{"unknown scheduler", with("--scheduler", "tgi"), `--scheduler "tgi"`},
		{"bad fault fraction", with("--fault-429", "2"), "--fault-429 2"},
		{"faults above 1", with("--fault-cut", "0.7", "--fault-stall", "0.7"), "add up to 1.4"},
		{"negative setting", with("--max-num-seqs", "-1"), "--max-num-seqs -1"},
		{"stray argument", with("extra"), `unexpected argument "extra"`},
		{"bad flag", with("--nope"), "unknown flag --nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Run(t.Context(), tc.args, &stdout, &stderr)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line with %q", err, tc.want)
			}
		})
	}
}

// TestSimHelp: sim and sim serve explain themselves and exit 0.
func TestSimHelp(t *testing.T) {
	for _, args := range [][]string{{"sim", "--help"}, {"sim", "serve", "--help"}} {
		var stdout, stderr bytes.Buffer
		if err := Run(t.Context(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		out := stdout.String()
		for _, want := range []string{"serve"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, out)
			}
		}
		if args[1] == "serve" {
			for _, flag := range []string{"-as", "-gpu", "-model", "-seed", "-fault-429", "-fault-cut", "-fault-stall", "-fault-slow-first-token", "-max-num-seqs", "-parallel"} {
				if !strings.Contains(out, flag) {
					t.Errorf("sim serve --help lacks %s", flag)
				}
			}
		}
	}
}

// lineWriter collects output and hands over its first line once written.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan string
	once  sync.Once
}

// String is what was written so far.
func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if i := strings.IndexByte(w.buf.String(), '\n'); i >= 0 {
		w.once.Do(func() { w.first <- w.buf.String()[:i] })
	}
	return len(p), nil
}

// startSimServe runs "servebench sim serve args" in process and returns
// its base URL, parsed from its first line, and a function that stops it
// and returns its standard error and error.
func startSimServe(t *testing.T, args ...string) (string, func() (string, error)) {
	t.Helper()
	return startSimServeTo(t, &lineWriter{first: make(chan string, 1)}, args...)
}

// startSimServeTo is startSimServe with its standard output going to out.
func startSimServeTo(t *testing.T, out *lineWriter, args ...string) (string, func() (string, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, append([]string{"sim", "serve", "--addr", "127.0.0.1:0"}, args...), out, &stderr)
	}()
	var line string
	select {
	case line = <-out.first:
	case err := <-done:
		cancel()
		t.Fatalf("sim serve ended before serving: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("sim serve printed nothing in 30s")
	}
	url := regexp.MustCompile(`http://\S+`).FindString(line)
	if url == "" {
		cancel()
		t.Fatalf("no URL in %q", line)
	}
	stop := func() (string, error) {
		cancel()
		select {
		case err := <-done:
			return stderr.String(), err
		case <-time.After(30 * time.Second):
			t.Fatal("sim serve did not stop in 30s")
			return "", nil
		}
	}
	return url, stop
}

// TestRunAgainstSimServe points `servebench run` at `servebench sim
// serve` for every backend, as the README shows: a sweep whose document
// has every level and all its tokens, the simulated server's identity
// (marked simulated), prompt lengths exact through /tokenize where the
// server has one and calibrated within 3% elsewhere, and the KV-cache
// peaks and preemptions scraped where the server exports them.
func TestRunAgainstSimServe(t *testing.T) {
	const model = "Qwen/Qwen2.5-7B-Instruct-AWQ"
	cases := []struct {
		backend   string
		tokenizer bool // exact prompt lengths
		kv        bool // /metrics has KV-cache usage
		metrics   bool // /metrics has the running requests
	}{
		{"vllm", true, true, true}, {"sglang", false, true, true}, {"llamacpp", true, true, true},
		{"tgi", false, false, true}, {"openai", false, false, false}, {"ollama", false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.backend, func(t *testing.T) {
			url, stop := startSimServe(t, "--as", tc.backend, "--gpu", "H100 80GB", "--model", model, "--seed", "3")
			out := filepath.Join(t.TempDir(), "sim.json")
			var stdout, stderr bytes.Buffer
			err := Run(t.Context(), []string{"run", "--backend", tc.backend, "--url", url, "--model", model, "--concurrency", "1,4",
				"--requests", "8", "--warmup", "1", "--prompt-tokens", "64", "--max-tokens", "64", "--gpu", "none", "--scrape-interval", "10ms", "--quiet", "--out", out}, &stdout, &stderr)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			if log, err := stop(); err != nil || !strings.Contains(log, "served ") {
				t.Errorf("sim serve ended with %v; stderr %q", err, log)
			}
			doc := readDoc(t, out)
			r := doc.Runs[0]
			if tc.backend != "openai" && (r.Runtime == nil || !strings.Contains(*r.Runtime, "servebench.sim")) {
				t.Errorf("runtime %v: want the simulated version", r.Runtime)
			}
			if len(r.Levels) != 2 {
				t.Fatalf("%d levels, want 2", len(r.Levels))
			}
			for _, l := range r.Levels {
				if l.Errors != 0 || l.OutputTokens == nil || *l.OutputTokens != 8*64 {
					t.Errorf("c=%d: errors %d, output tokens %s; want 0 and %d", l.Concurrency, l.Errors, jsonOf(l.OutputTokens), 8*64)
				}
				m := -1.0
				if l.MeanPromptTokens != nil {
					m = *l.MeanPromptTokens
				}
				if (tc.tokenizer && m != 64) || (!tc.tokenizer && (m < 62 || m > 66)) {
					t.Errorf("c=%d: mean prompt tokens %v for a target of 64 (exact: %v)", l.Concurrency, m, tc.tokenizer)
				}
				// the levels are short: a scrape may fall between requests
				if tc.kv && l.PeakKVCacheUsage == nil {
					t.Errorf("c=%d: no peak KV: want it scraped", l.Concurrency)
				}
				if tc.metrics && (l.PeakRequestsRunning == nil || *l.PeakRequestsRunning < 1) {
					t.Errorf("c=%d: peak running %v: want at least one request seen running", l.Concurrency, deref(l.PeakRequestsRunning))
				}
			}
			if tc.backend == "vllm" {
				if r.KVCache.Blocks == nil || *r.KVCache.Blocks <= 0 {
					t.Errorf("kv_cache %+v: want the blocks from cache_config_info", r.KVCache)
				}
				if p := r.Levels[1].Preemptions; p == nil || *p != 0 {
					t.Errorf("preemptions %v, want 0 scraped", p)
				}
			}
		})
	}
}

// TestSimServeAnswersAsEach: every --as answers its own identity
// endpoint from the command line.
func TestSimServeAnswersAsEach(t *testing.T) {
	cases := []struct{ as, path, has string }{
		{"vllm", "/version", "servebench.sim"},
		{"sglang", "/get_server_info", "servebench.sim"},
		{"llamacpp", "/props", "servebench.sim"},
		{"tgi", "/info", "servebench.sim"},
		{"ollama", "/api/version", "servebench.sim"},
		{"openai", "/v1/models", "servebench-sim"},
	}
	for _, tc := range cases {
		t.Run(tc.as, func(t *testing.T) {
			url, stop := startSimServe(t, "--as", tc.as, "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--quant", "q4_k_m")
			defer stop()
			resp, err := httpGet(t, url+tc.path)
			if err != nil || !strings.Contains(resp, tc.has) {
				t.Errorf("GET %s: %v %q; want %q", tc.path, err, resp, tc.has)
			}
		})
	}
}

func httpGet(t *testing.T, url string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestRunFindsSimServe: given only the URL, run recognises the simulated
// server's family and takes its only model, as it does a real one's.
func TestRunFindsSimServe(t *testing.T) {
	url, stop := startSimServe(t, "--as", "llamacpp", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--quant", "q4_k_m")
	defer stop()
	out := filepath.Join(t.TempDir(), "found.json")
	var stdout, stderr bytes.Buffer
	err := Run(t.Context(), []string{"run", "--url", url, "--concurrency", "2", "--requests", "4", "--warmup", "0",
		"--max-tokens", "8", "--gpu", "none", "--quiet", "--out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	doc := readDoc(t, out)
	if r := doc.Runs[0]; r.Backend != "llamacpp" || r.Model != "qwen2.5-7b" || r.Levels[0].Errors != 0 {
		t.Errorf("run found backend %q, model %q, errors %d; want llamacpp, qwen2.5-7b, 0", r.Backend, r.Model, r.Levels[0].Errors)
	}
}

// jsonOf shows an optional value as the document would.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
