package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

func TestConstantPacer(t *testing.T) {
	p := ConstantPacer{Rate: 4, Max: 3} // due at 0, 250, 500 ms
	cases := []struct {
		name    string
		elapsed time.Duration
		sent    int
		wait    time.Duration
		stop    bool
	}{
		{"first at once", 0, 0, 0, false},
		{"second due at 250ms", 100 * time.Millisecond, 1, 150 * time.Millisecond, false},
		{"late sends at once", 900 * time.Millisecond, 2, 0, false},
		{"stops at max", 0, 3, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, s := p.Pace(c.elapsed, c.sent)
			if w != c.wait || s != c.stop {
				t.Fatalf("Pace(%v, %d) = %v, %v; want %v, %v", c.elapsed, c.sent, w, s, c.wait, c.stop)
			}
		})
	}
	if _, stop := (ConstantPacer{Rate: 0, Max: 5}).Pace(0, 0); !stop {
		t.Fatal("zero rate does not stop")
	}
}

func TestPoissonPacer(t *testing.T) {
	const n, rate = 20000, 50.0
	p := NewPoissonPacer(rate, n, 7)
	if w, stop := p.Pace(0, 0); w != 0 || stop {
		t.Fatalf("first request: wait %v stop %v", w, stop)
	}
	// Same seed, same schedule; the schedule is independent of when Pace
	// is asked.
	q := NewPoissonPacer(rate, n, 7)
	for _, k := range []int{500, 3, 19999} {
		if p.Due(k) != q.Due(k) {
			t.Fatalf("due(%d) differs between equal seeds", k)
		}
	}
	if NewPoissonPacer(rate, n, 8).Due(100) == p.Due(100) {
		t.Fatal("different seeds give the same schedule")
	}
	// Gaps are exponential with mean 1/rate: mean and SD both ≈ 20 ms.
	var sum, sumsq float64
	for k := 1; k < n; k++ {
		g := (p.Due(k) - p.Due(k-1)).Seconds()
		if g < 0 {
			t.Fatalf("negative gap at %d", k)
		}
		sum += g
		sumsq += g * g
	}
	mean := sum / (n - 1)
	sd := math.Sqrt(sumsq/(n-1) - mean*mean)
	if math.Abs(mean-1/rate) > 0.03/rate || math.Abs(sd-1/rate) > 0.05/rate {
		t.Fatalf("gap mean %v sd %v, want both ≈ %v", mean, sd, 1/rate)
	}
	d := p.Due(10)
	if w, _ := p.Pace(d-time.Millisecond, 10); w != time.Millisecond {
		t.Fatalf("wait %v, want 1ms", w)
	}
	if _, stop := p.Pace(0, n); !stop {
		t.Fatal("does not stop at Max")
	}
}

// fakeClient is an in-test Client: each request takes delay (or until ctx
// ends), reports out output tokens, and the client tracks requests in
// flight. It speaks no HTTP: these tests are about scheduling only.
type fakeClient struct {
	delay    time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64
	mu       sync.Mutex
	spans    [][2]time.Time
}

func (f *fakeClient) Do(ctx context.Context, req *backend.Request, res *record.Result) {
	n := f.inFlight.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	start := time.Now()
	defer f.inFlight.Add(-1)
	t := time.NewTimer(f.delay)
	defer t.Stop()
	select {
	case <-t.C:
		out := req.MaxTokens
		res.OutputTokens = &out
		ttft := int64(f.delay / 2)
		res.TTFTNS = &ttft
		res.Status = 200
	case <-ctx.Done():
		res.Reason, res.Error = record.ReasonCanceled, "canceled"
	}
	res.E2ENS = int64(time.Since(start))
	f.mu.Lock()
	f.spans = append(f.spans, [2]time.Time{start, time.Now()})
	f.mu.Unlock()
}
func (f *fakeClient) Tokenize(context.Context, string) (int, error) { return 0, backend.ErrUnsupported }
func (f *fakeClient) Warnings() []string                            { return nil }

type fakeSource struct{}

func (fakeSource) Items(_ context.Context, seq0, n int) ([]workload.Item, error) {
	items := make([]workload.Item, n)
	for i := range items {
		items[i].Request = backend.Request{Prompt: "p", MaxTokens: 8}
	}
	return items, nil
}

// sink records what it gets and fails the test if two calls overlap.
type sink struct {
	t       *testing.T
	busy    atomic.Bool
	events  []string
	results []record.Result
	ends    []record.LevelEnd
}

func (s *sink) enter() {
	if !s.busy.CompareAndSwap(false, true) {
		s.t.Error("Sink called concurrently")
	}
}
func (s *sink) LevelStart(l Level) {
	s.enter()
	s.events = append(s.events, "start")
	s.busy.Store(false)
}
func (s *sink) Result(r *record.Result) {
	s.enter()
	s.results = append(s.results, *r)
	s.events = append(s.events, "result")
	s.busy.Store(false)
}
func (s *sink) LevelEnd(l Level, e *record.LevelEnd) {
	s.enter()
	s.ends = append(s.ends, *e)
	s.events = append(s.events, "end")
	s.busy.Store(false)
}

type observer struct {
	calls []string
	mem   float64
}

func (o *observer) LevelStart(_ context.Context, l Level) { o.calls = append(o.calls, "start") }
func (o *observer) LevelEnd(_ context.Context, l Level) *record.Observations {
	o.calls = append(o.calls, "end")
	v := 9.5
	return &record.Observations{PeakVRAMGiB: &v}
}
func (o *observer) RepeatEnd(_ context.Context, l Level, rep int) *float64 {
	o.mem++
	v := o.mem
	return &v
}

func TestPool(t *testing.T) {
	fc := &fakeClient{delay: 5 * time.Millisecond}
	s := &sink{t: t}
	obs := &observer{}
	sw := &Sweep{Run: "r", Method: Pool, Warmup: 2, Client: fc, Source: fakeSource{}, Sink: s, Observe: []Observer{obs},
		Levels: []Level{{Level: 3, Concurrency: 3, Requests: 10}, {Level: 1, Concurrency: 1, Requests: 4}}}
	complete, err := sw.Do(context.Background())
	if err != nil || !complete {
		t.Fatalf("Do = %v, %v", complete, err)
	}
	// Warm-ups: the level's concurrency where that is more than --warmup
	// (3 at c=3), else --warmup (2 at c=1).
	if len(s.results) != 3+10+2+4 {
		t.Fatalf("%d results", len(s.results))
	}
	if fc.peak.Load() != 3 {
		t.Fatalf("peak in flight %d, want 3", fc.peak.Load())
	}
	seen := map[int]bool{}
	counted := map[int]int{}
	for i, r := range s.results {
		if seen[r.Seq] {
			t.Fatalf("seq %d twice", r.Seq)
		}
		seen[r.Seq] = true
		if r.Run != "r" || r.ExpectedOutputTokens != 8 {
			t.Fatalf("result %d: %+v", i, r)
		}
		if !r.Warmup {
			counted[r.Level]++
		}
	}
	if counted[3] != 10 || counted[1] != 4 {
		t.Fatalf("counted %v", counted)
	}
	// Warm-ups come first in each level and are marked.
	if !s.results[0].Warmup || !s.results[2].Warmup || s.results[3].Warmup {
		t.Fatal("warm-ups not first")
	}
	if s.events[0] != "start" || s.events[14] != "end" || s.events[15] != "start" || s.events[len(s.events)-1] != "end" {
		t.Fatalf("events %v", s.events)
	}
	if len(s.ends) != 2 || s.ends[0].Level != 3 || *s.ends[0].Fields.PeakVRAMGiB != 9.5 {
		t.Fatalf("level ends %+v", s.ends)
	}
	if len(obs.calls) != 4 {
		t.Fatalf("observer calls %v", obs.calls)
	}
}

func TestBatchIsSimultaneousAndSequential(t *testing.T) {
	fc := &fakeClient{delay: 20 * time.Millisecond}
	s := &sink{t: t}
	obs := &observer{}
	sw := &Sweep{Method: Batch, Client: fc, Source: fakeSource{}, Sink: s, Observe: []Observer{obs},
		Levels: []Level{{Level: 4, Concurrency: 4, Repeats: 3}}}
	if complete, err := sw.Do(context.Background()); !complete || err != nil {
		t.Fatal(complete, err)
	}
	if len(s.results) != 12 || fc.peak.Load() != 4 {
		t.Fatalf("%d results, peak %d", len(s.results), fc.peak.Load())
	}
	// Each batch starts after the previous one ended completely.
	byRepeat := map[int][]record.Result{}
	for _, r := range s.results {
		byRepeat[r.Repeat] = append(byRepeat[r.Repeat], r)
	}
	var prevEnd int64
	for rep := range 3 {
		rs := byRepeat[rep]
		if len(rs) != 4 {
			t.Fatalf("repeat %d has %d requests", rep, len(rs))
		}
		var minStart, maxStart, maxEnd int64 = math.MaxInt64, 0, 0
		for _, r := range rs {
			minStart, maxStart = min(minStart, r.StartNS), max(maxStart, r.StartNS)
			maxEnd = max(maxEnd, r.StartNS+r.E2ENS)
		}
		if minStart < prevEnd {
			t.Fatalf("repeat %d started before repeat %d ended", rep, rep-1)
		}
		if maxStart-minStart > int64(10*time.Millisecond) {
			t.Fatalf("repeat %d not simultaneous: starts spread %v", rep, time.Duration(maxStart-minStart))
		}
		prevEnd = maxEnd
	}
	if g := s.ends[0].RepeatGPUMemoryMiB; len(g) != 3 || *g[2] != 3 {
		t.Fatalf("repeat GPU memory %v", g)
	}
}

func TestRateCapsInFlightAndRecordsSchedule(t *testing.T) {
	fc := &fakeClient{delay: 50 * time.Millisecond}
	s := &sink{t: t}
	sw := &Sweep{Method: Rate, Client: fc, Source: fakeSource{}, Sink: s,
		Levels: []Level{{Level: 0, Concurrency: 2, Requests: 8, Rate: 1000, Arrival: string(Constant)}}}
	if complete, err := sw.Do(context.Background()); !complete || err != nil {
		t.Fatal(complete, err)
	}
	if len(s.results) != 8 || fc.peak.Load() != 2 {
		t.Fatalf("%d results, peak %d", len(s.results), fc.peak.Load())
	}
	late := 0
	for _, r := range s.results {
		if r.ScheduledNS == nil {
			t.Fatal("no ScheduledNS")
		}
		if r.StartNS-*r.ScheduledNS > int64(20*time.Millisecond) {
			late++ // the cap of 2 in flight delays sends behind schedule
		}
	}
	if late < 4 {
		t.Fatalf("only %d of 8 requests late despite the cap", late)
	}
}

func TestRateSendsOnScheduleRegardlessOfFinishes(t *testing.T) {
	fc := &fakeClient{delay: 200 * time.Millisecond}
	s := &sink{t: t}
	sw := &Sweep{Method: Rate, Client: fc, Source: fakeSource{}, Sink: s,
		Levels: []Level{{Level: 0, Concurrency: 64, Requests: 10, Rate: 100, Arrival: string(Constant)}}}
	start := time.Now()
	sw.Do(context.Background())
	// Open loop: 10 requests at 100/s are all sent within ~100 ms although
	// each takes 200 ms; a closed loop would need 2 s.
	if el := time.Since(start); el > time.Second {
		t.Fatalf("took %v", el)
	}
	if fc.peak.Load() < 8 {
		t.Fatalf("peak in flight %d, want ≥ 8", fc.peak.Load())
	}
}

func TestCancelStopsSendingAndKeepsMeasurements(t *testing.T) {
	fc := &fakeClient{delay: time.Hour} // only cancellation ends a request
	s := &sink{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	sw := &Sweep{Method: Pool, Client: fc, Source: fakeSource{}, Sink: s, Grace: 50 * time.Millisecond,
		Levels: []Level{{Level: 2, Concurrency: 2, Requests: 100}, {Level: 4, Concurrency: 4, Requests: 100}}}
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	complete, err := sw.Do(ctx)
	if complete || err != nil {
		t.Fatalf("Do = %v, %v; want incomplete", complete, err)
	}
	if el := time.Since(start); el < 70*time.Millisecond || el > 2*time.Second {
		t.Fatalf("returned after %v; want after the 50ms grace", el)
	}
	if len(s.results) != 2 {
		t.Fatalf("%d results, want the 2 in flight", len(s.results))
	}
	for _, r := range s.results {
		if r.Reason != record.ReasonCanceled || r.Level != 2 {
			t.Fatalf("result %+v", r)
		}
	}
	if len(s.ends) != 1 {
		t.Fatalf("level ends %d, want 1 (second level never started)", len(s.ends))
	}
}

func TestGraceLetsInFlightRequestsFinish(t *testing.T) {
	fc := &fakeClient{delay: 80 * time.Millisecond}
	s := &sink{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	sw := &Sweep{Method: Pool, Client: fc, Source: fakeSource{}, Sink: s, Grace: time.Second,
		Levels: []Level{{Level: 3, Concurrency: 3, Requests: 30}}}
	time.AfterFunc(20*time.Millisecond, cancel)
	complete, _ := sw.Do(ctx)
	if complete || len(s.results) != 3 {
		t.Fatalf("complete %v, %d results", complete, len(s.results))
	}
	for _, r := range s.results {
		if !r.OK() {
			t.Fatalf("in-flight request not allowed to finish: %+v", r)
		}
	}
}

func TestParse(t *testing.T) {
	if m, err := ParseMethod("batch"); err != nil || m != Batch {
		t.Fatal(m, err)
	}
	if _, err := ParseMethod("burst"); err == nil {
		t.Fatal("burst accepted")
	}
	if a, err := ParseArrival("constant"); err != nil || a != Constant {
		t.Fatal(a, err)
	}
	if _, err := ParseArrival("uniform"); err == nil {
		t.Fatal("uniform accepted")
	}
}

type failingSource struct{ after int }

func (f *failingSource) Items(ctx context.Context, seq0, n int) ([]workload.Item, error) {
	if seq0 >= f.after {
		return nil, errors.New("tokenizer went away")
	}
	return fakeSource{}.Items(ctx, seq0, n)
}

func TestEveryStartedLevelEnds(t *testing.T) {
	s := &sink{t: t}
	sw := &Sweep{Method: Pool, Client: &fakeClient{delay: time.Millisecond}, Source: &failingSource{after: 3}, Sink: s,
		Levels: []Level{{Level: 1, Concurrency: 1, Requests: 3}, {Level: 2, Concurrency: 2, Requests: 3}}}
	complete, err := sw.Do(context.Background())
	if complete || err == nil || !strings.Contains(err.Error(), "tokenizer went away") {
		t.Fatalf("Do = %v, %v", complete, err)
	}
	starts, ends := 0, 0
	for _, e := range s.events {
		switch e {
		case "start":
			starts++
		case "end":
			ends++
		}
	}
	// The first level's 3 counted requests (one worker sends no burst to
	// warm up); the second fails preparing its warm-ups.
	if starts != 2 || ends != 2 || len(s.results) != 3 {
		t.Fatalf("events %v, %d results", s.events, len(s.results))
	}
}

// TestSweepContinues: several Do calls on one Sweep, one level each (as
// find and run --stop-when-saturated run them), share one time origin and
// never reuse a sequence number; a level's Pass numbers its Results'
// Repeat.
func TestSweepContinues(t *testing.T) {
	fc := &fakeClient{delay: 2 * time.Millisecond}
	s := &sink{t: t}
	sw := &Sweep{Run: "r", Method: Pool, Warmup: 1, Client: fc, Source: fakeSource{}, Sink: s}
	for _, l := range []Level{{Level: 2, Concurrency: 2, Requests: 4}, {Level: 2, Concurrency: 2, Requests: 4, Pass: 1}, {Level: 5, Concurrency: 5, Requests: 5}} {
		sw.Levels = []Level{l}
		if complete, err := sw.Do(context.Background()); err != nil || !complete {
			t.Fatalf("Do = %v, %v", complete, err)
		}
	}
	// Each level's warm-ups are its concurrency (more than --warmup 1).
	if sw.FirstSeq != 2+4+2+4+5+5 {
		t.Fatalf("FirstSeq %d after 22 requests", sw.FirstSeq)
	}
	seen := map[int]bool{}
	var last int64
	for i, r := range s.results {
		if seen[r.Seq] {
			t.Fatalf("seq %d twice", r.Seq)
		}
		seen[r.Seq] = true
		if i >= 6 && i < 12 && !r.Warmup && r.Repeat != 1 {
			t.Fatalf("second pass result %+v, want Repeat 1", r)
		}
		if r.StartNS < 0 {
			t.Fatalf("start %d before the sweep's origin", r.StartNS)
		}
		last = max(last, r.StartNS)
	}
	// One origin: the third Do's requests start after the first's.
	if first := s.results[0].StartNS; last <= first {
		t.Fatalf("starts %d … %d share no origin", first, last)
	}
}

// TestPoolBurstIsWarmup: a pool level's C workers start together, so its
// first C requests are a burst no later request sees: they are warm-ups
// (marked so in the records, left out of the level's summary), and every
// counted request starts after one of them ended, as a steady closed
// loop's do. --warmup beyond C adds to them; it never takes from them.
// One worker sends no burst, and gets --warmup alone.
func TestPoolBurstIsWarmup(t *testing.T) {
	for _, c := range []struct{ conc, warmup, requests, warmups int }{
		{4, 0, 8, 4}, {4, 2, 8, 4}, {2, 5, 6, 5}, {2, 0, 6, 2}, {1, 0, 3, 0}, {1, 2, 3, 2},
	} {
		t.Run(fmt.Sprintf("c=%d,warmup=%d", c.conc, c.warmup), func(t *testing.T) {
			fc := &fakeClient{delay: 4 * time.Millisecond}
			s := &sink{t: t}
			obs := &observer{}
			sw := &Sweep{Run: "r", Method: Pool, Warmup: c.warmup, Client: fc, Source: fakeSource{}, Sink: s, Observe: []Observer{obs},
				Levels: []Level{{Level: c.conc, Concurrency: c.conc, Requests: c.requests}}}
			if complete, err := sw.Do(context.Background()); err != nil || !complete {
				t.Fatalf("Do = %v, %v", complete, err)
			}
			if got := Pool.Warmups(sw.Levels[0], c.warmup); got != c.warmups {
				t.Fatalf("Warmups = %d, want %d", got, c.warmups)
			}
			firstEnd := int64(math.MaxInt64)
			warm := 0
			for _, r := range s.results {
				if r.Warmup {
					warm++
					if r.Seq >= c.warmups {
						t.Fatalf("warm-up seq %d after the counted ones", r.Seq)
					}
					firstEnd = min(firstEnd, r.StartNS+r.E2ENS)
				}
			}
			if warm != c.warmups || len(s.results) != c.warmups+c.requests {
				t.Fatalf("%d warm-ups of %d results, want %d + %d", warm, len(s.results), c.warmups, c.requests)
			}
			for _, r := range s.results {
				if c.conc > 1 && !r.Warmup && r.StartNS < firstEnd {
					t.Fatalf("counted request %d started at %d ns, before any warm-up ended (%d ns): part of the burst", r.Seq, r.StartNS, firstEnd)
				}
			}
			if fc.peak.Load() != int64(c.conc) {
				t.Fatalf("peak in flight %d, want %d", fc.peak.Load(), c.conc)
			}
			if l := stats.SummarizeLevel(s.results); l.Requests != c.requests {
				t.Fatalf("summary counts %d requests, want the %d counted", l.Requests, c.requests)
			}
			if len(obs.calls) != 2 {
				t.Fatalf("observer calls %v", obs.calls)
			}
		})
	}
}

// TestCountStartBurst: with Sweep.CountStartBurst a pool level keeps only
// --warmup before it, and its C workers' first requests, sent together,
// are counted (the protocol of documents measured from the first send,
// which sim.RunLevel reproduces).
func TestCountStartBurst(t *testing.T) {
	for _, c := range []struct{ conc, warmup, requests int }{{4, 0, 8}, {4, 2, 8}, {1, 1, 3}} {
		t.Run(fmt.Sprintf("c=%d,warmup=%d", c.conc, c.warmup), func(t *testing.T) {
			fc := &fakeClient{delay: 4 * time.Millisecond}
			s := &sink{t: t}
			sw := &Sweep{Run: "r", Method: Pool, Warmup: c.warmup, CountStartBurst: true, Client: fc, Source: fakeSource{}, Sink: s,
				Levels: []Level{{Level: c.conc, Concurrency: c.conc, Requests: c.requests}}}
			if complete, err := sw.Do(context.Background()); err != nil || !complete {
				t.Fatalf("Do = %v, %v", complete, err)
			}
			warm, countedInBurst := 0, 0
			for _, r := range s.results {
				switch {
				case r.Warmup:
					warm++
				case r.Seq < c.conc:
					countedInBurst++
				}
			}
			if warm != c.warmup || len(s.results) != c.warmup+c.requests {
				t.Fatalf("%d warm-ups of %d results, want %d + %d", warm, len(s.results), c.warmup, c.requests)
			}
			if want := max(c.conc-c.warmup, 0); c.conc > 1 && countedInBurst != want {
				t.Fatalf("%d of the burst's %d requests counted, want %d", countedInBurst, c.conc, want)
			}
		})
	}
}
