package telemetry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
)

func f64(v float64) *float64 { return &v }

func show[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestExtractCaptures maps real /metrics pages (testdata/, each naming its
// published source in its first comment line) and the llama.cpp and TGI
// fixtures built from those servers' source. The expected values are the
// ones printed in each page.
func TestExtractCaptures(t *testing.T) {
	tests := []struct {
		name, file string
		kind       backend.Kind
		want       Sample
	}{
		{name: "vLLM V1 cpu (new names)", file: "vllm-v1-metrics-opt125m-cpu.txt", kind: backend.VLLM, want: Sample{
			KVUsage: f64(0.0011001100110010764), Preemptions: f64(0), Running: f64(1), Waiting: f64(0),
			Cache: CacheConfig{Dtype: ptr.To("auto"), Blocks: ptr.To(910), BlockSize: ptr.To(128), GPUMemoryUtilization: f64(0.92)}}},
		{name: "vLLM V1 gpu (new names)", file: "vllm-v1-metrics-qwen27b-gpu.txt", kind: backend.VLLM, want: Sample{
			KVUsage: f64(0.38235294117647056), Preemptions: f64(0), Running: f64(1), Waiting: f64(0),
			Cache: CacheConfig{Dtype: ptr.To("turboquant_3bit_nc"), Blocks: ptr.To(35), BlockSize: ptr.To(16), GPUMemoryUtilization: f64(0.92)}}},
		{name: "vLLM V0 (old names)", file: "vllm-v0-metrics-aibrix.txt", kind: backend.VLLM, want: Sample{
			KVUsage: f64(0), Preemptions: f64(0), Running: f64(0), Waiting: f64(0),
			Cache: CacheConfig{Dtype: ptr.To("auto"), Blocks: ptr.To(81767), BlockSize: ptr.To(16), GPUMemoryUtilization: f64(0.9)}}},
		{name: "SGLang 0.4.3 docs", file: "sglang-0.4-metrics-docs.txt", kind: backend.SGLang, want: Sample{
			KVUsage: f64(0.28), Running: f64(162), Waiting: f64(2826), KVTokensUsed: f64(123859)}},
		{name: "SGLang 0.5.1 excerpt", file: "sglang-0.5.1-metrics-excerpt.txt", kind: backend.SGLang, want: Sample{
			KVUsage: f64(0), Running: f64(1), KVTokensUsed: f64(1)}},
		{name: "llama.cpp b9014", file: "llamacpp-b9014-metrics.txt", kind: backend.LlamaCpp, want: Sample{
			Running: f64(1), Waiting: f64(0)}},
		{name: "llama.cpp with KV gauges (fixture from source)", file: "llamacpp-c392e50-metrics-kv.txt", kind: backend.LlamaCpp, want: Sample{
			KVUsage: f64(0.4375), KVTokensUsed: f64(1792), Running: f64(3), Waiting: f64(2)}},
		{name: "TGI 2.2.0 (fixture from source)", file: "tgi-2.2.0-metrics.txt", kind: backend.TGI, want: Sample{
			Running: f64(6), Waiting: f64(3)}},
		{name: "vLLM page read as generic OpenAI server", file: "vllm-v0-metrics-aibrix.txt", kind: backend.OpenAI, want: Sample{
			KVUsage: f64(0), Preemptions: f64(0), Running: f64(0), Waiting: f64(0),
			Cache: CacheConfig{Dtype: ptr.To("auto"), Blocks: ptr.To(81767), BlockSize: ptr.To(16), GPUMemoryUtilization: f64(0.9)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fams, err := ParseExposition(strings.NewReader(readTestdata(t, tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			names, ok := backend.MetricsFor(tc.kind)
			if !ok {
				t.Fatalf("backend.MetricsFor(%s) has no table", tc.kind)
			}
			assertSample(t, Extract(fams, names), tc.want)
		})
	}
}

func assertSample(t *testing.T, got, want Sample) {
	t.Helper()
	check := func(field string, g, w *float64) {
		if !ptr.Equal(g, w) {
			t.Errorf("%s = %s, want %s", field, show(g), show(w))
		}
	}
	check("KVUsage", got.KVUsage, want.KVUsage)
	check("Preemptions", got.Preemptions, want.Preemptions)
	check("Running", got.Running, want.Running)
	check("Waiting", got.Waiting, want.Waiting)
	check("KVTokensUsed", got.KVTokensUsed, want.KVTokensUsed)
	check("KVTokensMax", got.KVTokensMax, want.KVTokensMax)
	check("Cache.GPUMemoryUtilization", got.Cache.GPUMemoryUtilization, want.Cache.GPUMemoryUtilization)
	if !ptr.Equal(got.Cache.Dtype, want.Cache.Dtype) {
		t.Errorf("Cache.Dtype = %s, want %s", show(got.Cache.Dtype), show(want.Cache.Dtype))
	}
	if !ptr.Equal(got.Cache.Blocks, want.Cache.Blocks) {
		t.Errorf("Cache.Blocks = %s, want %s", show(got.Cache.Blocks), show(want.Cache.Blocks))
	}
	if !ptr.Equal(got.Cache.BlockSize, want.Cache.BlockSize) {
		t.Errorf("Cache.BlockSize = %s, want %s", show(got.Cache.BlockSize), show(want.Cache.BlockSize))
	}
}

func TestOllamaHasNoMetrics(t *testing.T) {
	if _, ok := backend.MetricsFor(backend.Ollama); ok {
		t.Fatal("backend.MetricsFor(ollama) reports a metrics table; Ollama exports no Prometheus metrics")
	}
}

// TestMultipleSeries checks how series of one metric combine: KV usage by
// max (one engine full is the limit), gauges and counters by sum.
func TestMultipleSeries(t *testing.T) {
	page := `# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0"} 0.25
vllm:kv_cache_usage_perc{engine="1"} 0.75
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0"} 3
vllm:num_requests_running{engine="1"} 4
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0"} 2
vllm:num_preemptions_total{engine="1"} 5
`
	fams, err := ParseExposition(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	s := Extract(fams, vllmNames)
	assertSample(t, s, Sample{KVUsage: f64(0.75), Running: f64(7), Preemptions: f64(7)})
}

// TestPartialPage keeps the families read before a syntax error.
func TestPartialPage(t *testing.T) {
	page := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 2\nvllm:kv_cache_usage_perc{engine=\"0\" 0.5\n"
	fams, err := ParseExposition(strings.NewReader(page))
	if err == nil {
		t.Fatal("no error for a broken label set")
	}
	if got := Extract(fams, vllmNames).Running; !ptr.Equal(got, f64(2)) {
		t.Fatalf("Running = %s, want 2 from the lines before the error", show(got))
	}
}

// setSample returns page with the value of every sample of metric name set
// to v. Tests use it to derive a later scrape from a captured one.
func setSample(t testing.TB, page, name string, v float64) string {
	t.Helper()
	lines := strings.Split(page, "\n")
	n := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "#") || !(strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ")) {
			continue
		}
		end := strings.LastIndexByte(l, '}')
		if end < 0 {
			end = len(name)
		}
		lines[i] = l[:end+1] + " " + strconv.FormatFloat(v, 'g', -1, 64)
		if end == len(name) {
			lines[i] = name + " " + strconv.FormatFloat(v, 'g', -1, 64)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("setSample: no sample of %s", name)
	}
	return strings.Join(lines, "\n")
}

// TestLevelFromVLLMCaptures folds a level's scrapes — the real vLLM page,
// then pages derived from it with the preemption counter and KV usage
// raised as a busy server would raise them — for both name generations.
func TestLevelFromVLLMCaptures(t *testing.T) {
	tests := []struct {
		name, file, kvName string
		blocks, blockSize  int
		dtype              string
		util               float64
	}{
		{"new names (kv_cache_usage_perc)", "vllm-v1-metrics-opt125m-cpu.txt", "vllm:kv_cache_usage_perc", 910, 128, "auto", 0.92},
		{"old names (gpu_cache_usage_perc)", "vllm-v0-metrics-aibrix.txt", "vllm:gpu_cache_usage_perc", 81767, 16, "auto", 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := readTestdata(t, tc.file)
			fams, err := ParseExposition(strings.NewReader(base))
			if err != nil {
				t.Fatal(err)
			}
			p0 := *Extract(fams, vllmNames).Preemptions
			pages := []string{
				base,
				setSample(t, setSample(t, base, tc.kvName, 0.62), "vllm:num_preemptions_total", p0+2),
				setSample(t, setSample(t, base, tc.kvName, 0.41), "vllm:num_preemptions_total", p0+5),
			}
			var acc Accumulator
			for _, pg := range pages {
				fams, err := ParseExposition(strings.NewReader(pg))
				if err != nil {
					t.Fatal(err)
				}
				acc.Observe(Extract(fams, vllmNames))
			}
			s := acc.Summary()
			if !ptr.Equal(s.PeakKVUsage, f64(0.62)) {
				t.Errorf("PeakKVUsage = %s, want 0.62", show(s.PeakKVUsage))
			}
			if !ptr.Equal(s.Preemptions, f64(5)) {
				t.Errorf("Preemptions = %s, want 5", show(s.Preemptions))
			}
			c := s.Cache
			if !ptr.Equal(c.Blocks, &tc.blocks) || !ptr.Equal(c.BlockSize, &tc.blockSize) || !ptr.Equal(c.Dtype, &tc.dtype) || !ptr.Equal(c.GPUMemoryUtilization, &tc.util) {
				t.Errorf("Cache = blocks %s block_size %s dtype %s util %s, want %d %d %s %g",
					show(c.Blocks), show(c.BlockSize), show(c.Dtype), show(c.GPUMemoryUtilization), tc.blocks, tc.blockSize, tc.dtype, tc.util)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings: %q", s.Warnings)
			}
		})
	}
}

func TestAccumulatorCounterReset(t *testing.T) {
	var acc Accumulator
	for _, v := range []float64{10, 12, 1, 3} {
		acc.Observe(Sample{Preemptions: f64(v)})
	}
	s := acc.Summary()
	// 10→12: +2; reset, 1 counts from 0: +1; 1→3: +2.
	if !ptr.Equal(s.Preemptions, f64(5)) {
		t.Fatalf("Preemptions = %s, want 5", show(s.Preemptions))
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "went down") {
		t.Fatalf("warnings = %q, want one about the reset", s.Warnings)
	}
}

func TestAccumulatorSingleRead(t *testing.T) {
	var acc Accumulator
	acc.Observe(Sample{Preemptions: f64(4), KVUsage: f64(0.3)})
	s := acc.Summary()
	if s.Preemptions != nil {
		t.Fatalf("Preemptions = %s from one read, want null", show(s.Preemptions))
	}
	if !ptr.Equal(s.PeakKVUsage, f64(0.3)) {
		t.Fatalf("PeakKVUsage = %s, want 0.3", show(s.PeakKVUsage))
	}
}

// FuzzExtract feeds arbitrary exposition text through the parser and every
// family's table: no panic, and what comes out is finite and in range.
func FuzzExtract(f *testing.F) {
	// The small pages; the 50 KB vLLM V1 pages are covered by
	// TestExtractCaptures and slow the mutator to a crawl.
	for _, name := range []string{"vllm-v0-metrics-aibrix.txt", "sglang-0.5.1-metrics-excerpt.txt", "llamacpp-b9014-metrics.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Add(readTestdata(f, "tgi-2.2.0-metrics.txt"))
	f.Add(readTestdata(f, "llamacpp-c392e50-metrics-kv.txt"))
	f.Add("vllm:kv_cache_usage_perc NaN\nvllm:num_preemptions_total +Inf\n")
	f.Add("# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{num_gpu_blocks=\"-3\",block_size=\"None\",gpu_memory_utilization=\"7\"} 1\n")
	f.Add("{\"vllm:kv_cache_usage_perc\"} 0.5\n")
	f.Add("vllm:kv_cache_usage_perc -3\nvllm:num_requests_running -1\n# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{num_gpu_blocks=\"4611686018427387904\",block_size=\"4\"} 1\n")
	f.Add("# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.38\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{engine=\"0\"} 3.0\n")
	f.Fuzz(func(t *testing.T, page string) {
		fams, _ := ParseExposition(strings.NewReader(page))
		names, _ := backend.MetricsFor(backend.OpenAI)
		var acc Accumulator
		s := Extract(fams, names)
		acc.Observe(s)
		acc.Observe(s)
		sum := acc.Summary()
		for _, p := range []*float64{s.KVUsage, s.Preemptions, s.Running, s.Waiting, s.KVTokensUsed, s.KVTokensMax, sum.PeakKVUsage} {
			if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
				t.Fatalf("non-finite value %v", *p)
			}
		}
		if sum.Preemptions != nil && *sum.Preemptions < 0 {
			t.Fatalf("negative preemption delta %v", *sum.Preemptions)
		}
		for _, p := range []*float64{s.KVUsage, sum.PeakKVUsage} {
			if p != nil && !(*p >= 0 && *p <= 1) {
				t.Fatalf("KV usage %v outside 0–1", *p)
			}
		}
		for _, p := range []*float64{s.Preemptions, s.Running, s.Waiting, s.KVTokensUsed, s.KVTokensMax} {
			if p != nil && *p < 0 {
				t.Fatalf("negative gauge %v", *p)
			}
		}
		if tok, ok := s.Cache.Tokens(); ok && tok < 1 {
			t.Fatalf("capacity %d tokens from %+v", tok, s.Cache)
		}
		c := s.Cache
		if (c.Blocks != nil && *c.Blocks <= 0) || (c.BlockSize != nil && *c.BlockSize <= 0) ||
			(c.GPUMemoryUtilization != nil && !(*c.GPUMemoryUtilization > 0 && *c.GPUMemoryUtilization <= 1)) {
			t.Fatalf("cache config out of range: %+v", c)
		}
	})
}

// TestAccumulatorWaitingRise: the waiting gauge's rise along its
// least-squares line; a queue that grows steadily rises by its growth,
// one that fluctuates by about nothing.
func TestAccumulatorWaitingRise(t *testing.T) {
	cases := []struct {
		name    string
		waiting []float64
		want    *float64
	}{
		{"growing", []float64{0, 2, 4, 6, 8, 10}, f64(10)},
		{"fluctuating", []float64{3, 5, 3, 5, 3, 5, 3}, f64(0)},
		{"draining", []float64{9, 6, 3, 0}, f64(-9)},
		{"two readings", []float64{0, 10}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var acc Accumulator
			for _, w := range c.waiting {
				acc.Observe(Sample{Waiting: f64(w)})
			}
			acc.Observe(Sample{}) // a scrape without the gauge does not count
			got := acc.Summary().WaitingRise
			if (got == nil) != (c.want == nil) || got != nil && math.Abs(*got-*c.want) > 1e-9 {
				t.Fatalf("WaitingRise = %s, want %s", show(got), show(c.want))
			}
		})
	}
}

// vllmNames is vLLM's metric table, as the observer reads it.
var vllmNames, _ = backend.MetricsFor(backend.VLLM)
