package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// faultServer is a loopback OpenAI-compatible server for what a real
// server does not do on demand. Its streams follow the chunk format of the
// published vLLM stream (backend/testdata/vllm-0.9.0-chat-stream.sse) plus the usage
// chunk that stream_options.include_usage adds (OpenAI API reference,
// "Create chat completion", stream_options). By arrival order n it answers:
// n%5 == 0 a full stream of 4 tokens; 1 HTTP 500 with a body; 2 HTTP 429;
// 3 a stream cut after two chunks, without its [DONE] end marker; 4 a
// stream that stalls past the client's --timeout.
func faultServer(t *testing.T, stall time.Duration) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // telemetry scrapes and probes are not counted
			return
		}
		k := n.Add(1) - 1
		chunk := func(content string) {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", content)
			w.(http.Flusher).Flush()
		}
		switch k % 5 {
		case 1:
			http.Error(w, `{"error":"internal failure for the test"}`, http.StatusInternalServerError)
			return
		case 2:
			http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk("a")
		chunk("b")
		switch k % 5 {
		case 3:
			return // cut: no [DONE]
		case 4:
			select {
			case <-time.After(stall):
			case <-r.Context().Done():
			}
			return
		}
		chunk("c")
		chunk("d")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":4,\"total_tokens\":16}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestRunCountsFailuresByReason: one worker, so no request is a warm-up
// and the server's ten arrivals are the level's ten requests, two of
// each fault.
func TestRunCountsFailuresByReason(t *testing.T) {
	srv, _ := faultServer(t, 5*time.Second)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "openai", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "10", "--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "4",
		"--timeout", "300ms", "--out", report, "--records", recs, "--quiet")
	if err != nil {
		t.Fatalf("run with some successes must exit 0: %v\n%s", err, stderr)
	}
	doc := readDoc(t, report)
	l := doc.Runs[0].Levels[0]
	want := map[string]int{"http_5xx": 2, "http_429": 2, "truncated_stream": 2, "timeout": 2}
	if l.Requests != 10 || l.Errors != 8 || fmt.Sprint(l.ErrorsByReason) != fmt.Sprint(want) {
		t.Fatalf("requests %d errors %d by reason %v; want 10, 8, %v", l.Requests, l.Errors, l.ErrorsByReason, want)
	}
	if !strings.Contains(strings.Join(l.Warnings, "\n"), "2 streams ended without their end marker") {
		t.Errorf("no truncated-stream warning: %q", l.Warnings)
	}
	f := readRecords(t, recs)
	ok := 0
	for _, r := range f.Results {
		if r.OK() {
			ok++
			if *r.OutputTokens != 4 || *r.PromptTokens != 12 {
				t.Errorf("successful request %d: %v output, %v prompt tokens", r.Seq, *r.OutputTokens, *r.PromptTokens)
			}
		} else if r.Error == "" {
			t.Errorf("failed request %d has no error text", r.Seq)
		}
	}
	if ok != 2 || *l.OutputTokens != 8 {
		t.Fatalf("%d successful requests, %d output tokens; want 2 and 8", ok, *l.OutputTokens)
	}
	checkRebuild(t, report, f)
}

func TestRunExitsOneWhenNothingSucceeds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	report := filepath.Join(t.TempDir(), "report.json")
	_, _, err := cliRun(context.Background(), "run", "--backend", "vllm", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "3", "--warmup", "0", "--prompt-tokens", "0", "--out", report, "--quiet")
	if err == nil || ExitCode(err, new(strings.Builder)) != 1 || !strings.Contains(err.Error(), "no request succeeded") {
		t.Fatalf("err %v, want exit 1 'no request succeeded'", err)
	}
	if l := readDoc(t, report).Runs[0].Levels[0]; l.Errors != 3 || l.ErrorsByReason["http_5xx"] != 3 {
		t.Fatalf("level %+v", l)
	}
}

func TestRunFailsClearlyWhenProbeFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, _, err := cliRun(context.Background(), "run", "--backend", "sglang", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "3", "--out", filepath.Join(t.TempDir(), "r.json"), "--quiet")
	if err == nil || !strings.Contains(err.Error(), "probe request failed") {
		t.Fatalf("err %v", err)
	}
}

// TestRunKeepsAPIKeyOutOfOutputs sends the key from OPENAI_API_KEY as a
// Bearer token and finds it in no output file, even in error texts that
// echo the request. The server (a proxy that checks keys on generation
// only) lets the identity probes through, so the requests are sent.
func TestRunKeepsAPIKeyOutOfOutputs(t *testing.T) {
	const key = "sk-test-7f3a9c1e5b"
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		auth.Store(r.Header.Get("Authorization"))
		http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", key)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, _ := cliRun(context.Background(), "run", "--backend", "vllm", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "2", "--warmup", "0", "--prompt-tokens", "0", "--out", report, "--records", recs)
	if got, _ := auth.Load().(string); got != "Bearer "+key {
		t.Fatalf("server got Authorization %q", got)
	}
	for _, p := range []string{report, recs} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s contains the API key", p)
		}
	}
	if strings.Contains(stderr, key) {
		t.Error("stderr contains the API key")
	}
	if l := readDoc(t, report).Runs[0].Levels[0]; l.ErrorsByReason["http_4xx"] != 2 {
		t.Fatalf("errors %v", l.ErrorsByReason)
	}
}

// TestRunSaysHowToGiveTheKey: a server that refuses the identity probes
// with 401 stops the run before any request, with one line that says how
// the key is given and never the key, and leaves no report behind.
func TestRunSaysHowToGiveTheKey(t *testing.T) {
	const key = "sk-test-41c0d9"
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		http.Error(w, `{"error":"invalid key `+r.Header.Get("Authorization")+`"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	cases := []struct {
		name, env string
		args      []string
		want      string
	}{
		{"no key, backend found", "", nil, "wants an API key (GET /v1/models answered 401 Unauthorized); give it with --api-key or in OPENAI_API_KEY"},
		{"no key, backend given", "", []string{"--backend", "vllm", "--model", "m"}, "wants an API key (GET /v1/models answered 401 Unauthorized); give it with --api-key or in OPENAI_API_KEY"},
		{"key in the environment refused", key, nil, "refused the API key given (GET /v1/models answered 401 Unauthorized); check --api-key or OPENAI_API_KEY"},
		{"key flag refused", "", []string{"--api-key", key}, "refused the API key given"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", c.env)
			report := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"run", "--url", srv.URL, "--out", report}, c.args...)
			_, stderr, err := cliRun(context.Background(), args...)
			if err == nil || ExitCode(err, new(strings.Builder)) != 2 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want exit 2 with %q", err, c.want)
			}
			if strings.Contains(err.Error()+stderr, key) {
				t.Fatalf("the key is echoed: %v %s", err, stderr)
			}
			if _, err := os.Stat(report); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a report was written: %v", err)
			}
		})
	}
	if posts.Load() != 0 {
		t.Fatalf("%d generation requests sent to a server that refused the key", posts.Load())
	}
}

// TestRunCancelledBeforeAnyRun: Ctrl-C before the first run wrote its
// header still leaves a report, marked incomplete, and exits 1 (nothing
// succeeded).
func TestRunCancelledBeforeAnyRun(t *testing.T) {
	srv, n := faultServer(t, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	report := filepath.Join(t.TempDir(), "report.json")
	_, _, err := cliRun(ctx, "run", "--backend", "openai", "--url", srv.URL, "--model", "m",
		"--prompt-tokens", "0", "--quiet", "--out", report)
	if err == nil || ExitCode(err, new(strings.Builder)) != 1 {
		t.Fatalf("err %v, want exit 1", err)
	}
	if doc := readDoc(t, report); doc.Complete == nil || *doc.Complete || len(doc.Runs) != 0 {
		t.Fatalf("complete %v runs %d, want an incomplete report without runs", doc.Complete, len(doc.Runs))
	}
	if n.Load() != 0 {
		t.Fatalf("%d requests sent after Ctrl-C", n.Load())
	}
}

// TestRunTeardownErrorIsAWarning: a launched server whose teardown fails
// (process group members left behind) leaves the run successful, with the
// error as a warning of the run in the report and on stderr.
func TestRunTeardownErrorIsAWarning(t *testing.T) {
	srv, _ := faultServer(t, time.Second)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	cfg, err := parseRunFlags(context.Background(), []string{"--backend", "openai", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "5", "--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "4",
		"--timeout", "300ms", "--out", report, "--records", recs, "--quiet"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The server at --url stands for a launched one whose stop fails.
	targets := []runTarget{{cfg: cfg, start: func(context.Context) (*launchedServer, error) {
		return &launchedServer{proc: stopFails{errors.New("stop x: process group 42 still has members after 5s")}}, nil
	}}}
	var errb bytes.Buffer
	err = sweepTargets(context.Background(), DefaultDeps(), cfg, targets, nil, io.Discard, &errb)
	stderr := errb.String()
	if err != nil {
		t.Fatalf("a teardown error must not fail the run: %v\n%s", err, stderr)
	}
	const want = "stopping the server: stop x: process group 42 still has members"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	run := readDoc(t, report).Runs[0]
	if !strings.Contains(strings.Join(run.Warnings, "\n"), want) {
		t.Errorf("run warnings %q lack %q", run.Warnings, want)
	}
	if run.Complete == nil || !*run.Complete {
		t.Errorf("run complete %v, want true", run.Complete)
	}
	checkRebuild(t, report, readRecords(t, recs))
}

// stopFails is a running server process whose Stop fails.
type stopFails struct{ err error }

func (stopFails) Exited() (bool, string) { return false, "" }
func (stopFails) Done() <-chan struct{}  { return nil }
func (stopFails) PID() int               { return 0 }
func (stopFails) StoppedByUs() bool      { return false }
func (s stopFails) Stop() error          { return s.err }
