package simrun

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// sink collects what a sweep delivers.
type sink struct {
	mu      sync.Mutex
	results []record.Result
	ends    []*record.LevelEnd
}

func (s *sink) LevelStart(load.Level) {}
func (s *sink) Result(r *record.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, *r)
}
func (s *sink) LevelEnd(_ load.Level, e *record.LevelEnd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ends = append(s.ends, e)
}

// counted returns the counted results of level key.
func (s *sink) counted(key int) []record.Result {
	var out []record.Result
	for _, r := range s.results {
		if r.Level == key && !r.Warmup {
			out = append(out, r)
		}
	}
	return out
}

func testConfig(t testing.TB, fam backend.Kind) sim.Config {
	t.Helper()
	cfg, err := sim.Spec{Backend: fam, GPU: "RTX 4090", Model: "qwen2.5-7b"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sweep runs a whole sweep in virtual time and returns what it delivered.
func sweep(t testing.TB, cfg sim.Config, m load.Method, levels []load.Level, sc workload.Scenario, seed int64) (*sink, *sim.Virtual) {
	t.Helper()
	s, err := New(cfg, Options{Seed: seed, Chat: true, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	def := sc.Defaults()
	b := workload.NewBuilder(workload.Spec{Scenario: sc, PromptTokens: def.PromptTokens, MaxTokens: def.MaxTokens, Seed: seed,
		ImageWidth: 64, ImageHeight: 64, ImageFormat: workload.PNG}, s.Client())
	ctx := context.Background()
	if err := b.Calibrate(ctx); err != nil {
		t.Fatal(err)
	}
	k := &sink{}
	sw := &load.Sweep{Run: "r", Method: m, Levels: levels, Warmup: 2, Seed: seed, Client: s.Client(), Source: b,
		Sink: k, Observe: []load.Observer{s.Observer()}, Clock: s}
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			panic("virtual-time sweep did not end: a goroutine waits on something the clock does not know")
		}
	}()
	complete, err := sw.Do(ctx)
	done <- struct{}{}
	if err != nil || !complete {
		t.Fatalf("sweep: complete %v, err %v", complete, err)
	}
	return k, s
}

func poolLevels(cs ...int) []load.Level {
	var out []load.Level
	for _, c := range cs {
		out = append(out, load.Level{Level: c, Concurrency: c, Requests: 4 * c})
	}
	return out
}

func level(k *sink, key int) document.Level { return stats.SummarizeLevel(k.counted(key)) }

// TestPoolThroughputRisesWithConcurrency: under vLLM's continuous
// batching, more clients give more tokens per second and a longer TPOT;
// every counted request succeeds with its tokens.
func TestPoolThroughputRisesWithConcurrency(t *testing.T) {
	k, _ := sweep(t, testConfig(t, backend.VLLM), load.Pool, poolLevels(1, 4, 16), workload.Chat, 1)
	prev := document.Level{}
	for _, c := range []int{1, 4, 16} {
		l := level(k, c)
		if l.Requests != 4*c || l.Errors != 0 {
			t.Fatalf("c=%d: %d requests, %d errors", c, l.Requests, l.Errors)
		}
		if prev.ThroughputTokS != nil && !(*l.ThroughputTokS > 1.5**prev.ThroughputTokS) {
			t.Errorf("c=%d: throughput %.0f tok/s, not well above %.0f", c, *l.ThroughputTokS, *prev.ThroughputTokS)
		}
		if prev.TPOTP50Ms != nil && !(*l.TPOTP50Ms >= *prev.TPOTP50Ms) {
			t.Errorf("c=%d: TPOT p50 %.2f ms below %.2f", c, *l.TPOTP50Ms, *prev.TPOTP50Ms)
		}
		prev = l
	}
	for _, r := range k.results {
		if !r.OK() || r.OutputTokens == nil || *r.OutputTokens != 256 || len(r.ChunkOffsetsNS) != 256 || r.TTFTNS == nil {
			t.Fatalf("request %d: %+v", r.Seq, r)
		}
	}
	if len(k.ends) != 3 || k.ends[2].Fields == nil || k.ends[2].Fields.PeakKVCacheUsage == nil || *k.ends[2].Fields.PeakRequestsRunning != 16 {
		t.Fatalf("level ends lack the engine's telemetry: %+v", k.ends)
	}
}

// TestSameSeedSameRecords: a sweep is a function of its seed, whatever
// the goroutines' scheduling; another seed moves the clients' delays.
func TestSameSeedSameRecords(t *testing.T) {
	run := func(seed int64) string {
		k, _ := sweep(t, testConfig(t, backend.VLLM), load.Pool, poolLevels(3, 8), workload.Text, seed)
		b, err := json.Marshal(k.results)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a := run(7)
	for range 3 {
		if b := run(7); b != a {
			t.Fatal("same seed, different records")
		}
	}
	if run(8) == a {
		t.Fatal("another seed gave the same records")
	}
}

// TestRateAchievedWhenNotSaturated: an open loop well under the server's
// capacity achieves the requested rate, and each request's scheduled time
// is when it went.
func TestRateAchievedWhenNotSaturated(t *testing.T) {
	for _, arrival := range []load.Arrival{load.Poisson, load.Constant} {
		t.Run(string(arrival), func(t *testing.T) {
			levels := []load.Level{{Level: 0, Concurrency: 64, Requests: 200, Rate: 2, Arrival: string(arrival)}}
			k, _ := sweep(t, testConfig(t, backend.VLLM), load.Rate, levels, workload.Text, 3)
			rs := k.counted(0)
			first, last := rs[0].StartNS, rs[0].StartNS
			for _, r := range rs {
				first, last = min(first, *r.ScheduledNS), max(last, *r.ScheduledNS)
				if lag := r.StartNS - *r.ScheduledNS; lag < 0 || lag > int64(50*time.Millisecond) {
					t.Fatalf("request %d went %v after it was due", r.Seq, time.Duration(lag))
				}
			}
			got := float64(len(rs)-1) / (float64(last-first) / 1e9)
			if math.Abs(got-2)/2 > 0.2 {
				t.Errorf("achieved %.2f requests/s, requested 2", got)
			}
		})
	}
}

// TestBatchAndSlots: the batch method and the slot schedulers run too:
// llama.cpp's slots cap the requests running.
func TestBatchAndSlots(t *testing.T) {
	for _, fam := range []backend.Kind{backend.VLLM, backend.SGLang, backend.LlamaCpp, backend.Ollama} {
		t.Run(string(fam), func(t *testing.T) {
			levels := []load.Level{{Level: 4, Concurrency: 4, Repeats: 2}, {Level: 8, Concurrency: 8, Repeats: 2}}
			k, s := sweep(t, testConfig(t, fam), load.Batch, levels, workload.Text, 1)
			for _, c := range []int{4, 8} {
				if rs := k.counted(c); len(rs) != 2*c {
					t.Fatalf("c=%d: %d requests, want %d", c, len(rs), 2*c)
				}
			}
			if st := s.Stats(); fam == backend.LlamaCpp && st.PeakRunning > s.Config().Server.Slots {
				t.Fatalf("%d running with %d slots", st.PeakRunning, s.Config().Server.Slots)
			}
		})
	}
}

// TestAgreesWithRunLevel: load's pool method on the virtual clock and
// sim.RunLevel (the engine-only driver that sim fit and the accuracy test
// use) predict the same levels: the same engine, the same closed loop,
// jitter of the same law (drawn differently). load counts a pool level
// from after its workers' first C requests (load.Method.Warmups: they
// start together, a burst); RunLevel counts that burst, as the documents
// it predicts did (load.Sweep.CountStartBurst), so it is given the
// burst's counted requests more and they are left out here, to hold the
// same steady loop against load's.
func TestAgreesWithRunLevel(t *testing.T) {
	for _, fam := range []backend.Kind{backend.VLLM, backend.LlamaCpp} {
		cfg := testConfig(t, fam)
		k, _ := sweep(t, cfg, load.Pool, []load.Level{{Level: 4, Concurrency: 4, Requests: 48}, {Level: 16, Concurrency: 16, Requests: 48}}, workload.Chat, 1)
		e, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const warmup = 2
		for _, c := range []int{4, 16} {
			got := level(k, c)
			lr, err := sim.RunLevel(e, sim.Workload{PromptTokens: int(*got.MeanPromptTokens + 0.5), OutputTokens: 256},
				sim.Load{Method: load.Pool, Concurrency: c, Requests: 48 + c - warmup, Warmup: warmup, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var steady []record.Result
			for _, r := range lr.Results {
				// the burst is the first C sent: the warm-ups and the
				// counted ones that started with them
				if !r.Warmup && r.Seq >= c {
					steady = append(steady, r)
				}
			}
			if len(steady) != got.Requests {
				t.Fatalf("c=%d: %d steady requests from RunLevel, %d from load", c, len(steady), got.Requests)
			}
			want := stats.SummarizeLevel(steady)
			for _, m := range []struct {
				name      string
				got, want float64
				tol       float64
			}{
				{"throughput", *got.ThroughputTokS, *want.ThroughputTokS, 0.05},
				{"TPOT p50", *got.TPOTP50Ms, *want.TPOTP50Ms, 0.05},
				{"TTFT p50", *got.TTFTP50Ms, *want.TTFTP50Ms, 0.25},
			} {
				if math.Abs(m.got-m.want) > m.tol*m.want {
					t.Errorf("%s c=%d %s: virtual executor %.2f, RunLevel %.2f (more than %.0f%% apart)", fam, c, m.name, m.got, m.want, 100*m.tol)
				}
			}
		}
	}
}

// TestConversationsAndSharedPrefixes: a multi-turn session's later turns
// send the conversation so far (the simulated answers included), so their
// prompts grow by turn; a shared system prompt is a prefix group, so with
// prefix caching TTFT falls against the same prompts without one.
func TestConversationsAndSharedPrefixes(t *testing.T) {
	s, err := New(testConfig(t, backend.VLLM), Options{Seed: 1, Chat: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runOne := func(rq *backend.Request, r *record.Result) {
		t.Helper()
		s.Client().Do(ctx, rq, r)
		if !r.OK() {
			t.Fatalf("request failed: %s %s", r.Reason, r.Error)
		}
	}
	first := backend.Request{Prompt: "one two three four", MaxTokens: 8, Answer: &strings.Builder{}}
	var r1 record.Result
	runOne(&first, &r1)
	if first.Answer.Len() == 0 || r1.PromptTokens == nil {
		t.Fatalf("first turn: answer %q, prompt %v", first.Answer.String(), r1.PromptTokens)
	}
	second := backend.Request{Prompt: "five six", MaxTokens: 8, History: []backend.Message{
		{Role: backend.User, Content: first.Prompt}, {Role: backend.Assistant, Content: first.Answer.String()}}}
	var r2 record.Result
	runOne(&second, &r2)
	if r2.PromptTokens == nil || *r2.PromptTokens <= *r1.PromptTokens+8 {
		t.Errorf("second turn's prompt %v tokens: want more than the first's %d plus its 8-token answer", r2.PromptTokens, *r1.PromptTokens)
	}
	sh := shaper{chat: true}
	if g, n := sh.sharedPrefix(&second); g != 0 || n != 0 {
		t.Errorf("a conversation is not a shared prefix group: %d, %d", g, n)
	}
	sys := backend.Request{Prompt: "x", History: []backend.Message{{Role: backend.System, Content: strings.Repeat("word ", 300)}}}
	g, n := sh.sharedPrefix(&sys)
	if g == 0 || n < 300 {
		t.Errorf("shared system prompt: group %d, %d tokens; want a group of at least 300 tokens", g, n)
	}
}

// TestCancelledBeforeWritten: a request whose context ends before its
// send delay has passed was never written; it fails as cancelled with no
// latency (E2ENS 0, as load reads a request that failed before any
// chunk), never a negative one.
func TestCancelledBeforeWritten(t *testing.T) {
	s, err := New(testConfig(t, backend.VLLM), Options{Seed: 1, Jitter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The test's goroutine keeps its token, so virtual time stands still
	// while the request's own goroutine gives its token up and waits.
	s.Busy(+1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := &record.Result{Seq: 1}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Client().Do(ctx, &backend.Request{Prompt: "hello", MaxTokens: 4}, res)
		s.Busy(-1)
	}()
	<-done
	if res.Reason != record.ReasonCanceled || res.E2ENS != 0 {
		t.Fatalf("reason %q, E2ENS %d ns; want %q and 0", res.Reason, res.E2ENS, record.ReasonCanceled)
	}
}
