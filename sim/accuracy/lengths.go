package main

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/workload"
)

// LengthLaw is how a case's client chose each request's prompt and
// output lengths.
type LengthLaw string

// Length laws of the corpus's clients.
const (
	// FixedLengths: every request has the case's lengths (the "random"
	// dataset at fixed lengths, llama-bench, one fixed chat prompt).
	FixedLengths LengthLaw = "fixed"
	// ShareGPTLengths: the conversations of ShareGPT as vLLM's
	// benchmark_serving.py samples them (sample_sharegpt_requests) and
	// SGLang's bench_serving copies: a conversation's first human turn is
	// the prompt and its first answer max_tokens; pairs with a prompt or
	// answer under shareGPTMinTokens, a prompt over shareGPTMaxPrompt or
	// the two over shareGPTMaxTotal are left out. With EOS not ignored
	// the model ends most answers earlier, so the lengths the server
	// sees are the page's means only.
	ShareGPTLengths LengthLaw = "sharegpt"
	// UniformLengths: SGLang bench_serving's random dataset at
	// random_range_ratio 0, whose sample_random_requests draws each
	// prompt length uniformly from [1, input_len] and each output length
	// from [0, output_len] (np.random.randint(max(int(input_len *
	// range_ratio), 1), input_len + 1)), so the lengths are uniform with
	// the page's means.
	UniformLengths LengthLaw = "uniform"
)

// The filter of vLLM's ShareGPT sampler (benchmarks/benchmark_serving.py,
// sample_sharegpt_requests, https://github.com/vllm-project/vllm/blob/v0.8.5/benchmarks/benchmark_serving.py:
// "if prompt_len < 4 or output_len < 4 … if prompt_len > 1024 or
// prompt_len + output_len > 2048 … continue").
const (
	shareGPTMinTokens = 4
	shareGPTMaxPrompt = 1024
	shareGPTMaxTotal  = 2048
)

// lengthLaw is the law of c's lengths: ShareGPT when its dataset or tool
// says so, uniform for SGLang's random dataset at range ratio 0, else
// fixed. One request at a time has no queue for the lengths' spread to
// change, so single-stream cases keep their mean lengths.
func lengthLaw(c Case) LengthLaw {
	dataset, tool := strings.ToLower(c.Dataset), strings.ToLower(c.Tool)
	switch {
	case c.llamaBench() || c.Regime == SingleStream:
		return FixedLengths
	case strings.Contains(dataset, "sharegpt") || strings.Contains(tool, "sharegpt"):
		return ShareGPTLengths
	case c.Server == "sglang" && strings.HasPrefix(dataset, "random") && strings.Contains(c.Note, "random_range_ratio 0 "):
		return UniformLengths
	}
	return FixedLengths
}

// drawLengths draws the prompt and output lengths of n requests of c under
// law, scaled so that the n requests' means are the case's (the page's
// totals over its requests). A ShareGPT case publishes only its mean
// lengths, so each length is exponential — the law of greatest entropy
// for a published mean alone, as workload.Length draws a profile's
// lengths — within the sampler's bounds; a uniform case's lengths are
// uniform from 1. The draws are seeded by the case's id alone, so the
// page is reproducible.
func drawLengths(c Case, law LengthLaw, n int) (prompts, outputs []int) {
	prompts, outputs = make([]int, n), make([]int, n)
	if law == FixedLengths {
		for i := range prompts {
			prompts[i], outputs[i] = max(c.PromptTokens, 1), max(c.OutputTokens, 1)
		}
		return prompts, outputs
	}
	r := rand.New(rand.NewPCG(seed, fnv64(c.ID)))
	unit := r.ExpFloat64 // mean 1
	lo, maxPrompt, maxTotal := shareGPTMinTokens, shareGPTMaxPrompt, shareGPTMaxTotal
	if law == UniformLengths {
		unit = func() float64 { return 2 * r.Float64() } // mean 1
		lo, maxPrompt, maxTotal = 1, math.MaxInt32, math.MaxInt32
	}
	up, uo := make([]float64, n), make([]float64, n)
	for i := range up {
		up[i], uo[i] = unit(), unit()
	}
	prompts = scaleToMean(up, float64(max(c.PromptTokens, lo)), lo, func(int) int { return maxPrompt })
	outputs = scaleToMean(uo, float64(max(c.OutputTokens, lo)), lo, func(i int) int { return maxTotal - prompts[i] })
	return prompts, outputs
}

// scaleToMean rounds s·u[i] into [lo, hi(i)] with the scale s whose
// rounded, clamped lengths have the given mean (bisection: the mean grows
// with s).
func scaleToMean(u []float64, mean float64, lo int, hi func(int) int) []int {
	at := func(s float64) ([]int, float64) {
		out, sum := make([]int, len(u)), 0
		for i, x := range u {
			out[i] = min(max(int(math.Round(s*x)), lo), max(hi(i), lo))
			sum += out[i]
		}
		return out, float64(sum) / float64(len(u))
	}
	a, b := 0.0, 4*mean
	for range 60 {
		mid := (a + b) / 2
		if _, m := at(mid); m < mean {
			a = mid
		} else {
			b = mid
		}
	}
	out, _ := at(b)
	return out
}

// fnv64 is the FNV-1a hash of s (a case's own stream of draws).
func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// lengthsSource prepares request seq with the seq-th drawn lengths (the
// draws cycle when a level sends more).
type lengthsSource struct{ prompts, outputs []int }

// Items implements load.Source.
func (s lengthsSource) Items(_ context.Context, seq0, n int) ([]workload.Item, error) {
	items := make([]workload.Item, n)
	for i := range items {
		k := (seq0 + i) % len(s.prompts)
		items[i] = workload.Item{Request: backend.Request{MaxTokens: s.outputs[k]}, ExpectedPromptTokens: s.prompts[k]}
	}
	return items, nil
}

// shapeOf is the engine request of a client's request: the lengths its
// item asked for.
func shapeOf(req *backend.Request, res *record.Result) sim.Request {
	return sim.Request{PromptTokens: max(res.ExpectedPromptTokens, 1), OutputTokens: max(req.MaxTokens, 1)}
}

// runDrawn runs one level of l on e with each request's lengths drawn
// under law: sim.RunLevel's path (sim.RunLevelFrom) with a source of
// per-request lengths instead of one fixed workload, so throughput is
// the output tokens over the level's first send to its last finish, as
// benchmark_serving.py's "benchmark duration" times it.
func runDrawn(e *sim.Engine, prompts, outputs []int, l sim.Load) (*sim.LevelResult, error) {
	return sim.RunLevelFrom(e, lengthsSource{prompts, outputs}, shapeOf, l)
}

// warmsFirstPrompt says whether c's client sends its first request's
// prompt once, and waits for the answer, before it starts measuring, and
// with how many output tokens at most (0: the request's own). vLLM's
// benchmark_serving.py and `vllm bench serve` run an "initial single
// prompt test run" of input_requests[0] with its output length (the
// ready check of later versions sends the same request); SGLang's
// bench_serving sends input_requests[0] warmup_requests times (1 by
// default) with at most 32 output tokens. A server with prefix caching
// (vLLM V1's default, SGLang's radix cache) keeps that prompt, so the
// first measured request finds it cached: a single-request run's TTFT is
// then almost no prefill at all.
func (c Case) warmsFirstPrompt() (outputCap int, warms bool) {
	tool := strings.ToLower(c.Tool)
	switch {
	case c.Server != "vllm" && c.Server != "sglang":
		return 0, false
	case strings.Contains(tool, "sglang bench_serving"):
		return sglangWarmupOutputCap, true
	case strings.Contains(tool, "benchmark_serving.py"), strings.Contains(tool, "vllm bench serve"):
		return 0, true
	}
	return 0, false
}

// sglangWarmupOutputCap is the output length SGLang's bench_serving caps
// its warm-up request at (min(test_request.output_len, 32)).
const sglangWarmupOutputCap = 32

// warmGroup is the prefix-cache group the warm-up request and the first
// measured request share.
const warmGroup = 1

// runWarmed runs one level as runDrawn does, after the client's warm-up:
// one request with the first prompt (its output capped at outCap when
// outCap > 0), run to its end on the same engine, whose prompt the first
// measured request then shares in full (sim.Request.PrefixGroup).
func runWarmed(e *sim.Engine, prompts, outputs []int, outCap int, l sim.Load) (*sim.LevelResult, error) {
	out := outputs[0]
	if outCap > 0 {
		out = min(out, outCap)
	}
	warm := sim.Load{Method: load.Pool, Concurrency: 1, Requests: 1, Seed: l.Seed, Jitter: l.Jitter, Run: l.Run + "-warmup"}
	first := func(req *backend.Request, res *record.Result) sim.Request {
		r := shapeOf(req, res)
		if res.Seq == 0 {
			r.PrefixGroup, r.SharedPrefixTokens = warmGroup, r.PromptTokens
		}
		return r
	}
	if _, err := sim.RunLevelFrom(e, lengthsSource{prompts[:1], []int{out}}, first, warm); err != nil {
		return nil, err
	}
	return sim.RunLevelFrom(e, lengthsSource{prompts, outputs}, first, l)
}
