package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
)

// hostileVLLMMetrics is a vLLM /metrics page with values no server can
// mean: a negative KV usage, a usage above 1, negative request gauges, and
// a cache_config_info whose num_gpu_blocks × block_size overflows int64
// (2^62 × 4 wrapped to 0; 2^61+1 × 8 would wrap to 8).
const hostileVLLMMetrics = `# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0"} -3
vllm:kv_cache_usage_perc{engine="1"} 0.25
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0"} -7
vllm:num_requests_running{engine="1"} 2
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting 1e300
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total -5
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="4",cache_dtype="auto",gpu_memory_utilization="0.9",num_gpu_blocks="4611686018427387904"} 1
`

// TestExtractDropsOutOfRange (item 4): gauges outside their
// range are left out with the reason, so a negative usage is never a
// peak and an overflowing block count never a capacity.
func TestExtractDropsOutOfRange(t *testing.T) {
	fams, err := ParseExposition(strings.NewReader(hostileVLLMMetrics))
	if err != nil {
		t.Fatal(err)
	}
	s := Extract(fams, vllmNames)
	if !ptr.Equal(s.KVUsage, ptr.To(0.25)) {
		t.Errorf("KV usage %s, want 0.25 (the -3 series dropped)", show(s.KVUsage))
	}
	if !ptr.Equal(s.Running, ptr.To(2.0)) || s.Waiting != nil || s.Preemptions != nil {
		t.Errorf("running %s waiting %s preemptions %s", show(s.Running), show(s.Waiting), show(s.Preemptions))
	}
	if s.Cache.Blocks != nil || !ptr.Equal(s.Cache.BlockSize, ptr.To(4)) {
		t.Errorf("blocks %s block size %s", show(s.Cache.Blocks), show(s.Cache.BlockSize))
	}
	if _, ok := s.Cache.Tokens(); ok {
		t.Error("a capacity from an out-of-range block count")
	}
	var got []string
	for _, d := range s.Dropped {
		got = append(got, d.String())
	}
	for _, want := range []string{
		"vllm:kv_cache_usage_perc = -3 is outside 0–1",
		"vllm:num_requests_running = -7 is outside",
		"vllm:num_requests_waiting = 1e+300 is outside",
		"vllm:num_preemptions_total = -5 is outside",
		`vllm:cache_config_info num_gpu_blocks = "4611686018427387904" is outside 1–2147483648`,
	} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("dropped lacks %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// TestObserverDropsOutOfRange: through the observer as run uses it, the
// run gets no capacity and a warning, and the level's peak KV usage is
// the in-range series', never negative, with a warning naming the metric.
func TestObserverDropsOutOfRange(t *testing.T) {
	only := strings.ReplaceAll(hostileVLLMMetrics, "vllm:kv_cache_usage_perc{engine=\"1\"} 0.25\n", "")
	srv, hits := serveCounting(t, map[string]string{"/metrics": only}, http.StatusNotFound)
	ctx := context.Background()
	o, info := Start(ctx, Config{Kind: backend.VLLM, BaseURL: srv.URL, ScrapeInterval: 20 * time.Millisecond, GPU: GPUConfig{Mode: GPUNone}})
	defer o.Close()
	if info.Capacity != nil {
		t.Errorf("capacity %+v from an overflowing num_gpu_blocks × block_size", *info.Capacity)
	}
	if w := strings.Join(info.Warnings, "\n"); !strings.Contains(w, "num_gpu_blocks") || !strings.Contains(w, "dropped") {
		t.Errorf("run warnings lack the dropped block count:\n%s", w)
	}
	o.Begin(ctx)
	for deadline := time.Now().Add(10 * time.Second); hits.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	l := o.End(ctx)
	if l == nil {
		t.Fatal("no observations")
	}
	if l.PeakKVCacheUsage != nil || l.Preemptions != nil || l.PeakRequestsWaiting != nil {
		t.Errorf("peak KV %s, preemptions %s, waiting %s: out-of-range values kept", show(l.PeakKVCacheUsage), show(l.Preemptions), show(l.PeakRequestsWaiting))
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "vllm:kv_cache_usage_perc was outside 0–1 (a fraction)") || !strings.Contains(w, "first value -3") {
		t.Errorf("level warnings lack the dropped usage:\n%s", w)
	}
}
