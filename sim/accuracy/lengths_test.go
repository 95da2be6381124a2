package main

import (
	"slices"
	"testing"

	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/sim"
)

// TestLengthLaw: a case's law follows its dataset and client, and one
// request at a time or llama-bench keeps the case's lengths.
func TestLengthLaw(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Case
		want LengthLaw
	}{
		{"vllm sharegpt rate", Case{Server: "vllm", Tool: "benchmark_serving.py (sharegpt)", Regime: OpenRate, Dataset: "ShareGPT V3, 200 prompts"}, ShareGPTLengths},
		{"sglang sharegpt burst", Case{Server: "sglang", Tool: "sglang bench_serving", Regime: Burst, Dataset: "sharegpt (lengths: totals)", Note: "random dataset with random_range_ratio 0 (lengths drawn)"}, ShareGPTLengths},
		{"sglang random ratio 0", Case{Server: "sglang", Tool: "sglang bench_serving", Regime: OpenRate, Dataset: "random 1024/1024", Note: "random_range_ratio 0 (lengths drawn per request)"}, UniformLengths},
		{"sglang random fixed", Case{Server: "sglang", Tool: "sglang bench_serving (random)", Regime: OpenRate, Dataset: "Random-2000: 3000 sequences"}, FixedLengths},
		{"vllm random fixed", Case{Server: "vllm", Tool: "benchmark_serving.py (random)", Regime: Burst, Dataset: "random 1024/1024, no max-concurrency"}, FixedLengths},
		{"sharegpt one at a time", Case{Server: "vllm", Tool: "benchmark_serving.py (sharegpt)", Regime: SingleStream, Dataset: "ShareGPT V3"}, FixedLengths},
		{"llama-bench", Case{Server: "llamacpp", Tool: "llama-bench", Regime: Burst, Dataset: "sharegpt"}, FixedLengths},
	} {
		if got := lengthLaw(tc.c); got != tc.want {
			t.Errorf("%s: law %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDrawLengths: drawn lengths have the case's means, stay within the
// sampler's bounds, vary from request to request, and are the same on
// every call; fixed cases give every request the case's lengths.
func TestDrawLengths(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		law                  LengthLaw
		prompt, output, n    int
		lo, maxPrompt, total int
	}{
		{"sharegpt", ShareGPTLengths, 206, 202, 200, shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotal},
		{"sharegpt short answers", ShareGPTLengths, 203, 118, 200, shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotal},
		{"sharegpt burst", ShareGPTLengths, 217, 201, 1000, shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotal},
		{"uniform", UniformLengths, 509, 534, 300, 1, 1 << 30, 1 << 30},
		{"fixed", FixedLengths, 1024, 1024, 50, 1024, 1024, 2048},
	} {
		c := Case{ID: "case-" + tc.name, PromptTokens: tc.prompt, OutputTokens: tc.output}
		p, o := drawLengths(c, tc.law, tc.n)
		if len(p) != tc.n || len(o) != tc.n {
			t.Fatalf("%s: %d and %d lengths, want %d", tc.name, len(p), len(o), tc.n)
		}
		for _, x := range []struct {
			what       string
			got        []int
			mean, want float64
		}{{"prompt", p, mean(p), float64(tc.prompt)}, {"output", o, mean(o), float64(tc.output)}} {
			if d := x.mean - x.want; d < -1 || d > 1 {
				t.Errorf("%s: mean %s %.1f, want %.0f", tc.name, x.what, x.mean, x.want)
			}
			if varies := slices.Min(x.got) != slices.Max(x.got); varies != (tc.law != FixedLengths) {
				t.Errorf("%s: %s lengths from %d to %d", tc.name, x.what, slices.Min(x.got), slices.Max(x.got))
			}
		}
		for i := range p {
			if p[i] < tc.lo || o[i] < tc.lo || p[i] > tc.maxPrompt || p[i]+o[i] > tc.total {
				t.Fatalf("%s: request %d has %d/%d tokens, outside the sampler's bounds", tc.name, i, p[i], o[i])
			}
		}
		p2, o2 := drawLengths(c, tc.law, tc.n)
		if !slices.Equal(p, p2) || !slices.Equal(o, o2) {
			t.Errorf("%s: a second draw differs", tc.name)
		}
	}
}

func mean(x []int) float64 {
	s := 0
	for _, v := range x {
		s += v
	}
	return float64(s) / float64(len(x))
}

// TestRunDrawnFixedMatchesRunLevel: with every request at the same
// lengths, the drawn-lengths path measures what sim.RunLevel does, so the
// two paths differ only in the lengths they send.
func TestRunDrawnFixedMatchesRunLevel(t *testing.T) {
	c := Case{ID: "drawn-fixed", Server: "vllm", GPU: "H100 PCIe", GPUCount: 1, TP: 1, Preset: "llama-3.1-8b", Quant: "fp16",
		MaxModelLen: 8192, Regime: OpenRate, Rate: 8, NumRequests: 100, PromptTokens: 206, OutputTokens: 202}
	for _, method := range []load.Method{load.Rate, load.Batch} {
		c.Regime = OpenRate
		if method == load.Batch {
			c.Regime = Burst
		}
		w, l := level(c)
		e1, err := newEngine(c)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := newEngine(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sim.RunLevel(e1, w, l)
		if err != nil {
			t.Fatal(err)
		}
		p, o := drawLengths(c, FixedLengths, l.Requests)
		got, err := runDrawn(e2, p, o, l)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name      string
			got, want *float64
		}{{"throughput", got.Level.ThroughputTokS, want.Level.ThroughputTokS}, {"TPOT", got.Level.TPOTMeanMs, want.Level.TPOTMeanMs}, {"TTFT", got.Level.TTFTMeanMs, want.Level.TTFTMeanMs}} {
			if f.got == nil || f.want == nil || *f.got != *f.want {
				t.Errorf("%s: %s %v, RunLevel's %v", method, f.name, deref(f.got), deref(f.want))
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestWarmsFirstPrompt: vLLM's and SGLang's benchmark clients send their
// first prompt before they measure (SGLang's with at most 32 output
// tokens); other clients and servers without prefix caching do not.
func TestWarmsFirstPrompt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       Case
		warms   bool
		wantCap int
	}{
		{"benchmark_serving.py", Case{Server: "vllm", Tool: "benchmark_serving.py (random)"}, true, 0},
		{"vllm bench serve", Case{Server: "vllm", Tool: "vllm bench serve (random)"}, true, 0},
		{"sglang bench_serving", Case{Server: "sglang", Tool: "sglang bench_serving (random)"}, true, sglangWarmupOutputCap},
		{"sglang client on vllm", Case{Server: "vllm", Tool: "sglang bench_serving (random, vllm backend)"}, true, sglangWarmupOutputCap},
		{"own client", Case{Server: "vllm", Tool: "ai-factory-ops-lab loadgen.py (streaming chat, thread pool)"}, false, 0},
		{"llama-bench", Case{Server: "llamacpp", Tool: "llama-bench"}, false, 0},
		{"ollama", Case{Server: "ollama", Tool: "benchmark_serving.py (random)"}, false, 0},
	} {
		outCap, warms := tc.c.warmsFirstPrompt()
		if warms != tc.warms || outCap != tc.wantCap {
			t.Errorf("%s: warms %v with cap %d, want %v with cap %d", tc.name, warms, outCap, tc.warms, tc.wantCap)
		}
	}
}

// TestWarmedFirstRequest: after the client's warm-up, a single request's
// prompt is cached, so its TTFT is far below the same request's on a
// cold server, and later requests (other prompts) still prefill in full.
func TestWarmedFirstRequest(t *testing.T) {
	c := Case{ID: "warm", Server: "vllm", Tool: "benchmark_serving.py (random)", GPU: "A100 80GB", GPUCount: 1, TP: 1,
		Preset: "qwen2-7b", Quant: "bf16", Regime: SingleStream, PromptTokens: 1024, OutputTokens: 64}
	ttft := func(n int, warm bool) []float64 {
		t.Helper()
		e, err := newEngine(c)
		if err != nil {
			t.Fatal(err)
		}
		prompts, outputs := drawLengths(c, FixedLengths, n)
		l := sim.Load{Method: load.Pool, Concurrency: 1, Requests: n, Seed: seed, Run: c.ID}
		var lr *sim.LevelResult
		if warm {
			lr, err = runWarmed(e, prompts, outputs, 0, l)
		} else {
			lr, err = runDrawn(e, prompts, outputs, l)
		}
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, r := range lr.Results {
			if !r.Warmup && r.TTFTNS != nil {
				out = append(out, float64(*r.TTFTNS)/1e6)
			}
		}
		return out
	}
	cold, warm := ttft(2, false), ttft(2, true)
	if len(cold) != 2 || len(warm) != 2 {
		t.Fatalf("TTFTs: cold %v, warm %v, want 2 each", cold, warm)
	}
	if warm[0] > cold[0]/2 {
		t.Errorf("first request after the warm-up: TTFT %.1f ms, want under half the cold %.1f ms", warm[0], cold[0])
	}
	if d := warm[1] - cold[1]; d < -0.05*cold[1] || d > 0.05*cold[1] {
		t.Errorf("second request: TTFT %.1f ms warm, %.1f ms cold, want the same within 5%%", warm[1], cold[1])
	}
}
