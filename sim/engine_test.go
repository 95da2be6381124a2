package sim

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// testConfig is a round-number server: 1 TB/s, 100 TFLOP/s, weights of
// 1 GB (1 ms per step), 10 GFLOP per token (0.1 ms per token), 100 kB of
// KV per token, no overheads, so expected times can be worked out by hand.
func testConfig(f backend.Kind) Config {
	c := Config{
		Backend: f,
		GPU:     GPU{Name: "test", BandwidthBytesPerS: 1e12, PeakFLOPS: 1e14},
		Model:   ModelCost{Name: "test", WeightBytesPerStep: 1e9, FLOPsPerToken: 1e10, KVBytesPerToken: 1e5},
		Params:  Params{MemoryEfficiency: 1, ComputeEfficiency: 1},
	}
	if batched(f) {
		c.Server = Server{MaxNumSeqs: 8, MaxNumBatchedTokens: 512, BlockSize: 16, KVBlocks: 1001}
	} else {
		c.Server = Server{Slots: 2, SlotContext: 2048, NBatch: 512, NUBatch: 256}
	}
	return c
}

// trace records every event of an engine.
type trace struct{ evs []Event }

func (tr *trace) on(ev Event) { tr.evs = append(tr.evs, ev) }

func (tr *trace) of(h Handle, k EventKind) []Event {
	var out []Event
	for _, e := range tr.evs {
		if e.Handle == h && e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func mustNew(t *testing.T, c Config) *Engine {
	t.Helper()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func submit(t *testing.T, e *Engine, r Request, at time.Duration, tr *trace) Handle {
	t.Helper()
	h, err := e.Submit(r, at, tr.on)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func near(got, want time.Duration) bool {
	d := got - want
	return d > -2 && d < 2
}

// TestCostRoofline: a step costs the larger of its memory and compute
// times plus the overheads.
func TestCostRoofline(t *testing.T) {
	c := testConfig(backend.VLLM)
	c.Params.StepOverhead, c.Params.SeqCost = 100*time.Microsecond, 10*time.Microsecond
	cm := newCostModel(&c)
	cases := []struct {
		name      string
		n, ctx    int
		wantSec   float64
		mmvqExtra bool
	}{
		// decode: 1 GB + (1000+1) × 100 kB read = 1.1001 GB → 1.1001 ms
		{"decode is memory-bound", 1, 1000, 1.1001e-3 + 100e-6 + 10e-6, false},
		// prefill of 500: 5e12 FLOPs → 50 ms; attention FLOPs are 0 here
		{"prefill is compute-bound", 500, 0, 50e-3 + 100e-6 + 10e-6, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s shape
			s.add(tc.n, tc.ctx, true)
			if got := cm.batchStep(&s, false, backend.SGLang); !closeTo(got, tc.wantSec, 1e-9) {
				t.Errorf("step = %.9f s, want %.9f", got, tc.wantSec)
			}
		})
	}
	// llama.cpp charges the sequence cost per token after the first of
	// micro-batches of at most eight tokens only (mmvq's first column
	// hides under the weight read).
	var one, small, big shape
	one.add(1, 0, true)
	small.add(8, 0, true)
	big.add(9, 0, true)
	if d := cm.microBatch(&one) - cm.roofline(&one, one.tokens); !closeTo(d, 100e-6, 1e-12) {
		t.Errorf("1-token micro-batch overhead = %g, want the step overhead only", d)
	}
	if d := cm.microBatch(&small) - cm.roofline(&small, small.tokens); !closeTo(d, 100e-6+7*10e-6, 1e-12) {
		t.Errorf("8-token micro-batch overhead = %g, want step + 7 × seq", d)
	}
	if d := cm.microBatch(&big) - cm.roofline(&big, big.tokens); !closeTo(d, 100e-6, 1e-12) {
		t.Errorf("9-token micro-batch overhead = %g, want the step overhead only", d)
	}
}

func closeTo(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

// TestCaptureSizesPad: vLLM pads a step's tokens up to its captured CUDA
// graph sizes, up to min(2 × max_num_seqs, 512, budget).
func TestCaptureSizesPad(t *testing.T) {
	c := testConfig(backend.VLLM)
	c.Server.CUDAGraphs, c.Server.MaxNumSeqs, c.Server.MaxNumBatchedTokens = true, 256, 2048
	cm := newCostModel(&c)
	for _, tc := range []struct{ n, want int }{{1, 1}, {3, 4}, {5, 8}, {9, 16}, {250, 256}, {257, 272}, {512, 512}, {513, 513}, {2000, 2000}} {
		if got := cm.pad(tc.n); got != tc.want {
			t.Errorf("pad(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestVLLMSingleRequest: an idle server prefills a prompt in one step and
// samples a token at the end of every step after; events arrive in order.
func TestVLLMSingleRequest(t *testing.T) {
	c := testConfig(backend.VLLM)
	c.Params.RequestLatency = 5 * time.Millisecond
	e := mustNew(t, c)
	var tr trace
	h := submit(t, e, Request{PromptTokens: 100, OutputTokens: 3}, 0, &tr)
	end := e.Drain()
	toks := tr.of(h, EventToken)
	if len(toks) != 3 {
		t.Fatalf("%d tokens, want 3", len(toks))
	}
	// arrives at 5 ms; prefill of 100 tokens: 1e12 FLOPs = 10 ms
	if want := 15 * time.Millisecond; !near(toks[0].At, want) {
		t.Errorf("first token at %v, want %v", toks[0].At, want)
	}
	// decode steps read 1 GB + ctx × 100 kB: 1.0101 ms then 1.0102 ms
	if want := toks[0].At + 1010100*time.Nanosecond; !near(toks[1].At, want) {
		t.Errorf("second token at %v, want %v", toks[1].At, want)
	}
	kinds := []EventKind{}
	for _, ev := range tr.evs {
		kinds = append(kinds, ev.Kind)
	}
	if want := []EventKind{EventQueued, EventScheduled, EventToken, EventToken, EventToken, EventFinished}; !slices.Equal(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
	if end != toks[2].At {
		t.Errorf("drained at %v, last token at %v", end, toks[2].At)
	}
	if s := e.Stats(); s.Running != 0 || s.Waiting != 0 || s.Generated != 3 || s.KVUsage != 0 {
		t.Errorf("after the request: %+v", s)
	}
}

// TestVLLMChunkedPrefill: a prompt longer than max_num_batched_tokens is
// computed over several steps, and decodes of running requests go first.
func TestVLLMChunkedPrefill(t *testing.T) {
	c := testConfig(backend.VLLM)
	e := mustNew(t, c)
	var tr trace
	h := submit(t, e, Request{PromptTokens: 1200, OutputTokens: 1}, 0, &tr)
	e.Drain()
	// 512 + 512 + 176 tokens: 3 steps of 51.2, 51.2 and 17.6 ms
	if got, want := tr.of(h, EventToken)[0].At, 120*time.Millisecond; !near(got, want) {
		t.Errorf("first token at %v, want %v", got, want)
	}
	if s := e.Stats(); s.Steps != 3 {
		t.Errorf("%d steps, want 3", s.Steps)
	}
}

// TestVLLMPreemptsLastRunning: when a running request cannot get a block,
// vLLM preempts the last request of the running list, which recomputes its
// prompt and output so far when it comes back, and every request still
// ends with all its tokens.
func TestVLLMPreemptsLastRunning(t *testing.T) {
	c := testConfig(backend.VLLM)
	// 20 usable blocks of 16 tokens (one more is the null block): three
	// prompts of 96 tokens (6 blocks each) fit, their outputs do not.
	c.Server.KVBlocks = 21
	e := mustNew(t, c)
	var tr trace
	var hs []Handle
	for i := range 3 {
		hs = append(hs, submit(t, e, Request{PromptTokens: 96, OutputTokens: 64}, time.Duration(i)*time.Microsecond, &tr))
	}
	e.Drain()
	for _, h := range hs {
		if n := len(tr.of(h, EventToken)); n != 64 {
			t.Errorf("request %d: %d tokens, want 64", h, n)
		}
	}
	if p := tr.of(hs[0], EventPreempted); len(p) != 0 {
		t.Errorf("the first request was preempted %d times; vLLM preempts the last running one", len(p))
	}
	if p := tr.of(hs[2], EventPreempted); len(p) == 0 {
		t.Errorf("the last request was never preempted")
	}
	if s := e.Stats(); s.Preemptions == 0 || s.PeakKVUsage < 0.95 {
		t.Errorf("stats %+v: want preemptions and a full cache", s)
	}
}

// TestVLLMReserveFullPrompt: with scheduler_reserve_full_isl a waiting
// request is admitted only when its whole prompt fits, even if its first
// chunk would.
func TestVLLMReserveFullPrompt(t *testing.T) {
	for _, full := range []bool{false, true} {
		c := testConfig(backend.VLLM)
		c.Server.KVBlocks, c.Server.ReserveFullPrompt, c.Server.MaxNumBatchedTokens = 41, full, 64
		e := mustNew(t, c)
		var tr trace
		a := submit(t, e, Request{PromptTokens: 320, OutputTokens: 200}, 0, &tr) // 20 blocks, grows to 33
		b := submit(t, e, Request{PromptTokens: 400, OutputTokens: 8}, time.Microsecond, &tr)
		e.AdvanceTo(60 * time.Millisecond)
		started := len(tr.of(b, EventToken)) > 0 || e.reqs[b].state == stateRunning
		if full && started {
			t.Errorf("full-prompt check: the second request started while its 25 blocks could not all fit")
		}
		if !full && !started {
			t.Errorf("chunk-only check: the second request should start with its first chunk")
		}
		e.Drain()
		if len(tr.of(a, EventToken)) != 200 || len(tr.of(b, EventToken)) != 8 {
			t.Errorf("full=%v: requests did not finish", full)
		}
	}
}

// TestPrefixCacheAfterPreemption: a preempted request's full blocks stay
// cached, so its recompute is shorter than its first prefill.
func TestPrefixCacheAfterPreemption(t *testing.T) {
	run := func(prefix bool) time.Duration {
		c := testConfig(backend.VLLM)
		c.Server.KVBlocks, c.Server.PrefixCaching = 41, prefix
		e := mustNew(t, c)
		var tr trace
		// 40 usable blocks: the second request is preempted when the
		// first grows past 21 blocks; the first then needs only two more,
		// so most of the second's blocks are still cached when it returns.
		submit(t, e, Request{PromptTokens: 320, OutputTokens: 40}, 0, &tr)
		b := submit(t, e, Request{PromptTokens: 300, OutputTokens: 40}, time.Microsecond, &tr)
		end := e.Drain()
		if len(tr.of(b, EventPreempted)) == 0 {
			t.Fatalf("prefix=%v: no preemption", prefix)
		}
		return end
	}
	with, without := run(true), run(false)
	if with >= without {
		t.Errorf("with prefix caching the sweep ends at %v, without at %v; recompute should be cheaper with it", with, without)
	}
}

// TestSharedPrefixGroup: requests of one prefix group reuse the group's
// cached blocks.
func TestSharedPrefixGroup(t *testing.T) {
	c := testConfig(backend.VLLM)
	c.Server.PrefixCaching = true
	e := mustNew(t, c)
	var tr trace
	a := submit(t, e, Request{PromptTokens: 400, OutputTokens: 50, PrefixGroup: 1, SharedPrefixTokens: 384}, 0, &tr)
	e.Drain()
	b := submit(t, e, Request{PromptTokens: 400, OutputTokens: 50, PrefixGroup: 1, SharedPrefixTokens: 384}, e.Now(), &tr)
	start := e.Now()
	e.Drain()
	first := tr.of(a, EventToken)[0].At
	second := tr.of(b, EventToken)[0].At - start
	if second >= first/4 {
		t.Errorf("second TTFT %v vs first %v: the 384 shared tokens should hit the cache", second, first)
	}
}

// TestSlotsQueueFIFO: with every llama.cpp slot busy, tasks wait and take
// slots in arrival order.
func TestSlotsQueueFIFO(t *testing.T) {
	e := mustNew(t, testConfig(backend.LlamaCpp))
	var tr trace
	var hs []Handle
	for i := range 4 {
		hs = append(hs, submit(t, e, Request{PromptTokens: 100, OutputTokens: 10}, time.Duration(i)*time.Microsecond, &tr))
	}
	e.AdvanceTo(time.Microsecond * 10)
	if s := e.Stats(); s.Running != 2 || s.Waiting != 2 {
		t.Errorf("running %d, waiting %d; want 2 and 2", s.Running, s.Waiting)
	}
	e.Drain()
	fin := func(h Handle) time.Duration { return tr.of(h, EventFinished)[0].At }
	if !(fin(hs[2]) > fin(hs[0]) && fin(hs[3]) > fin(hs[1]) && tr.of(hs[2], EventToken)[0].At <= tr.of(hs[3], EventToken)[0].At) {
		t.Errorf("queued tasks did not start in arrival order after the first two")
	}
}

// TestSlotsMicroBatches: a prompt is processed in n_batch batches, each
// split into n_ubatch micro-batches that read the weights again.
func TestSlotsMicroBatches(t *testing.T) {
	e := mustNew(t, testConfig(backend.LlamaCpp))
	var tr trace
	h := submit(t, e, Request{PromptTokens: 600, OutputTokens: 1}, 0, &tr)
	e.Drain()
	// batch 1: 512 tokens = micro-batches of 256 and 256 (25.6 ms each);
	// batch 2: 88 tokens (8.8 ms); the KV reads are far below the
	// compute times.
	if got, want := tr.of(h, EventToken)[0].At, 60*time.Millisecond; !near(got, want) {
		t.Errorf("first token at %v, want %v", got, want)
	}
	if s := e.Stats(); s.Steps != 2 {
		t.Errorf("%d batches, want 2", s.Steps)
	}
}

// TestRejections: a request that can never fit is refused, not queued.
func TestRejections(t *testing.T) {
	cases := []struct {
		name string
		cfg  func() Config
		req  Request
	}{
		{"llama.cpp prompt beyond the slot context", func() Config { return testConfig(backend.LlamaCpp) }, Request{PromptTokens: 2048, OutputTokens: 1}},
		{"vLLM beyond max_model_len", func() Config { c := testConfig(backend.VLLM); c.Server.MaxModelLen = 1000; return c }, Request{PromptTokens: 990, OutputTokens: 20}},
		{"vLLM beyond the whole cache", func() Config { return testConfig(backend.VLLM) }, Request{PromptTokens: 16000, OutputTokens: 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustNew(t, tc.cfg())
			var tr trace
			h := submit(t, e, tc.req, 0, &tr)
			e.Drain()
			if rj := tr.of(h, EventRejected); len(rj) != 1 || rj[0].Reason == "" {
				t.Errorf("events %+v, want one rejection with a reason", tr.evs)
			}
		})
	}
}

// TestSubmitErrors: malformed requests and times in the past are errors.
func TestSubmitErrors(t *testing.T) {
	e := mustNew(t, testConfig(backend.VLLM))
	e.AdvanceTo(time.Second)
	cases := []struct {
		name string
		r    Request
		at   time.Duration
	}{
		{"in the past", Request{PromptTokens: 1, OutputTokens: 1}, 0},
		{"no output", Request{PromptTokens: 1}, time.Second},
		{"no prompt", Request{OutputTokens: 1}, time.Second},
		{"prefix longer than prompt", Request{PromptTokens: 4, OutputTokens: 1, SharedPrefixTokens: 5}, time.Second},
	}
	for _, tc := range cases {
		if _, err := e.Submit(tc.r, tc.at, nil); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", tc.name, err)
		}
	}
}

// TestNextEventAndAdvance: NextEvent says when something happens; time
// does not run past AdvanceTo's argument.
func TestNextEventAndAdvance(t *testing.T) {
	e := mustNew(t, testConfig(backend.VLLM))
	if _, ok := e.NextEvent(); ok {
		t.Fatal("an idle engine has a next event")
	}
	var tr trace
	submit(t, e, Request{PromptTokens: 100, OutputTokens: 2}, 3*time.Millisecond, &tr)
	if next, ok := e.NextEvent(); !ok || next != 3*time.Millisecond {
		t.Fatalf("next event %v %v, want the arrival at 3ms", next, ok)
	}
	e.AdvanceTo(2 * time.Millisecond)
	if e.Now() != 2*time.Millisecond || len(tr.evs) != 0 {
		t.Errorf("advanced to %v with %d events; want 2ms and none", e.Now(), len(tr.evs))
	}
	e.AdvanceTo(3 * time.Millisecond)
	if next, _ := e.NextEvent(); next != 13*time.Millisecond {
		t.Errorf("after the arrival, next event %v, want the prefill's end at 13ms", next)
	}
}

// TestSGLangPrefillFirstAndRetract: SGLang runs prefill batches before
// decodes and retracts requests when decode memory runs out; all finish.
func TestSGLangPrefillFirstAndRetract(t *testing.T) {
	c := testConfig(backend.SGLang)
	c.Server.BlockSize, c.Server.KVBlocks = 1, 700
	e := mustNew(t, c)
	var tr trace
	var hs []Handle
	for i := range 4 {
		hs = append(hs, submit(t, e, Request{PromptTokens: 100, OutputTokens: 150}, time.Duration(i)*time.Microsecond, &tr))
	}
	e.Drain()
	for _, h := range hs {
		if n := len(tr.of(h, EventToken)); n != 150 {
			t.Errorf("request %d: %d tokens", h, n)
		}
	}
}
