package telemetry_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
	"github.com/servebench/servebench/telemetry"
)

// The live tests of the metric parsers against `servebench sim serve`:
// each server family's /metrics (and llama.cpp's /slots) in its real
// format, scraped while the simulated server works, and what the observer
// makes of it held against what the engine did.

const simModel = "Qwen/Qwen2.5-7B-Instruct-AWQ"

// level runs n concurrent requests of maxTokens against the server while
// the observer watches, and returns what it observed.
func level(t *testing.T, kind backend.Kind, url string, n, maxTokens int) (telemetry.RunInfo, *record.Observations) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	o, info := telemetry.Start(ctx, telemetry.Config{Kind: kind, BaseURL: url, ScrapeInterval: 20 * time.Millisecond,
		GPU: telemetry.GPUConfig{Mode: telemetry.GPUNone}})
	defer o.Close()
	c, err := backend.New(backend.Config{Kind: kind, BaseURL: url, Model: simModel, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	o.Begin(ctx)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var r record.Result
			c.Do(ctx, &backend.Request{Prompt: "a prompt of some words for the simulated server", MaxTokens: maxTokens, Seed: int64(i)}, &r)
			if !r.OK() {
				t.Errorf("request %d: %s %s", i, r.Reason, r.Error)
			}
		})
	}
	wg.Wait()
	return info, o.End(ctx)
}

func TestObserverAgainstSimServe(t *testing.T) {
	cases := []struct {
		kind backend.Kind
		// kv says the family exports its KV-cache usage.
		kv bool
	}{
		{backend.VLLM, true},
		{backend.SGLang, true},
		{backend.LlamaCpp, true},
		{backend.TGI, false},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			srv, url := simservetest.Start(t, simserve.Options{As: backend.Kind(tc.kind)})
			info, obs := level(t, tc.kind, url, 6, 200)
			for _, w := range info.Warnings {
				if strings.HasPrefix(w, "metrics:") {
					t.Errorf("run warning: %s", w)
				}
			}
			if obs == nil || obs.PeakRequestsRunning == nil || *obs.PeakRequestsRunning < 2 {
				t.Fatalf("peak running requests not observed: %s", show(obs))
			}
			slots := float64(srv.Config().Server.Slots)
			if max := max(float64(srv.Config().Server.MaxNumSeqs), slots); *obs.PeakRequestsRunning > max || *obs.PeakRequestsRunning > 6 {
				t.Errorf("peak running %v: more than were sent (6) or than the server runs (%v)", *obs.PeakRequestsRunning, max)
			}
			if tc.kv {
				if obs.PeakKVCacheUsage == nil || *obs.PeakKVCacheUsage <= 0 || *obs.PeakKVCacheUsage > 1 {
					t.Errorf("peak KV-cache usage %s: want a fraction above 0", show(obs.PeakKVCacheUsage))
				}
			}
			if tc.kind == backend.VLLM {
				if b := info.KVCache.Blocks; b == nil || *b != srv.Config().Server.KVBlocks {
					t.Errorf("cache_config_info num_gpu_blocks %v, the engine has %d", b, srv.Config().Server.KVBlocks)
				}
				if info.Capacity == nil || info.Capacity.Tokens == nil {
					t.Error("no KV capacity from cache_config_info")
				}
				if obs.Preemptions == nil || *obs.Preemptions != 0 {
					t.Errorf("preemptions %s, want 0 on a cache this large", show(obs.Preemptions))
				}
			}
		})
	}
}

// TestPreemptionsAgainstSimServe: on a KV cache too small for its
// requests, the simulated vLLM preempts, and the scraped counter's rise
// over the level is what the engine counted; usage peaks near 1.
func TestPreemptionsAgainstSimServe(t *testing.T) {
	spec := simservetest.Spec(backend.VLLM)
	// 60 blocks of 16 tokens: 8 requests of 12 + 300 tokens need 20 each
	spec.Server = sim.Server{KVBlocks: 60, MaxModelLen: 900}
	srv, url := simservetest.Start(t, simserve.Options{As: backend.VLLM, Spec: spec})
	_, obs := level(t, backend.VLLM, url, 8, 300)
	want := srv.Summary().Preemptions
	if want == 0 {
		t.Fatal("the engine did not preempt: the test's cache is too large")
	}
	if obs == nil || obs.Preemptions == nil || int(*obs.Preemptions) != want {
		t.Errorf("observed preemptions %s, the engine counted %d", show(obs.Preemptions), want)
	}
	// the cache is full whenever a request is preempted; scrapes every
	// 20 ms on a loaded machine may miss those moments, not the cache
	// being mostly full
	if obs.PeakKVCacheUsage == nil || *obs.PeakKVCacheUsage < 0.5 {
		t.Errorf("peak KV usage %s, want a cache mostly full when preempting", show(obs.PeakKVCacheUsage))
	}
	if obs.PeakRequestsWaiting == nil || *obs.PeakRequestsWaiting < 1 {
		t.Errorf("peak waiting %s, want the preempted requests queued", show(obs.PeakRequestsWaiting))
	}
}

// TestSlotsFallbackAgainstSimServe: llama-server without --metrics answers
// 501; the observer falls back to /slots and still sees busy slots.
func TestSlotsFallbackAgainstSimServe(t *testing.T) {
	_, url := simservetest.Start(t, simserve.Options{As: backend.LlamaCpp, NoMetrics: true})
	info, obs := level(t, backend.LlamaCpp, url, 4, 200)
	found := false
	for _, w := range info.Warnings {
		found = found || strings.Contains(w, "/slots")
	}
	if !found {
		t.Errorf("no warning about the /slots fallback: %v", info.Warnings)
	}
	if obs == nil || obs.PeakRequestsRunning == nil || *obs.PeakRequestsRunning < 2 {
		t.Errorf("busy slots not observed through /slots: %s", show(obs))
	}
	if obs != nil && obs.PeakKVCacheUsage != nil {
		t.Errorf("KV usage %s from /slots, which has none", show(obs.PeakKVCacheUsage))
	}
}

// TestNoMetricsOllamaAgainstSimServe: Ollama exports no metrics; the
// observer says so and measures nothing.
func TestNoMetricsOllamaAgainstSimServe(t *testing.T) {
	_, url := simservetest.Start(t, simserve.Options{As: backend.Ollama})
	info, obs := level(t, backend.Ollama, url, 2, 16)
	if len(info.Warnings) == 0 || !strings.Contains(strings.Join(info.Warnings, " "), "exports no Prometheus metrics") {
		t.Errorf("warnings %v: want the one about Ollama's missing metrics", info.Warnings)
	}
	if obs != nil && (obs.PeakKVCacheUsage != nil || obs.PeakRequestsRunning != nil) {
		t.Errorf("observed %s from a server without metrics", show(obs))
	}
}

// show prints an optional value as the records file would.
func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
