package slo

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/stats"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want []Bound
	}{
		{"ttft_p95=1.5s,tpot_p50=50ms", []Bound{{TTFTP95, 1500}, {TPOTP50, 50}}},
		{"ttft_p50=250ms", []Bound{{TTFTP50, 250}}},
		{"throughput_min=500", []Bound{{ThroughputMin, 500}}},
		{"throughput_min=500 tok/s", []Bound{{ThroughputMin, 500}}},
		{"error_rate=0.01", []Bound{{ErrorRate, 0.01}}},
		{"error_rate=2%", []Bound{{ErrorRate, 0.02}}},
		{"e2e_p99=2s,goodput=90%", []Bound{{E2EP99, 2000}, {Goodput, 0.9}}},
		{"tpot_p95=20ms,ttft_p99=3s", []Bound{{TPOTP95, 20}, {TTFTP99, 3000}}},
	}
	for _, tc := range good {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("Parse(%q) = %v", tc.in, got)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Parse(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
	bad := []struct{ in, want string }{
		{"", "empty SLO"},
		{"ttft_p95", `want metric=value`},
		{"ttft_p90=1s", `unknown metric "ttft_p90"`},
		{"goodput=0.9", "goodput needs a latency bound"},
		{"goodput=1.5,ttft_p95=1s", "fraction 0–1"},
		{"ttft_p95=1.5", "want a duration with a unit"},
		{"ttft_p95=-1s", "positive duration"},
		{"ttft_p95=1s,ttft_p95=2s", "given twice"},
		{"throughput_min=fast", "want tokens per second"},
		{"error_rate=150%", "fraction 0–1"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParse checks that Parse never panics and that accepted bounds are
// finite and non-negative.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ttft_p95=1.5s,tpot_p50=50ms", "error_rate=1%", "throughput_min=1e309", "a=b=c,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := Parse(s)
		if err != nil {
			return
		}
		for _, b := range bs {
			if b.Value < 0 || b.Value != b.Value {
				t.Fatalf("Parse(%q) accepted %v", s, b)
			}
		}
	})
}

func fp(v float64) *float64 { return &v }

// level is a sweep level with TTFT p95 v and its interval.
func level(c int, v, lo, hi float64) document.Level {
	req := 400
	return document.Level{Concurrency: c, Requests: req, ThroughputTokS: fp(100 * float64(c)), CIConfidence: fp(0.95),
		TTFTP95Ms: fp(v), TTFTP95MsCILow: fp(lo), TTFTP95MsCIHigh: fp(hi)}
}

func TestJudge(t *testing.T) {
	b, _ := Parse("ttft_p95=100ms")
	cases := []struct {
		name      string
		l         document.Level
		pass      bool
		uncertain bool
	}{
		{"clear pass", level(4, 80, 70, 90), true, false},
		{"clear fail", level(4, 120, 110, 130), false, false},
		{"pass, interval straddles", level(4, 95, 85, 105), true, true},
		{"fail, interval straddles", level(4, 105, 95, 115), false, true},
		{"interval up to the bound holds", level(4, 95, 85, 100), true, false},
		{"interval from the bound", level(4, 105, 100, 115), false, true},
		{"no intervals: exact", func() document.Level {
			l := level(4, 95, 0, 0)
			l.CIConfidence, l.TTFTP95MsCILow, l.TTFTP95MsCIHigh = nil, nil, nil
			return l
		}(), true, false},
		{"unbounded upper end", func() document.Level { l := level(4, 95, 85, 0); l.TTFTP95MsCIHigh = nil; return l }(), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(Of(&c.l), b)
			if j.Pass() != c.pass || (len(j.Uncertain) > 0) != c.uncertain || len(j.Checks) != 1 || j.Checks[0].Holds != c.pass {
				t.Fatalf("Judge = %+v", j)
			}
		})
	}
	// A floor: throughput ≥ 350 tok/s with its interval.
	tb, _ := Parse("throughput_min=350")
	l := level(4, 0, 0, 0)
	l.ThroughputTokSCILow, l.ThroughputTokSCIHigh = fp(380), fp(420)
	if j := Judge(Of(&l), tb); !j.Pass() || len(j.Uncertain) != 0 {
		t.Fatalf("throughput floor %+v", j)
	}
	l.ThroughputTokSCILow = fp(340)
	if j := Judge(Of(&l), tb); !j.Pass() || len(j.Uncertain) != 1 {
		t.Fatalf("throughput floor straddled %+v", j)
	}
	// Goodput: the fraction of good requests must reach the bound.
	gb, _ := Parse("ttft_p95=100ms,goodput=0.9")
	l = level(4, 80, 70, 90)
	l.GoodputFraction, l.GoodputFractionCILow, l.GoodputFractionCIHigh = fp(0.85), fp(0.8), fp(0.88)
	if j := Judge(Of(&l), gb); j.Pass() || j.Broken[0].Bound.Metric != Goodput || !strings.Contains(j.Broken[0].String(), "goodput 85% < 90%") {
		t.Fatalf("goodput %+v", j)
	}
}

func TestTextBudgetMinRequests(t *testing.T) {
	b, err := Parse("ttft_p95=1.5s, tpot_p50=50ms,ttft_p50=800ms,e2e_p99=4s,goodput=95%")
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(b); got != "ttft_p95=1500ms,tpot_p50=50ms,ttft_p50=800ms,e2e_p99=4000ms,goodput=0.95" {
		t.Fatalf("Text = %q", got)
	}
	again, err := Parse(Text(b))
	if err != nil || Text(again) != Text(b) {
		t.Fatalf("Text does not parse back: %v", err)
	}
	bud, ok := GoodputBudget(b)
	if !ok || *bud.TTFTMs != 1500 || *bud.TPOTMs != 50 || *bud.E2EMs != 4000 {
		t.Fatalf("budget %+v: want the loosest bound of each quantity", bud)
	}
	if _, ok := GoodputBudget([]Bound{{ThroughputMin, 5}}); ok {
		t.Fatal("a throughput floor is a per-request budget")
	}
	for s, want := range map[string]int{"ttft_p95=1s": 400, "ttft_p50=1s": 40, "e2e_p99=1s,tpot_p50=1ms": 2000, "throughput_min=5": 0} {
		b, _ := Parse(s)
		if got := MinRequests(b); got != want {
			t.Errorf("MinRequests(%s) = %d, want %d", s, got, want)
		}
	}
}

// sampled is a level whose TTFT p95 and p99 come from the values vs (ms):
// the value, the two-sided interval and the one-sided bounds as
// stats computes them from the order statistics.
func sampled(vs []float64) document.Level {
	s := slices.Clone(vs)
	slices.Sort(s)
	l := document.Level{Concurrency: 1, Requests: len(s), CIConfidence: fp(0.95), OneSided: map[document.Figure]document.OneSidedBounds{}}
	for _, f := range []struct {
		fig document.Figure
		p   float64
	}{{document.FigTTFTP95, 95}, {document.FigTTFTP99, 99}} {
		v, _ := stats.Percentile(s, f.p)
		two, one := stats.QuantileCI(s, f.p, 0.95), stats.OneSidedCI(s, f.p, 0.95)
		spec := document.LookupFigure(f.fig)
		lo, hi := l.IntervalFields(f.fig)
		*lo, *hi = two.Low, two.High
		switch f.fig {
		case document.FigTTFTP95:
			l.TTFTP95Ms = fp(v)
		default:
			l.TTFTP99Ms = fp(v)
		}
		if spec.Value(&l) == nil {
			panic("figure not set")
		}
		l.OneSided[f.fig] = document.OneSidedBounds{N: len(s), Low: one.Low, High: one.High, Min: fp(s[0]), Max: fp(s[len(s)-1])}
	}
	return l
}

// spread is n values evenly from lo to hi.
func spread(n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(max(n-1, 1))
	}
	return out
}

// TestJudgeOneSided: a percentile's verdict is decided by its one-sided
// 95% bounds: it holds once the upper bound is within the budget, which
// for values all under it takes stats.BoundSampleSize requests (59 for a
// p95, 299 for a p99), and breaks once the lower bound is beyond it.
// Undecided for want of requests, the note says what is known, and never
// that an interval straddles when every value lies on one side.
func TestJudgeOneSided(t *testing.T) {
	p95 := stats.BoundSampleSize(0.95, 0.95, true)
	p99 := stats.BoundSampleSize(0.99, 0.95, true)
	if p95 != 59 || p99 != 299 {
		t.Fatalf("one-sided sample sizes %d, %d: want 59 and 299 (0.95⁵⁹ < 0.05, 0.99²⁹⁹ < 0.05)", p95, p99)
	}
	oneOver := append(spread(p95-2, 10, 50), 150)
	cases := []struct {
		name      string
		slo       string
		vs        []float64
		pass      bool
		uncertain bool
		note      string // "" for none; else a substring the note holds
	}{
		{"p95 all under, enough requests", "ttft_p95=100ms", spread(p95, 10, 90), true, false, ""},
		{"p95 all under, one request short", "ttft_p95=100ms", spread(p95-1, 10, 90), true, true,
			fmt.Sprintf("ttft_p95 ≤ 100 ms: all %d requests under 90 ms (94%% confidence; %d requests give 95%%)", p95-1, p95)},
		{"p95 all under, 48 requests", "ttft_p95=1s", spread(48, 100, 210), true, true,
			"ttft_p95 ≤ 1000 ms: all 48 requests under 210 ms (91% confidence; 59 requests give 95%)"},
		{"p99 all under, enough requests", "ttft_p99=100ms", spread(p99, 10, 90), true, false, ""},
		{"p99 all under, one request short", "ttft_p99=100ms", spread(p99-1, 10, 90), true, true,
			fmt.Sprintf("all %d requests under 90 ms (94%% confidence; %d requests give 95%%)", p99-1, p99)},
		{"p95 all over: breaks at once", "ttft_p95=100ms", spread(10, 200, 300), false, false, ""},
		{"p95 holds by value, one request over, too few for a bound", "ttft_p95=100ms", oneOver, true, true,
			fmt.Sprintf("%d requests give no 95%% upper bound on a p95 (%d would)", p95-1, p95)},
		{"p95 values both sides: straddles", "ttft_p95=100ms", spread(400, 50, 102), true, true, ""},
		{"p95 breaks, lower bound beyond", "ttft_p95=100ms", spread(400, 20, 200), false, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Parse(c.slo)
			if err != nil {
				t.Fatal(err)
			}
			l := sampled(c.vs)
			j := Judge(Of(&l), b)
			ch := j.Checks[0]
			if j.Pass() != c.pass || (len(j.Uncertain) > 0) != c.uncertain || ch.Straddles != c.uncertain {
				t.Fatalf("pass %v uncertain %v, want %v %v: %+v", j.Pass(), j.Uncertain, c.pass, c.uncertain, ch)
			}
			if (c.note == "") != (ch.Note == "") || !strings.Contains(ch.Note, c.note) {
				t.Fatalf("note %q, want %q", ch.Note, c.note)
			}
		})
	}
}

// TestJudgementUndecided: a level is undecided while some bound straddles
// and none is decisively broken; one decisively broken bound decides the
// level (it breaks), whatever the others.
func TestJudgementUndecided(t *testing.T) {
	holds := Check{Holds: true}
	broken := Check{}
	straddlesOver := Check{Straddles: true}
	straddlesUnder := Check{Holds: true, Straddles: true}
	for _, tc := range []struct {
		name   string
		checks []Check
		want   bool
	}{
		{"all hold", []Check{holds, holds}, false},
		{"one straddles, measured under", []Check{holds, straddlesUnder}, true},
		{"one straddles, measured over", []Check{straddlesOver, holds}, true},
		{"one broken decisively, one straddles", []Check{straddlesUnder, broken}, false},
		{"broken decisively", []Check{broken}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Judgement{Checks: tc.checks}
			for _, c := range tc.checks {
				if c.Straddles {
					j.Uncertain = append(j.Uncertain, TTFTP95)
				}
			}
			if got := j.Undecided(); got != tc.want {
				t.Errorf("Undecided() = %v, want %v", got, tc.want)
			}
		})
	}
}
