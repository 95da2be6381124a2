package slo

import (
	"strings"
	"testing"

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
