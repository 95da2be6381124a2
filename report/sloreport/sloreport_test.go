package sloreport

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/reporttest"
	"github.com/servebench/servebench/slo"
)

// loadSeed reads a reference document of examples/ as a report set.
func loadSeed(t testing.TB, name string) *report.Set { return reporttest.LoadSeed(t, name) }

// TestSeedAnswer is the acceptance answer: with ttft_p95 ≤ 1.5 s the best
// chat run of the multi-backend sweep is vllm-fp8kv-chat at concurrency 16
// with 1209.9 tok/s, and ollama-q4km holds only concurrency 1.
func TestSeedAnswer(t *testing.T) {
	bounds, err := slo.Parse("ttft_p95=1.5s")
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
	// The sweep's top is c=16 and it held there: the answer is a lower bound.
	if !chat.LowerBound || chat.Simulated {
		t.Errorf("best chat = %+v, want a lower bound, measured", chat)
	}
	if got := a.BestLines()[0]; got != "best chat run: vllm-fp8kv-chat at concurrency 16, 1209.9 tok/s"+LowerBoundNote {
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
		if r.LowerBound() != (tc.brk == 0 && tc.holds > 0) {
			t.Errorf("%s: lower bound %v with holds %v, first break %v", tc.label, r.LowerBound(), tc.holds, tc.brk)
		}
		if r.Holds != tc.holds || r.FirstBreak != tc.brk {
			t.Errorf("%s: holds %v, first break %v; want %v, %v", tc.label, r.Holds, r.FirstBreak, tc.holds, tc.brk)
		}
		if tc.brk > 0 && (len(r.BrokenBy) != 1 || r.BrokenBy[0].Bound.Metric != slo.TTFTP95 || *r.BrokenBy[0].Value != tc.brokenValue) {
			t.Errorf("%s: broken by %+v, want ttft_p95 %v", tc.label, r.BrokenBy, tc.brokenValue)
		}
	}
	if !strings.Contains(a.BestLines()[1], "best long run: none meets") {
		t.Errorf("long: %q", a.BestLines()[1])
	}
}

func TestSeveralBounds(t *testing.T) {
	bounds, err := slo.Parse("ttft_p95=1.5s, tpot_p50=9ms,throughput_min=100,error_rate=1%")
	if err != nil {
		t.Fatal(err)
	}
	a := Evaluate(loadSeed(t, "multi-backend-sweep.json"), bounds)
	found := false
	for _, r := range a.Runs {
		if r.Label == "vllm-fp16kv-chat" {
			found = true
			// c=1: TPOT 8.15 holds; c=4: 8.72 holds; c=16: 10.65 breaks.
			if r.Holds != 4 || r.FirstBreak != 16 || len(r.BrokenBy) != 1 || r.BrokenBy[0].Bound.Metric != slo.TPOTP50 {
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
	bounds, _ := slo.Parse("ttft_p95=10s")
	a := Evaluate(loadSeed(t, "vllm-text-image-example.json"), bounds)
	for _, r := range a.Runs {
		if r.Holds != 0 || r.FirstBreak != 4 || r.BrokenBy[0].Value != nil {
			t.Errorf("%s: %+v, want no level held for lack of TTFT", r.Label, r)
		}
	}
	bounds, _ = slo.Parse("throughput_min=300tok/s")
	a = Evaluate(loadSeed(t, "vllm-text-image-example.json"), bounds)
	if a.Best[0].Label != "text" || a.Best[1].Label != "" {
		t.Errorf("best = %+v", a.Best)
	}
}

func fp(v float64) *float64 { return &v }

// level is a sweep level with TTFT p95 v and its interval.
func level(c int, v, lo, hi float64) document.Level {
	req := 400
	return document.Level{Concurrency: c, Requests: req, ThroughputTokS: fp(100 * float64(c)), CIConfidence: fp(0.95),
		TTFTP95Ms: fp(v), TTFTP95MsCILow: fp(lo), TTFTP95MsCIHigh: fp(hi)}
}

// TestHoldsIsBelowEveryFailure: "holds up to" is the highest load below
// which every measured load passed, even when a higher load passes again.
func TestHoldsIsBelowEveryFailure(t *testing.T) {
	run := &document.Run{Run: record.Run{Label: "r"}, Levels: []document.Level{level(1, 50, 40, 60), level(2, 150, 140, 160), level(4, 90, 80, 95), level(8, 120, 110, 130)}}
	s := report.NewSet([]report.Source{{File: "x.json", Doc: &document.Document{Runs: []document.Run{*run}}}}, report.Options{})
	b, _ := slo.Parse("ttft_p95=100ms")
	ra := Evaluate(s, b).Runs[0]
	if ra.By != slo.ByConcurrency || ra.Holds != 1 || ra.FirstBreak != 2 || ra.MaxMeasured != 8 {
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
	b, _ := slo.Parse("ttft_p95=100ms")
	a := Evaluate(s, b)
	ra := a.Runs[0]
	if ra.By != slo.ByRate || ra.Holds != 4 || ra.FirstBreak != 8 {
		t.Fatalf("answer %+v", ra)
	}
	tab := report.AlignTable(a.Table(), "")
	if !strings.Contains(tab, "holds up to ") || !strings.Contains(tab, "4 req/s") || !strings.Contains(a.BestLines()[0], "at 4 req/s") {
		t.Fatalf("table\n%s\n%q", tab, a.BestLines())
	}
}

// TestTooFewRequestsSaysWhatIsKnown: a p95 within its bound whose upper
// end the level's requests cannot bound is not said to straddle the
// bound: the table says the value, the bound and how many requests would
// give the end.
func TestTooFewRequestsSaysWhatIsKnown(t *testing.T) {
	l := level(4, 104, 90, 0)
	l.TTFTP95MsCIHigh = nil
	l.Requests = 48
	s := report.NewSet([]report.Source{{File: "x.json", Doc: &document.Document{Runs: []document.Run{{Run: record.Run{Label: "r"}, Levels: []document.Level{l, level(8, 950, 900, 1050)}}}}}}, report.Options{})
	b, _ := slo.Parse("ttft_p95=1s")
	tab := report.AlignTable(Evaluate(s, b).Table(), "")
	for _, want := range []string{"at c=4: ttft_p95 104 ms ≤ 1000 ms; 48 requests give no 95% upper bound on a p95 (72 would)", "an interval straddles the bound at 8"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	if strings.Contains(tab, "straddles the bound at 4") {
		t.Errorf("c=4 said to straddle:\n%s", tab)
	}
}
