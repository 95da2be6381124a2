package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
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
