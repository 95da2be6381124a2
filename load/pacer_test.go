package load

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/workload"
)

// gapStats is the mean and coefficient of variation of a schedule's gaps
// between its first n due times, in seconds.
func gapStats(p Pacer, n int) (mean, cv float64) {
	var sum, sumsq float64
	for k := 1; k < n; k++ {
		g := (p.Due(k) - p.Due(k-1)).Seconds()
		sum += g
		sumsq += g * g
	}
	mean = sum / float64(n-1)
	sd := math.Sqrt(sumsq/float64(n-1) - mean*mean)
	return mean, sd / mean
}

// TestGammaPacer: with a fixed seed, 40,000 gaps have mean 1/rate and
// coefficient of variation 1/√K within a few percent, for bursty (K <
// 1), Poisson (K = 1) and even (K > 1) schedules; the same seed gives the
// same schedule.
func TestGammaPacer(t *testing.T) {
	const n, rate = 40000, 20.0
	for _, k := range []float64{0.25, 0.5, 1, 4, 16} {
		t.Run("K="+strconv.FormatFloat(k, 'g', -1, 64), func(t *testing.T) {
			p := NewGammaPacer(rate, k, n, 3)
			if p.Due(0) != 0 {
				t.Fatalf("first request due at %v", p.Due(0))
			}
			mean, cv := gapStats(p, n)
			if math.Abs(mean*rate-1) > 0.03 {
				t.Errorf("mean gap %.4f s, want %.4f", mean, 1/rate)
			}
			if want := 1 / math.Sqrt(k); math.Abs(cv-want)/want > 0.05 {
				t.Errorf("CV %.3f, want %.3f", cv, want)
			}
			q := NewGammaPacer(rate, k, n, 3)
			for _, i := range []int{39999, 7, 500} {
				if p.Due(i) != q.Due(i) {
					t.Fatalf("due(%d) differs between equal seeds", i)
				}
			}
			if NewGammaPacer(rate, k, n, 4).Due(100) == p.Due(100) {
				t.Fatal("different seeds give the same schedule")
			}
			if _, stop := p.Pace(0, n); !stop {
				t.Fatal("does not stop at Max")
			}
		})
	}
	if _, stop := NewGammaPacer(0, 1, 5, 1).Pace(0, 0); !stop {
		t.Fatal("rate 0 does not stop")
	}
}

// TestRampPacer: the number of requests due by t follows Λ(t), the
// integral of the ramped rate, within three standard deviations of the
// Poisson count; after the ramp the gaps have mean 1/to.
func TestRampPacer(t *testing.T) {
	const from, to = 2.0, 50.0
	const ramp = 20 * time.Second
	p := NewRampPacer(from, to, ramp, 1, 5000, 9)
	Lambda := func(sec float64) float64 {
		T := ramp.Seconds()
		if sec <= T {
			return from*sec + (to-from)*sec*sec/(2*T)
		}
		return from*T + (to-from)*T/2 + to*(sec-T)
	}
	dueBy := func(d time.Duration) int {
		n := 0
		for k := 0; p.Due(k) < d; k++ {
			n++
		}
		return n
	}
	for _, sec := range []float64{5, 10, 20, 40} {
		want := Lambda(sec) + 1 // request 0 is due at once
		got := float64(dueBy(time.Duration(sec * float64(time.Second))))
		if math.Abs(got-want) > 3*math.Sqrt(want)+1 {
			t.Errorf("by %vs: %v requests due, want %.0f ± %.0f", sec, got, want, 3*math.Sqrt(want))
		}
	}
	// Past the ramp it is a Poisson process at to.
	first := dueBy(ramp)
	var sum float64
	const m = 2000
	for k := first; k < first+m; k++ {
		sum += (p.Due(k+1) - p.Due(k)).Seconds()
	}
	if mean := sum / m; math.Abs(mean*to-1) > 0.08 {
		t.Errorf("mean gap after the ramp %.4f s, want %.4f", mean, 1/to)
	}
	// Gaps shrink along the ramp: the first tenth is sparser than the last.
	early, late := dueBy(2*time.Second), dueBy(20*time.Second)-dueBy(18*time.Second)
	if early*5 > late {
		t.Errorf("%d requests in the ramp's first 2 s, %d in its last 2 s", early, late)
	}
	// A ramp down and a ramp from zero are monotone schedules too.
	for _, q := range []Pacer{NewRampPacer(40, 5, 10*time.Second, 1, 300, 1), NewRampPacer(0, 10, 10*time.Second, 2, 300, 1)} {
		for k := 1; k < 300; k++ {
			if q.Due(k) < q.Due(k-1) {
				t.Fatalf("due times go back at %d", k)
			}
		}
	}
}

// TestRampWarpInvertsLambda checks the closed form: warp(Λ(t)) = t.
func TestRampWarpInvertsLambda(t *testing.T) {
	for _, c := range []struct{ from, to, T float64 }{{2, 50, 20}, {40, 5, 10}, {0, 10, 4}, {3, 3.0001, 1}} {
		w := rampWarp(c.from, c.to, c.T)
		a := (c.to - c.from) / (2 * c.T)
		for _, sec := range []float64{0.001, 0.5, 1, c.T / 2, c.T, c.T + 3} {
			var s float64
			if sec <= c.T {
				s = c.from*sec + a*sec*sec
			} else {
				s = c.from*c.T + a*c.T*c.T + c.to*(sec-c.T)
			}
			if got := w(s).Seconds(); math.Abs(got-sec) > 1e-6 {
				t.Errorf("%+v: warp(Λ(%v)) = %v", c, sec, got)
			}
		}
	}
}

func TestDurationAndCount(t *testing.T) {
	cases := []struct {
		name string
		l    Level
		want int
	}{
		{"constant 4/s for 10 s", Level{Rate: 4, Arrival: string(Constant), DurationSeconds: 10}, 40},
		{"requests end first", Level{Rate: 4, Arrival: string(Constant), Requests: 7, DurationSeconds: 10}, 7},
		{"duration ends first", Level{Rate: 4, Arrival: string(Constant), Requests: 700, DurationSeconds: 2.1}, 9},
		{"no duration", Level{Rate: 4, Arrival: string(Constant), Requests: 12}, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, ok := Count(NewPacer(c.l, 1), 1_000_000)
			if !ok || n != c.want {
				t.Fatalf("Count = %d, %v; want %d", n, ok, c.want)
			}
		})
	}
	// A Poisson level of 600 s at 5/s holds about 3,000 requests, all due
	// before the end, and its pacer stops at the count it gave.
	l := Level{Rate: 5, DurationSeconds: 600}
	p := NewPacer(l, 2)
	n, ok := Count(p, 1_000_000)
	if !ok || math.Abs(float64(n)-3000) > 3*math.Sqrt(3000) {
		t.Fatalf("Poisson 600 s at 5/s: %d requests", n)
	}
	if p.Due(n-1) >= 600*time.Second || p.Due(n) < 600*time.Second {
		t.Fatalf("last due %v, next %v", p.Due(n-1), p.Due(n))
	}
	if _, stop := p.Pace(p.Due(n-1), n-1); stop {
		t.Fatal("stops before the last request")
	}
	if _, ok := Count(NewPacer(Level{Rate: 5, DurationSeconds: 600}, 2), 10); ok {
		t.Fatal("Count reports done before its limit")
	}
}

func TestTracePacer(t *testing.T) {
	p := TracePacer{Offsets: []time.Duration{0, 0, 300 * time.Millisecond, time.Second}}
	cases := []struct {
		elapsed time.Duration
		sent    int
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false}, {0, 1, 0, false}, {100 * time.Millisecond, 2, 200 * time.Millisecond, false},
		{2 * time.Second, 3, 0, false}, {0, 4, 0, true},
	}
	for _, c := range cases {
		if w, s := p.Pace(c.elapsed, c.sent); w != c.wait || s != c.stop {
			t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", c.elapsed, c.sent, w, s, c.wait, c.stop)
		}
	}
}

// traceSource gives items due at the given offsets.
type traceSource struct{ due []time.Duration }

func (s traceSource) Items(_ context.Context, seq0, n int) ([]workload.Item, error) {
	items := make([]workload.Item, n)
	for i := range items {
		items[i] = workload.Item{Request: backend.Request{Prompt: "p", MaxTokens: 4}, Due: s.due[i], Class: "text"}
	}
	return items, nil
}

func (s traceSource) WarmupItems(_ context.Context, seq0, n int) ([]workload.Item, error) {
	return fakeSource{}.Items(context.Background(), seq0, n)
}

// TestTraceLevelInVirtualTime replays a trace's times in virtual time:
// each request starts exactly at its due time; warm-ups come from
// WarmupItems and do not use up rows.
func TestTraceLevelInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		due := []time.Duration{0, 0, 250 * time.Millisecond, 2 * time.Second, 2*time.Second + time.Millisecond}
		s := &sink{t: t}
		sw := &Sweep{Run: "r", Method: Rate, Warmup: 2, Client: &fakeClient{delay: 100 * time.Millisecond}, Source: traceSource{due: due}, Sink: s,
			Levels: []Level{{Level: 0, Concurrency: 8, Requests: len(due), Arrival: string(Trace)}}}
		if complete, err := sw.Do(context.Background()); !complete || err != nil {
			t.Fatal(complete, err)
		}
		var counted []record.Result
		for _, r := range s.results {
			if !r.Warmup {
				counted = append(counted, r)
			}
		}
		slices.SortFunc(counted, func(a, b record.Result) int { return a.Seq - b.Seq })
		if len(counted) != len(due) || counted[0].Seq != 2 {
			t.Fatalf("%d counted results, first seq %d", len(counted), counted[0].Seq)
		}
		levelStart := *counted[0].ScheduledNS
		for k, r := range counted {
			if *r.ScheduledNS-levelStart != int64(due[k]) || r.StartNS != *r.ScheduledNS || r.Class != "text" {
				t.Errorf("request %d: scheduled %d, start %d, class %q; want due %v", k, *r.ScheduledNS-levelStart, r.StartNS-levelStart, r.Class, due[k])
			}
		}
	})
}

// TestClientLagInVirtualTime: a rate of 10/s with one slot and requests
// that take 300 ms cannot keep its schedule; request k is sent 200·k ms
// late, and the records say so (StartNS − ScheduledNS).
func TestClientLagInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{t: t}
		sw := &Sweep{Run: "r", Method: Rate, Client: &fakeClient{delay: 300 * time.Millisecond}, Source: fakeSource{}, Sink: s,
			Levels: []Level{{Level: 0, Concurrency: 1, Requests: 6, Rate: 10, Arrival: string(Constant)}}}
		sw.Do(context.Background())
		slices.SortFunc(s.results, func(a, b record.Result) int { return a.Seq - b.Seq })
		for k, r := range s.results {
			if lag := time.Duration(r.StartNS - *r.ScheduledNS); lag != time.Duration(k)*200*time.Millisecond {
				t.Errorf("request %d sent %v late, want %v", k, lag, time.Duration(k)*200*time.Millisecond)
			}
		}
	})
}
