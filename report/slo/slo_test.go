package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report/reporttest"

	"github.com/servebench/servebench/report"
)

// loadSeed reads a reference document of examples/ as a report set.
func loadSeed(t testing.TB, name string) *report.Set { return reporttest.LoadSeed(t, name) }

// TestSeedAnswer is the acceptance answer: with ttft_p95 ≤ 1.5 s the best
// chat run of the multi-backend sweep is vllm-fp8kv-chat at concurrency 16
// with 1209.9 tok/s, and ollama-q4km holds only concurrency 1.
func TestSeedAnswer(t *testing.T) {
	bounds, err := Parse("ttft_p95=1.5s")
	if err != nil {
		t.Fatal(err)
	}
	a := Evaluate(loadSeed(t, "multi-backend-sweep.json"), bounds)
	var chat *BestAnswer
	for i := range a.Best {
		if a.Best[i].Workload == "chat" {
			chat = &a.Best[i]
		}
	}
	if chat == nil || chat.Label != "vllm-fp8kv-chat" || chat.Concurrency != 16 || *chat.ThroughputTokS != 1209.9 {
		t.Fatalf("best chat = %+v, want vllm-fp8kv-chat c=16 1209.9", chat)
	}
	if got := a.BestLines()[0]; got != "best chat run: vllm-fp8kv-chat at concurrency 16, 1209.9 tok/s" {
		t.Errorf("best line %q", got)
	}
	runs := map[string]RunAnswer{}
	for _, r := range a.Runs {
		runs[r.Label] = r
	}
	cases := []struct {
		label       string
		holds, brk  float64
		brokenValue float64
	}{
		{"ollama-q4km", 1, 4, 8385.5},
		{"llamacpp-f16kv-chat", 4, 16, 4771.7},
		{"vllm-fp16kv-chat", 16, 0, 0},
		{"vllm-fp8kv-long", 0, 8, 2938.1},
	}
	for _, tc := range cases {
		r := runs[tc.label]
		if r.Holds != tc.holds || r.FirstBreak != tc.brk {
			t.Errorf("%s: holds %v, first break %v; want %v, %v", tc.label, r.Holds, r.FirstBreak, tc.holds, tc.brk)
		}
		if tc.brk > 0 && (len(r.BrokenBy) != 1 || r.BrokenBy[0].Bound.Metric != TTFTP95 || *r.BrokenBy[0].Value != tc.brokenValue) {
			t.Errorf("%s: broken by %+v, want ttft_p95 %v", tc.label, r.BrokenBy, tc.brokenValue)
		}
	}
	if !strings.Contains(a.BestLines()[1], "best long run: none meets") {
		t.Errorf("long: %q", a.BestLines()[1])
	}
}

func TestSeveralBounds(t *testing.T) {
	bounds, err := Parse("ttft_p95=1.5s, tpot_p50=9ms,throughput_min=100,error_rate=1%")
	if err != nil {
		t.Fatal(err)
	}
	a := Evaluate(loadSeed(t, "multi-backend-sweep.json"), bounds)
	found := false
	for _, r := range a.Runs {
		if r.Label == "vllm-fp16kv-chat" {
			found = true
			// c=1: TPOT 8.15 holds; c=4: 8.72 holds; c=16: 10.65 breaks.
			if r.Holds != 4 || r.FirstBreak != 16 || len(r.BrokenBy) != 1 || r.BrokenBy[0].Bound.Metric != TPOTP50 {
				t.Fatalf("vllm-fp16kv-chat: %+v", r)
			}
			if got := r.BrokenBy[0].String(); got != "tpot_p50 10.65 ms > 9 ms" {
				t.Errorf("break text %q", got)
			}
		}
	}
	if !found {
		t.Errorf("no answer for vllm-fp16kv-chat")
	}
}

// TestMissingMetric: batch runs have no TTFT, so a TTFT bound cannot hold.
func TestMissingMetric(t *testing.T) {
	bounds, _ := Parse("ttft_p95=10s")
	a := Evaluate(loadSeed(t, "vllm-text-image-example.json"), bounds)
	for _, r := range a.Runs {
		if r.Holds != 0 || r.FirstBreak != 4 || r.BrokenBy[0].Value != nil {
			t.Errorf("%s: %+v, want no level held for lack of TTFT", r.Label, r)
		}
	}
	bounds, _ = Parse("throughput_min=300tok/s")
	a = Evaluate(loadSeed(t, "vllm-text-image-example.json"), bounds)
	if a.Best[0].Label != "text" || a.Best[1].Label != "" {
		t.Errorf("best = %+v", a.Best)
	}
}

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
			j := Judge(report.PointOf(c.l), b)
			if j.Pass() != c.pass || (len(j.Uncertain) > 0) != c.uncertain || len(j.Checks) != 1 || j.Checks[0].Holds != c.pass {
				t.Fatalf("Judge = %+v", j)
			}
		})
	}
	// A floor: throughput ≥ 350 tok/s with its interval.
	tb, _ := Parse("throughput_min=350")
	l := level(4, 0, 0, 0)
	l.ThroughputTokSCILow, l.ThroughputTokSCIHigh = fp(380), fp(420)
	if j := Judge(report.PointOf(l), tb); !j.Pass() || len(j.Uncertain) != 0 {
		t.Fatalf("throughput floor %+v", j)
	}
	l.ThroughputTokSCILow = fp(340)
	if j := Judge(report.PointOf(l), tb); !j.Pass() || len(j.Uncertain) != 1 {
		t.Fatalf("throughput floor straddled %+v", j)
	}
	// Goodput: the fraction of good requests must reach the bound.
	gb, _ := Parse("ttft_p95=100ms,goodput=0.9")
	l = level(4, 80, 70, 90)
	l.GoodputFraction, l.GoodputFractionCILow, l.GoodputFractionCIHigh = fp(0.85), fp(0.8), fp(0.88)
	if j := Judge(report.PointOf(l), gb); j.Pass() || j.Broken[0].Bound.Metric != Goodput || !strings.Contains(j.Broken[0].String(), "goodput 85% < 90%") {
		t.Fatalf("goodput %+v", j)
	}
}

// TestHoldsIsBelowEveryFailure: "holds up to" is the highest load below
// which every measured load passed, even when a higher load passes again.
func TestHoldsIsBelowEveryFailure(t *testing.T) {
	run := &document.Run{Run: record.Run{Label: "r"}, Levels: []document.Level{level(1, 50, 40, 60), level(2, 150, 140, 160), level(4, 90, 80, 95), level(8, 120, 110, 130)}}
	s := report.NewSet([]report.Source{{File: "x.json", Doc: &document.Document{Runs: []document.Run{*run}}}}, report.Options{})
	b, _ := Parse("ttft_p95=100ms")
	ra := Evaluate(s, b).Runs[0]
	if ra.By != ByConcurrency || ra.Holds != 1 || ra.FirstBreak != 2 || ra.MaxMeasured != 8 {
		t.Fatalf("answer %+v, want holds 1, first break 2", ra)
	}
}

func TestRateRun(t *testing.T) {
	mk := func(rate, v float64) document.Level {
		l := level(64, v, v-5, v+5)
		l.RequestedRate = fp(rate)
		return l
	}
	run := document.Run{Run: record.Run{Label: "r"}, Levels: []document.Level{mk(8, 300), mk(2, 50), mk(4, 80)}}
	s := report.NewSet([]report.Source{{File: "x.json", Doc: &document.Document{Runs: []document.Run{run}}}}, report.Options{})
	b, _ := Parse("ttft_p95=100ms")
	a := Evaluate(s, b)
	ra := a.Runs[0]
	if ra.By != ByRate || ra.Holds != 4 || ra.FirstBreak != 8 {
		t.Fatalf("answer %+v", ra)
	}
	tab := report.AlignTable(a.Table(), "")
	if !strings.Contains(tab, "holds up to ") || !strings.Contains(tab, "4 req/s") || !strings.Contains(a.BestLines()[0], "at 4 req/s") {
		t.Fatalf("table\n%s\n%q", tab, a.BestLines())
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
