package sim

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
)

// tpConfig is vLLM serving model on tp boards gpu over link ("" = the
// board's default), with a 4,096-token context.
func tpConfig(t *testing.T, gpu, model string, tp int, link Link) Config {
	t.Helper()
	c, err := Spec{Backend: backend.VLLM, GPU: gpu, Model: model, TensorParallel: tp, Link: link, Server: Server{MaxModelLen: 4096}}.Config()
	if err != nil {
		t.Fatalf("%s ×%d %s %s: %v", gpu, tp, link, err, model)
	}
	return c
}

// TestTensorParallelCollectives: a decode step of one sequence of
// Llama-3.1-8B on two NVLink-joined H100s pays 2 × 32 all-reduces of one
// token's hidden state (8 KiB: vLLM's custom all-reduce, α + S / busbw)
// and one gather of its logits (NCCL), on top of half the weights' read.
func TestTensorParallelCollectives(t *testing.T) {
	c := tpConfig(t, "H100 80GB", "llama-3.1-8b", 2, "")
	p := c.Parallel
	if p.Link != LinkNVLink || p.KVShare != 0.5 || math.Abs(p.Small.BusBytesPerS/63e9-1) > 1e-9 || math.Abs(p.Large.BusBytesPerS/369e9-1) > 1e-9 {
		t.Fatalf("parallel %+v", p)
	}
	cm := newCostModel(&c)
	alpha := (9 * time.Microsecond).Seconds()
	want := 64*(alpha+4096*2/(0.14*450e9)) + alpha + 0.5*128256*2/(0.82*450e9)
	if got := cm.comm.step(1, 1); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("collectives of one decode token: %.2f µs, want %.2f µs", got*1e6, want*1e6)
	}
	one := tpConfig(t, "H100 80GB", "llama-3.1-8b", 1, "")
	s := shape{}
	s.add(1, 1000, true)
	t1, t2 := newCostModel(&one).batchStep(&s, true, backend.VLLM), cm.batchStep(&s, true, backend.VLLM)
	if !(t2 < t1 && t2 > t1/2) {
		t.Errorf("decode step: %.3f ms on one H100, %.3f ms on two (want between half and all of it)", t1*1e3, t2*1e3)
	}
}

// TestTensorParallelLinks: the same two A100 PCIe boards decode fastest
// over an NVLink bridge, then over PCIe with peer access, slowest
// through host memory; more ranks shrink each one's share of the KV cache.
func TestTensorParallelLinks(t *testing.T) {
	s := shape{}
	for range 32 {
		s.add(1, 2000, true)
	}
	var prev float64
	for _, l := range []Link{LinkNVLink, LinkPCIe, LinkHost} {
		c := tpConfig(t, "A100 80GB PCIe", "llama-3.1-8b", 2, l)
		step := newCostModel(&c).batchStep(&s, true, backend.VLLM)
		if step <= prev {
			t.Errorf("%s: step %.3f ms, not slower than the link before (%.3f ms)", l, step*1e3, prev*1e3)
		}
		prev = step
	}
	if c := tpConfig(t, "RTX 4090", "qwen2.5-7b", 4, ""); c.Parallel.Link != LinkHost || c.Parallel.KVShare != 0.25 {
		t.Errorf("4 × RTX 4090: %+v, want pcie-host and a quarter of 4 KV heads each", c.Parallel)
	}
	if c := tpConfig(t, "L40S", "qwen2.5-7b", 2, ""); c.Parallel.Link != LinkPCIe || math.Abs(c.Parallel.Small.BusBytesPerS/(0.71*32e9)-1) > 1e-9 {
		t.Errorf("2 × L40S: %+v, want PCIe 4.0 with peer access", c.Parallel)
	}
}

// TestTensorParallelFits: Llama-3.1-70B in BF16 does not fit one H100
// and fits two, whose KV blocks the planner sizes per rank.
func TestTensorParallelFits(t *testing.T) {
	if _, err := (Spec{Backend: backend.VLLM, GPU: "H100 80GB", Model: "llama-3.1-70b", Server: Server{MaxModelLen: 4096}}).Config(); !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("one H100: %v, want does not fit", err)
	}
	c := tpConfig(t, "H100 80GB", "llama-3.1-70b", 2, "")
	if c.Server.KVBlocks < 1000 {
		t.Errorf("two H100: %d KV blocks", c.Server.KVBlocks)
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := RunLevel(e, Workload{PromptTokens: 512, OutputTokens: 64}, Load{Method: load.Pool, Concurrency: 4, Requests: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := metric(lr, MetricThroughput); !ok || !(tok > 0) {
		t.Errorf("two H100: throughput %v", tok)
	}
}

// TestTensorParallelRefusals: what vLLM would refuse, or the engine does
// not model, is an ErrBadInput naming it.
func TestTensorParallelRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		s    Spec
		want string
	}{
		"llama.cpp": {Spec{Backend: backend.LlamaCpp, GPU: "L40S", Model: "qwen2.5-7b", TensorParallel: 2}, "splits layers"},
		"heads":     {Spec{Backend: backend.VLLM, GPU: "L40S", Model: "qwen2.5-7b", TensorParallel: 8}, "does not split"},
		"link":      {Spec{Backend: backend.VLLM, GPU: "L40S", Model: "qwen2.5-7b", Link: LinkPCIe}, "needs a tensor-parallel size"},
		"nvlink":    {Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b", TensorParallel: 2, Link: LinkNVLink}, "has no nvlink"},
		"custom":    {Spec{Backend: backend.VLLM, GPUGiB: 24, GPUBandwidthGBs: 900, GPUTFLOPS: 100, Model: "qwen2.5-7b", TensorParallel: 2}, "has no link"},
		"size":      {Spec{Backend: backend.VLLM, GPU: "L40S", Model: "qwen2.5-7b", TensorParallel: 16}, "want 1 to 8"},
	} {
		_, err := tc.s.Config()
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if _, err := ParseLink("infiniband"); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "nvlink, pcie, pcie-host") {
		t.Errorf("ParseLink: %v", err)
	}
}

// TestTensorParallelDocument: a measured run whose profile names a
// tensor-parallel size (a launch profile's tensor_parallel_size) is
// simulated on that many GPUs, so a 70B BF16 model, which does not fit
// one H100, is fitted and predicted on two; without a model preset the
// fit says that it simulates one rank.
func TestTensorParallelDocument(t *testing.T) {
	doc := func(model string) *document.Document {
		t.Helper()
		js := `{"gpu": "H100 80GB", "runs": [{"label": "vllm-tp2", "backend": "vllm", "model": "` + model + `",
			"prompt_tokens": 512, "max_tokens": 128, "profile": {"tensor_parallel_size": 2, "max_model_len": 8192},
			"levels": [{"concurrency": 1, "requests": 10, "errors": 0, "throughput_tok_s": 40, "ttft_p50_ms": 60, "ttft_p95_ms": 70, "tpot_p50_ms": 24}]}]}`
		d, err := document.Decode("tp.json", []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	specs, err := RunSpecs(doc("llama-3.1-70b"))
	if err != nil {
		t.Fatal(err)
	}
	rs := &specs[0]
	if rs.Spec.TensorParallel != 2 || rs.FreeModel {
		t.Fatalf("spec: tensor parallel %d, free model %v; want 2 and a preset", rs.Spec.TensorParallel, rs.FreeModel)
	}
	cfg, err := rs.Spec.Config()
	if err != nil {
		t.Fatalf("70B BF16 on 2 × H100: %v", err)
	}
	if cfg.Parallel.TensorParallel != 2 || cfg.Parallel.Link != LinkNVLink {
		t.Errorf("parallel %+v, want TP 2 over NVLink", cfg.Parallel)
	}
	if _, _, err := Predict(cfg, rs, 1); err != nil {
		t.Errorf("predict: %v", err)
	}
	one := rs.Spec
	one.TensorParallel = 1
	if _, err := one.Config(); err == nil {
		t.Error("70B BF16 on one H100: want a refusal (it does not fit), got a config")
	}
	free, err := RunSpecs(doc("my-private-model"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseConfig(&free[0]); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(free[0].Notes, func(n string) bool { return strings.Contains(n, "tensor-parallel size 2 without a model") }) {
		t.Errorf("free-model notes %q lack the one-rank note", free[0].Notes)
	}
}
