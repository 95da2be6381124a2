package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
)

// replay serves pages[i] on the i-th GET /metrics (the last one from then
// on): a loopback stand-in for a vLLM we cannot run, replaying a captured
// page and pages derived from it.
func replay(t *testing.T, pages []string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(pages[min(i, len(pages)-1)]))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestScraperReplay scrapes a loopback server replaying the real vLLM page
// (baseline), then pages with KV usage and preemptions raised.
func TestScraperReplay(t *testing.T) {
	base := readTestdata(t, "vllm-v1-metrics-qwen27b-gpu.txt")
	p0 := 0.0 // the capture's counter value
	pages := []string{
		base,
		setSample(t, setSample(t, base, "vllm:kv_cache_usage_perc", 0.9), "vllm:num_preemptions_total", p0+1),
		setSample(t, setSample(t, base, "vllm:kv_cache_usage_perc", 0.7), "vllm:num_preemptions_total", p0+4),
	}
	srv, n := replay(t, pages)
	names, _ := backend.MetricsFor(backend.VLLM)
	s := NewScraper(srv.URL+"/metrics", names, 20*time.Millisecond)
	ctx := context.Background()
	l := s.Begin(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	sum := l.End(ctx)
	if !ptr.Equal(sum.PeakKVUsage, f64(0.9)) || !ptr.Equal(sum.Preemptions, f64(4)) {
		t.Fatalf("peak KV %s preemptions %s, want 0.9 and 4", show(sum.PeakKVUsage), show(sum.Preemptions))
	}
	if !ptr.Equal(sum.Cache.Blocks, ptr.To(35)) || !ptr.Equal(sum.Cache.BlockSize, ptr.To(16)) {
		t.Fatalf("cache = %+v", sum.Cache)
	}
	if sum.Failures != 0 || len(sum.Warnings) != 0 || sum.Scrapes < 3 {
		t.Fatalf("scrapes %d failures %d warnings %q", sum.Scrapes, sum.Failures, sum.Warnings)
	}
	if again := l.End(ctx); again.Scrapes != sum.Scrapes {
		t.Fatal("second End scraped again")
	}
}

// TestScraperFailures: a /metrics that answers 404 (llama.cpp without
// --metrics) leaves every field null with one warning.
func TestScraperFailures(t *testing.T) {
	srv, hits := serveCounting(t, nil, http.StatusNotFound)
	names, _ := backend.MetricsFor(backend.LlamaCpp)
	s := NewScraper(srv.URL+"/metrics", names, 10*time.Millisecond)
	l := s.Begin(context.Background())
	for deadline := time.Now().Add(10 * time.Second); hits.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	sum := l.End(context.Background())
	if sum.PeakKVUsage != nil || sum.PeakRunning != nil || sum.Preemptions != nil {
		t.Fatalf("values from a failing endpoint: %+v", sum)
	}
	if sum.Failures < 2 || len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "404") {
		t.Fatalf("failures %d warnings %q, want one warning naming the 404", sum.Failures, sum.Warnings)
	}
}

// TestScraperSlowEndpoint: a /metrics that hangs does not hold up Begin,
// and End returns within the scrape timeout.
func TestScraperSlowEndpoint(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	names, _ := backend.MetricsFor(backend.VLLM)
	s := NewScraper(srv.URL+"/metrics", names, 50*time.Millisecond)
	start := time.Now()
	l := s.Begin(context.Background())
	if d := time.Since(start); d > s.Timeout/2 {
		t.Fatalf("Begin took %v with a hanging /metrics (scrape timeout %v)", d, s.Timeout)
	}
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	sum := l.End(context.Background())
	if d := time.Since(start); d > s.Timeout+time.Second {
		t.Fatalf("End took %v, timeout is %v", d, s.Timeout)
	}
	if sum.Failures == 0 || len(sum.Warnings) == 0 {
		t.Fatalf("no failure recorded: %+v", sum)
	}
}
