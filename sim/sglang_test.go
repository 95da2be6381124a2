package sim

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
)

// TestSGLangCapacityFromPlan: an SGLang engine's KV pool is plan's SGLang
// capacity model (profile_max_num_token with server_args.py's defaults
// for the GPU), not vLLM's formula: max_total_num_tokens tokens in pages
// of one, chunked_prefill_size as the step budget.
func TestSGLangCapacityFromPlan(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
	}{
		{"RTX 4090 defaults", Spec{Backend: backend.SGLang, GPU: "RTX 4090", Model: "qwen2.5-7b"}},
		{"H100 fp8 KV", Spec{Backend: backend.SGLang, GPU: "H100 80GB", Model: "llama-3.1-8b", KVDtype: "fp8"}},
		{"mem_fraction_static given", Spec{Backend: backend.SGLang, GPU: "RTX 5090", Model: "qwen2.5-7b", Quant: "awq", GPUMemoryUtilization: 0.8}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.spec.Config()
			if err != nil {
				t.Fatal(err)
			}
			m, q, err := resolveModel(tc.spec.Model)
			if err != nil {
				t.Fatal(err)
			}
			if tc.spec.Quant != "" {
				q = plan.Quant(tc.spec.Quant)
			}
			if q == "" {
				q = plan.DefaultQuant(&m)
			}
			kv, _ := kvDtype(backend.SGLang, tc.spec.KVDtype)
			in := plan.Inputs{Model: m, Server: backend.SGLang, GPUName: c.GPU.Name, GPUGiB: c.GPU.MemoryGiB, Quant: q,
				KVDtypes: []plan.KVDtype{kv}, SGLang: plan.SGLangSettings{MemFractionStatic: tc.spec.GPUMemoryUtilization}}
			res, err := plan.Plan(in)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Predictions[0]
			if got := c.Server.KVBlocks * c.Server.BlockSize; got != p.PredictedTokens || c.Server.BlockSize != 1 {
				t.Errorf("KV pool %d tokens in pages of %d; plan's SGLang model says %d in pages of 1", got, c.Server.BlockSize, p.PredictedTokens)
			}
			if c.Server.MaxNumBatchedTokens != p.SGLang.ChunkedPrefillSize {
				t.Errorf("step budget %d, SGLang's chunked_prefill_size %d", c.Server.MaxNumBatchedTokens, p.SGLang.ChunkedPrefillSize)
			}
			// and not vLLM's figure for the same server
			v := tc.spec
			v.Backend = backend.VLLM
			vc, err := v.Config()
			if err != nil {
				t.Fatal(err)
			}
			if vc.Server.KVBlocks*vc.Server.BlockSize == c.Server.KVBlocks {
				t.Errorf("SGLang pool equals vLLM's (%d tokens)", c.Server.KVBlocks)
			}
		})
	}
}

// TestSGLangChunkedPrefillEnds: a prompt longer than chunked_prefill_size
// with another request in flight ends its chunked prefill when its last
// chunk runs (a regression: the request stayed "chunked" after it
// finished, and the engine replayed it forever).
func TestSGLangChunkedPrefillEnds(t *testing.T) {
	cfg, err := Spec{Backend: backend.SGLang, GPU: "RTX 4090", Model: "llama-3.1-8b", Quant: "awq", Server: Server{MaxModelLen: 8192, MaxNumBatchedTokens: 2048}}.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, users := range []int{1, 2, 4} {
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lr, err := RunLevel(e, Workload{PromptTokens: 7936, OutputTokens: 64}, Load{Method: load.Pool, Concurrency: users, Requests: 2 * users, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := *lr.Level.OutputTokens; got != 2*users*64 {
			t.Errorf("c=%d: %d output tokens, want %d", users, got, 2*users*64)
		}
		if s := e.Stats(); s.Steps > 2*users*(64+8) {
			t.Errorf("c=%d: %d steps for %d requests of 4 chunks and 64 tokens", users, s.Steps, 2*users)
		}
	}
}

// TestRecommendPerformance: plan --users' throughput hook on the
// simulator: every configuration on one GPU, or vLLM's and SGLang's
// tensor-parallel ones, that holds the users gets the figures of a
// simulated closed-loop level of that many users (on one GPU the same as
// simulating the configuration directly), llama.cpp's and Ollama's
// layers over several GPUs a note, and the
// recommendation says its figures are simulated.
func TestRecommendPerformance(t *testing.T) {
	m, err := modelspec.Preset("qwen2.5-7b")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := LookupGPU("RTX 4090")
	rec, err := plan.Recommend(plan.Request{Model: m, GPU: plan.Device{Name: g.Name, MemoryGiB: g.MemoryGiB}, MaxGPUs: 2, Context: 4096, Users: 8,
		Throughput: RecommendPerformance(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.PerformanceSource, "simulated") {
		t.Errorf("source %q", rec.PerformanceSource)
	}
	checked := 0
	for _, c := range rec.Fits {
		if c.GPUs > 1 && !Batched(c.Backend) {
			if c.PredictedTokS != nil || !strings.Contains(c.ThroughputNote, "tensor parallelism only") {
				t.Errorf("%s on %d GPUs: %v, note %q", c.Backend, c.GPUs, c.PredictedTokS, c.ThroughputNote)
			}
			continue
		}
		if c.PredictedTokS == nil || c.PredictedTTFTP50Ms == nil || c.PredictedTPOTP50Ms == nil {
			t.Errorf("%s %s %s: no prediction (%s)", c.Backend, c.Quant, c.KVDtype, c.ThroughputNote)
			continue
		}
		if c.Backend != backend.VLLM || c.KVDtype != plan.KVAuto || c.GPUs > 1 {
			continue
		}
		cfg, err := Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b", Quant: string(c.Quant), KVDtype: "auto", Server: Server{MaxModelLen: 4096}}.Config()
		if err != nil {
			t.Fatal(err)
		}
		e, _ := New(cfg)
		lr, err := RunLevel(e, Workload{PromptTokens: 4096 - 256, OutputTokens: 256}, Load{Method: load.Pool, Concurrency: 8, Requests: 16, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if *lr.Level.ThroughputTokS != *c.PredictedTokS || *lr.Level.TTFTP50Ms != *c.PredictedTTFTP50Ms {
			t.Errorf("vLLM %s: hook %v tok/s, TTFT %v; direct simulation %v, %v", c.Quant, *c.PredictedTokS, *c.PredictedTTFTP50Ms, *lr.Level.ThroughputTokS, *lr.Level.TTFTP50Ms)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no one-GPU vLLM configuration was checked")
	}
}
