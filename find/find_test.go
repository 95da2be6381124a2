package find

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/saturation"
	"github.com/servebench/servebench/slo"
)

func fp(v float64) *float64 { return &v }

// model is a server the tests probe without a clock: TTFT p95 as a
// function of load, an interval whose half-width shrinks with the passes
// pooled, and throughput that stops rising at saturate.
type model struct {
	ttft     func(load float64) float64
	width    func(load float64, passes int) float64 // relative half-width
	saturate float64
	requests int
	probes   []Probe
}

func (m *model) Probe(_ context.Context, p Probe) (document.Level, error) {
	m.probes = append(m.probes, p)
	v := m.ttft(p.Load)
	w := 0.05 / math.Sqrt(float64(p.Pass+1))
	if m.width != nil {
		w = m.width(p.Load, p.Pass+1)
	}
	tput := 100 * min(p.Load, m.saturate)
	return document.Level{
		Concurrency: int(p.Load), Requests: m.requests * (p.Pass + 1), CIConfidence: fp(0.95),
		TTFTP95Ms: fp(v), TTFTP95MsCILow: fp(v * (1 - w)), TTFTP95MsCIHigh: fp(v * (1 + w)),
		ThroughputTokS: fp(tput), E2EP50Ms: fp(10 * p.Load),
	}, nil
}

// queueing is a 4-slot server: TTFT 50 ms up to 4 in flight, then it
// grows with the queue.
func queueing(load float64) float64 {
	if load <= 4 {
		return 50
	}
	return 50 + 40*(load-4)
}

func bounds(t *testing.T, s string) []slo.Bound {
	t.Helper()
	b, err := slo.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func run(t *testing.T, cfg Config, m *model) Answer {
	t.Helper()
	if m.requests == 0 {
		m.requests = 400
	}
	if m.saturate == 0 {
		m.saturate = math.Inf(1)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Drive(context.Background(), s, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func loads(ps []Probe) []float64 {
	var out []float64
	for _, p := range ps {
		out = append(out, p.Load)
	}
	return out
}

func eq(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSearchConcurrencyEdge(t *testing.T) {
	m := &model{ttft: queueing}
	a := run(t, Config{By: slo.ByConcurrency, Bounds: bounds(t, "ttft_p95=70ms")}, m)
	// Grow ×2, bisect, then confirm the two loads that bound the
	// interval with a second pass each.
	if want := []float64{1, 2, 4, 8, 6, 5, 4, 5}; !eq(loads(m.probes), want) {
		t.Fatalf("probes %v, want %v (grow ×2, bisect, confirm)", loads(m.probes), want)
	}
	if a.Stop != Resolved || *a.Load != 4 || *a.FirstFail != 5 || *a.LoadCILow != 4 || *a.LoadCIHigh != 4 {
		t.Fatalf("answer %+v", a)
	}
	if len(a.FailedBy) != 1 || a.FailedBy[0].Bound.Metric != slo.TTFTP95 || *a.FailedBy[0].Value != 90 {
		t.Fatalf("failed by %+v", a.FailedBy)
	}
	if a.Requests != 8*400 || a.Passes != 8 || len(a.Probes) != 6 {
		t.Fatalf("spent %d requests in %d passes", a.Requests, a.Passes)
	}
	line := a.Line()
	for _, want := range []string{"concurrency 4 meets ttft_p95 ≤ 70 ms (interval 4–4)", "5 breaks it: ttft_p95 90 ms > 70 ms", "6 probes, 8 passes, 3200 requests"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

// TestSearchResolution: for any edge, the answer is the edge and the
// bracket is within one bisection step (25% of the answer, or one).
func TestSearchResolution(t *testing.T) {
	for edge := 1.0; edge <= 300; edge++ {
		m := &model{ttft: func(load float64) float64 {
			if load <= edge {
				return 50
			}
			return 200
		}}
		a := run(t, Config{By: slo.ByConcurrency, Bounds: bounds(t, "ttft_p95=100ms")}, m)
		if a.Load == nil || *a.Load > edge || a.FirstFail == nil || *a.FirstFail <= edge {
			t.Fatalf("edge %v: answer %v, first fail %v", edge, a.Load, a.FirstFail)
		}
		if gap := *a.FirstFail - *a.Load; gap > math.Max(1, 0.25**a.Load) {
			t.Fatalf("edge %v: bracket %v–%v wider than one step", edge, *a.Load, *a.FirstFail)
		}
		if !a.Contains(edge) && *a.Load != edge {
			t.Fatalf("edge %v: interval %v–%v", edge, *a.LoadCILow, *a.LoadCIHigh)
		}
	}
}

func TestSearchRepeatsStraddlingProbe(t *testing.T) {
	// At 5 the interval holds the 70 ms bound for two passes, then not.
	m := &model{ttft: func(l float64) float64 {
		if l == 5 {
			return 75
		}
		return queueing(l)
	}, width: func(load float64, passes int) float64 {
		if load == 5 && passes < 3 {
			return 0.2
		}
		return 0.01
	}}
	a := run(t, Config{By: slo.ByConcurrency, Bounds: bounds(t, "ttft_p95=70ms")}, m)
	// 5 is measured three times; 4, which bounds the interval, is
	// confirmed; 5 already has more than one pass.
	// 5's repeats are of an undecided load (run whole); 4's
	// confirmation is of a decided one.
	want := []Probe{{1, 0, false}, {2, 0, false}, {4, 0, false}, {8, 0, false}, {6, 0, false}, {5, 0, false}, {5, 1, true}, {5, 2, true}, {4, 1, false}}
	if len(m.probes) != len(want) {
		t.Fatalf("probes %v, want %v", m.probes, want)
	}
	for i := range want {
		if m.probes[i] != want[i] {
			t.Fatalf("probes %v, want %v", m.probes, want)
		}
	}
	p5 := a.Probes[len(a.Probes)-1]
	if p5.Load != 5 || p5.Passes != 3 || p5.Uncertain || p5.Verdict != Fail || p5.Requests != 1200 {
		t.Fatalf("probe 5: %+v", p5)
	}
	if *a.LoadCILow != 4 || *a.LoadCIHigh != 4 {
		t.Fatalf("interval %v–%v, want 4–4 once 5 failed confidently", *a.LoadCILow, *a.LoadCIHigh)
	}
}

func TestSearchUncertainWidensInterval(t *testing.T) {
	// 5 passes by its value (68 ≤ 70) but its interval always straddles:
	// after 1 + 3 passes it counts as a pass, uncertain.
	m := &model{ttft: func(l float64) float64 {
		if l == 5 {
			return 68
		}
		return queueing(l)
	}, width: func(load float64, _ int) float64 {
		if load == 5 {
			return 0.2
		}
		return 0.01
	}}
	a := run(t, Config{By: slo.ByConcurrency, Bounds: bounds(t, "ttft_p95=70ms")}, m)
	// 6 loads, 3 repeats of 5, and second passes of 4 and 6, the loads
	// that bound the interval.
	if n := len(m.probes); n != 6+3+2 {
		t.Fatalf("%d probes (%v), want 6 loads, 3 repeats of 5 and 2 confirmations", n, m.probes)
	}
	if *a.Load != 5 || *a.FirstFail != 6 || *a.LoadCILow != 4 || *a.LoadCIHigh != 5 {
		t.Fatalf("answer %v, first fail %v, interval %v–%v; want 5, 6, 4–5", *a.Load, *a.FirstFail, *a.LoadCILow, *a.LoadCIHigh)
	}
	for _, want := range []float64{4, 5} {
		if !a.Contains(want) {
			t.Errorf("interval does not hold %v", want)
		}
	}
	if a.Contains(6) || a.Contains(3) {
		t.Error("interval holds 6 or 3")
	}
}

func TestSearchSaturation(t *testing.T) {
	// A generous budget; throughput stops rising at 8.
	m := &model{ttft: func(l float64) float64 { return 10 * l }, saturate: 8}
	a := run(t, Config{By: slo.ByConcurrency, Bounds: bounds(t, "ttft_p95=10s")}, m)
	if want := []float64{1, 2, 4, 8, 16, 16}; !eq(loads(m.probes), want) {
		t.Fatalf("probes %v, want %v", loads(m.probes), want)
	}
	if a.Stop != Saturated || *a.SaturatedAt != 16 || a.Saturation.Reason != saturation.ThroughputFlat || *a.Load != 16 || a.LoadCIHigh != nil || a.FirstFail != nil {
		t.Fatalf("answer %+v", a)
	}
	if !strings.Contains(a.Line(), "the server saturated there") {
		t.Errorf("line %q", a.Line())
	}
}

func TestSearchEnds(t *testing.T) {
	t.Run("first load fails", func(t *testing.T) {
		a := run(t, Config{Bounds: bounds(t, "ttft_p95=10ms")}, &model{ttft: queueing})
		if a.Stop != FirstLoadFails || a.Load != nil || *a.FirstFail != 1 || !strings.Contains(a.Line(), "no concurrency tried meets") {
			t.Fatalf("answer %+v: %s", a, a.Line())
		}
	})
	t.Run("max load", func(t *testing.T) {
		m := &model{ttft: queueing}
		a := run(t, Config{Bounds: bounds(t, "ttft_p95=1h"), Max: 12}, m)
		if want := []float64{1, 2, 4, 8, 12, 12}; !eq(loads(m.probes), want) || a.Stop != MaxLoad || *a.Load != 12 {
			t.Fatalf("probes %v, answer %+v", loads(m.probes), a)
		}
	})
	t.Run("out of time", func(t *testing.T) {
		s, _ := New(Config{Bounds: bounds(t, "ttft_p95=70ms")})
		m := &model{ttft: queueing, requests: 400, saturate: math.Inf(1)}
		n := 0
		a, err := Drive(context.Background(), s, m, func() bool { n++; return n > 3 })
		if err != nil || a.Stop != OutOfTime || len(m.probes) != 3 || *a.Load != 4 {
			t.Fatalf("err %v, probes %v, answer %+v", err, m.probes, a)
		}
	})
	t.Run("probe error", func(t *testing.T) {
		s, _ := New(Config{Bounds: bounds(t, "ttft_p95=70ms")})
		a, err := Drive(context.Background(), s, failing{}, nil)
		if err == nil || a.Stop != Interrupted {
			t.Fatalf("err %v, answer %+v", err, a)
		}
	})
}

type failing struct{}

func (failing) Probe(context.Context, Probe) (document.Level, error) {
	return document.Level{}, errors.New("server gone")
}

func TestSearchRate(t *testing.T) {
	// The server keeps up to 37.3 req/s.
	m := &model{ttft: func(r float64) float64 {
		if r <= 37.3 {
			return 50
		}
		return 500
	}}
	a := run(t, Config{By: slo.ByRate, Bounds: bounds(t, "ttft_p95=100ms")}, m)
	if a.Load == nil || *a.Load > 37.3 || *a.FirstFail <= 37.3 || *a.FirstFail-*a.Load > 0.25**a.Load {
		t.Fatalf("answer %v first fail %v", a.Load, a.FirstFail)
	}
	if !a.Contains(37.3) || a.Contains(*a.FirstFail) {
		t.Fatalf("interval %v–%v (exclusive) should hold 37.3 and not the first fail", *a.LoadCILow, *a.LoadCIHigh)
	}
	if !strings.Contains(a.Line(), "req/s") {
		t.Errorf("line %q", a.Line())
	}
}

func TestConfigErrors(t *testing.T) {
	b := bounds(t, "ttft_p95=1s")
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no SLO bounds"},
		{Config{Bounds: b, By: "load"}, `by "load"`},
		{Config{Bounds: b, Start: 1.5}, "whole concurrency"},
		{Config{Bounds: b, Start: -1}, "positive load"},
		{Config{Bounds: b, Start: 8, Max: 4}, "at least the start"},
		{Config{Bounds: b, Growth: 1}, "factor above 1"},
		{Config{Bounds: b, Resolution: 0.5}, "at most 0.25"},
		{Config{Bounds: b, MaxRepeats: -2}, "max repeats"},
	}
	for _, c := range cases {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestSearchSpendsLessThanSweep compares the requests of the search,
// confirmations included, with those of the sweep over the same range at
// the same resolution: a level at every step (one concurrency, or 25%)
// from its first load to the highest it measured. Over 1–8 (an edge at 4)
// the two confirmations make them equal; from an edge at 12 on the search
// spends less, the more so the wider the range.
func TestSearchSpendsLessThanSweep(t *testing.T) {
	for _, edge := range []float64{12, 40, 300} {
		m := &model{ttft: func(l float64) float64 {
			if l <= edge {
				return 50
			}
			return 200
		}}
		a := run(t, Config{Bounds: bounds(t, "ttft_p95=100ms")}, m)
		top := 0.0
		for _, p := range a.Probes {
			top = max(top, p.Load)
		}
		levels := 0
		for c := 1.0; c <= top; c += math.Max(1, math.Floor(0.25*c)) {
			levels++
		}
		if sweep := levels * 400; a.Requests >= sweep {
			t.Errorf("edge %v: search %d requests, sweep of %d levels up to %v: %d", edge, a.Requests, levels, top, sweep)
		}
	}
}

func TestNoRepeats(t *testing.T) {
	m := &model{ttft: queueing, width: func(float64, int) float64 { return 0.5 }}
	a := run(t, Config{Bounds: bounds(t, "ttft_p95=70ms"), MaxRepeats: Repeats(0)}, m)
	if len(m.probes) != 6 || a.Passes != 6 {
		t.Fatalf("probes %v: want no repeats", m.probes)
	}
	for _, p := range a.Probes {
		// ±50% holds 70 ms from 50 ms (1, 2, 4) to 130 ms (6); not 210 (8).
		if p.Uncertain != (p.Load != 8) {
			t.Fatalf("probe %v: uncertain %v", p.Load, p.Uncertain)
		}
	}
	// No load passed confidently; 8 is the first confident fail.
	if a.LoadCILow != nil || *a.LoadCIHigh != 7 || *a.Load != 4 || !strings.Contains(a.Line(), "(interval ≤ 7)") {
		t.Fatalf("answer %v, interval %v–%v: %s", *a.Load, a.LoadCILow, a.LoadCIHigh, a.Line())
	}
}

// TestConfirmationMovesTheBracket: the load the answer rested on fails
// when measured again (the machine got slower), so the search takes the
// bracket back below it instead of answering on one pass.
func TestConfirmationMovesTheBracket(t *testing.T) {
	passes := map[float64]int{}
	m := &model{ttft: func(l float64) float64 {
		passes[l]++
		if l == 6 && passes[l] == 1 {
			return 60 // passes the first time
		}
		return queueing(l) // 6: 130 ms
	}}
	a := run(t, Config{Bounds: bounds(t, "ttft_p95=70ms")}, m)
	// 1, 2, 4, 8; 6 passes, 7 fails; confirming 6 turns it to a fail;
	// the bracket is 4–6 again: 5 fails; 4 and 5 are confirmed.
	if want := []float64{1, 2, 4, 8, 6, 7, 6, 5, 4, 5}; !eq(loads(m.probes), want) {
		t.Fatalf("probes %v, want %v", loads(m.probes), want)
	}
	if *a.Load != 4 || *a.FirstFail != 5 || *a.LoadCILow != 4 || *a.LoadCIHigh != 4 {
		t.Fatalf("answer %v, first fail %v, interval %v–%v", *a.Load, *a.FirstFail, *a.LoadCILow, *a.LoadCIHigh)
	}
}

// onesided probes a 4-slot server whose every TTFT is under 100 ms up to
// 4 in flight and over it beyond, per requests a pass, with the one-sided
// bounds stats gives a p99: no upper bound below slo.DecisiveRequests
// requests, a lower one beyond the bound at once.
type onesided struct {
	per, need int
	probes    []Probe
}

func (o *onesided) Probe(_ context.Context, p Probe) (document.Level, error) {
	o.probes = append(o.probes, p)
	n := o.per * (p.Pass + 1)
	b := document.OneSidedBounds{N: n, Low: fp(40), Min: fp(30), Max: fp(60)}
	v := 55.0
	if p.Load > 4 {
		v, b.Low, b.Min, b.Max = 150, fp(140), fp(130), fp(170)
	}
	if n >= o.need {
		b.High = fp(*b.Max)
	}
	return document.Level{Concurrency: int(p.Load), Requests: n, CIConfidence: fp(0.95), TTFTP99Ms: fp(v),
		TTFTP99MsCILow: b.Low, ThroughputTokS: fp(100 * p.Load),
		OneSided: map[document.Figure]document.OneSidedBounds{document.FigTTFTP99: b}}, nil
}

// TestSearchExtendsUntilDecided: a p99 bound at 72 requests a pass, with
// every value under it: its one-sided upper bound needs 299 requests, so
// a passing load is measured until its pooled passes reach them, past
// the three repeats, and its verdict is then decided; a failing load is
// decided at once. Without repeats it stays undecided.
func TestSearchExtendsUntilDecided(t *testing.T) {
	b := bounds(t, "ttft_p99=100ms")
	need := slo.DecisiveRequests(b, 0.95)
	if need != 299 {
		t.Fatalf("DecisiveRequests = %d, want 299 (0.99²⁹⁹ < 0.05 ≤ 0.99²⁹⁸)", need)
	}
	o := &onesided{per: 72, need: need}
	s, err := New(Config{By: slo.ByConcurrency, Bounds: b})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Drive(context.Background(), s, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	passes := (need + o.per - 1) / o.per // 5
	for _, p := range a.Probes {
		switch {
		case p.Uncertain:
			t.Errorf("load %v left undecided after %d passes", p.Load, p.Passes)
		case p.Verdict == Pass && (p.Passes != passes || p.Requests < need):
			t.Errorf("passing load %v: %d passes, %d requests; want %d passes to reach %d", p.Load, p.Passes, p.Requests, passes, need)
		case p.Verdict == Fail && p.Passes > 2:
			t.Errorf("failing load %v measured %d times", p.Load, p.Passes)
		}
	}
	if *a.Load != 4 {
		t.Fatalf("answer %v, want 4", *a.Load)
	}
	o = &onesided{per: 72, need: need}
	s, _ = New(Config{By: slo.ByConcurrency, Bounds: b, MaxRepeats: NoRepeats})
	a, _ = Drive(context.Background(), s, o, nil)
	if p := a.Probes[0]; p.Passes != 1 || !p.Uncertain {
		t.Fatalf("without repeats: %+v", p)
	}
}
