package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// driftServer is a loopback OpenAI-compatible server whose time to first
// token grows with every request it answers (step more each), as a
// server that heats up or gets another load: what a real server cannot
// be made to do on demand.
func driftServer(t *testing.T, step time.Duration) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(time.Duration(n.Add(1)) * step)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{"a", "b"} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", c)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFindWarnsOfDrift: against a server whose latency grows during the
// search, a load measured twice differs beyond its intervals, and find
// says so in the answer (find[].warnings), the run's warnings and on
// stderr.
func TestFindWarnsOfDrift(t *testing.T) {
	srv := driftServer(t, 50*time.Microsecond)
	out := filepath.Join(t.TempDir(), "find.json")
	_, stderr, err := cliRun(context.Background(), "find", "--backend", "openai", "--url", srv.URL, "--model", "m",
		"--slo", "ttft_p50=400ms", "--max-load", "1", "--requests", "100", "--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "2", "--out", out, "--quiet")
	if err != nil {
		t.Fatalf("find: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Find []struct {
			Passes   int      `json:"passes"`
			Warnings []string `json:"warnings"`
		} `json:"find"`
		Runs []struct {
			Warnings []string `json:"warnings"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	const want = "concurrency 1 measured twice differed beyond the intervals: ttft_p50"
	if len(doc.Find) != 1 || len(doc.Find[0].Warnings) != 1 || !strings.HasPrefix(doc.Find[0].Warnings[0], want) {
		t.Fatalf("find answers %+v, want one warning starting %q\n%s", doc.Find, want, stderr)
	}
	if !strings.Contains(stderr, "servebench: find: "+want) {
		t.Errorf("stderr lacks the warning:\n%s", stderr)
	}
	if len(doc.Runs) != 1 || !strings.Contains(strings.Join(doc.Runs[0].Warnings, "\n"), want) {
		t.Errorf("the run's warnings lack it: %+v", doc.Runs)
	}
}

// TestSimulatedSearchHasNoDrift: each pass of a simulated probe runs on a
// fresh server, which cannot change between passes, so a simulated
// search never says the server drifted, even where two passes' draws
// differ beyond their intervals (llama.cpp's 4 slots at the edge).
func TestSimulatedSearchHasNoDrift(t *testing.T) {
	out := filepath.Join(t.TempDir(), "capacity.json")
	code, _, stderr := run(t, append([]string{"capacity", "--out", out, "--quiet"}, llamaUsers...)...)
	if code != 0 {
		t.Fatalf("capacity: exit %d: %s", code, stderr)
	}
	a := readAnswer(t, out)
	passes := 0
	for _, p := range a.Probes {
		passes = max(passes, p.Passes)
	}
	if passes < 2 {
		t.Fatalf("no probe was measured twice (answer %s): the test needs one", a.Line())
	}
	if strings.Contains(stderr, "differed beyond the intervals") || len(a.Warnings) > 0 {
		t.Errorf("a simulated search warned of drift: %q %q", a.Warnings, stderr)
	}
}
