package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"

	"github.com/servebench/servebench/report/reporttest"

	"github.com/servebench/servebench/report"
)

// loadSeed reads a reference document of examples/ as a report set.
func loadSeed(t testing.TB, name string) *report.Set { return reporttest.LoadSeed(t, name) }

// TestTextVersusImage compares the text and image runs of the reference
// example: image halves throughput (262.6 / 486.9 = 0.539) and, with three
// repeats a side that barely scatter, the Welch t-test calls it significant.
func TestTextVersusImage(t *testing.T) {
	s := loadSeed(t, "vllm-text-image-example.json")
	a := Side{Name: "ex.json#text", Runs: []*report.Run{s.Find("text")}}
	b := Side{Name: "ex.json#one_image_per_request", Runs: []*report.Run{s.Find("one_image_per_request")}}
	pairs, unpaired, err := Pairs(a, b, ByLabel)
	if err != nil || len(pairs) != 1 || len(unpaired) != 0 {
		t.Fatalf("pairs %v unpaired %v err %v", pairs, unpaired, err)
	}
	rows := Rows(pairs[0])
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want throughput and batch TPOT", rows)
	}
	tp := rows[0]
	if tp.Metric.Name != "throughput tok/s" || tp.Concurrency != 4 {
		t.Fatalf("first row %+v", tp)
	}
	if got := *tp.Ratio; got < 0.5393 || got > 0.5394 {
		t.Errorf("throughput B/A = %v, want 262.62/486.92 = 0.53935", got)
	}
	if tp.Test == nil || !tp.Significant() || tp.Test.N1 != 3 || tp.Test.N2 != 3 {
		t.Errorf("test %+v, want a significant n=3+3 result", tp.Test)
	}
	if got := *rows[1].Ratio; got < 1.854 || got > 1.855 {
		t.Errorf("batch TPOT B/A = %v, want 15.2311/8.2150 = 1.8541", got)
	}
	table := report.AlignTable(Table(rows), "")
	for _, want := range []string{"486.9", "262.6", "0.539×", "significant (Welch t-test p=0.001 n=3)", "1.854×"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestNoiseIsNotSignificant compares the text run with a copy whose
// repeats are the same values reordered: the t-test must say "~".
func TestNoiseIsNotSignificant(t *testing.T) {
	s := loadSeed(t, "vllm-text-image-example.json")
	a := s.Find("text")
	b := *a
	b.Points = append([]report.Point(nil), a.Points...)
	b.Points[0].Samples = []float64{a.Points[0].Samples[2], a.Points[0].Samples[0], a.Points[0].Samples[1] + 1}
	rows := Rows(Pair{A: a, B: &b})
	if rows[0].Test == nil || rows[0].Significant() {
		t.Errorf("test %+v: want not significant", rows[0].Test)
	}
	if !strings.Contains(report.AlignTable(Table(rows), ""), "~ not significant") {
		t.Errorf("table does not mark the noise")
	}
}

func TestPairs(t *testing.T) {
	s := loadSeed(t, "multi-backend-sweep.json")
	whole := Side{Name: "sweep.json", Runs: s.Runs}
	pairs, unpaired, err := Pairs(whole, whole, ByLabel)
	if err != nil || len(pairs) != 9 || len(unpaired) != 0 {
		t.Fatalf("by label: %d pairs, unpaired %v, err %v", len(pairs), unpaired, err)
	}
	_, _, err = Pairs(whole, whole, ByBackend)
	if err == nil || !strings.Contains(err.Error(), `both have backend "llamacpp"`) {
		t.Errorf("by backend: err %v, want an ambiguity error", err)
	}
	chat := Side{Name: "a.json", Runs: []*report.Run{s.Find("vllm-fp8kv-chat"), s.Find("vllm-fp8kv-long")}}
	other := Side{Name: "b.json", Runs: []*report.Run{s.Find("llamacpp-q8kv-chat"), s.Find("llamacpp-q8kv-long"), s.Find("ollama-q4km")}}
	_, _, err = Pairs(chat, other, ByWorkload)
	if err == nil {
		t.Errorf("by workload with two chat runs in B: want an error")
	}
	other.Runs = other.Runs[:2]
	pairs, _, err = Pairs(chat, other, ByWorkload)
	if err != nil || len(pairs) != 2 || pairs[0].B.Label != "llamacpp-q8kv-chat" || pairs[1].Key != "long" {
		t.Errorf("by workload: %+v %v", pairs, err)
	}
	rows := Rows(pairs[0])
	// Sweep levels have no repeats: no test, TTFT and TPOT present.
	for _, r := range rows {
		if r.Test != nil {
			t.Errorf("row %+v has a test without repeats", r)
		}
	}
	if len(rows) != 3*4 {
		t.Errorf("%d rows, want 3 levels × 4 metrics", len(rows))
	}
}

func TestLevelsOnOneSide(t *testing.T) {
	s := loadSeed(t, "multi-backend-sweep.json")
	rows := Rows(Pair{A: s.Find("vllm-fp8kv-chat"), B: s.Find("vllm-fp8kv-long")})
	var cs []int
	for _, r := range rows {
		if r.Metric.Name == "throughput tok/s" {
			cs = append(cs, r.Concurrency)
			if (r.A == nil) == (r.B == nil) && r.Concurrency != 16 {
				t.Errorf("c=%d: want one side missing", r.Concurrency)
			}
			if r.Ratio != nil && r.Concurrency != 16 {
				t.Errorf("c=%d: ratio without both sides", r.Concurrency)
			}
		}
	}
	if len(cs) != 6 {
		t.Errorf("concurrencies %v, want the union 1 4 8 16 32 48", cs)
	}
	if !strings.Contains(report.AlignTable(Table(rows), ""), report.Null) {
		t.Errorf("missing side not shown as %s", report.Null)
	}
}

// sweepRun is a one-level sweep run at concurrency 4 with throughput v and
// its 95% interval.
func sweepRun(label string, v, lo, hi float64) *report.Run {
	l := document.Level{Concurrency: 4, Requests: 400, ThroughputTokS: &v, ThroughputTokSCILow: &lo, ThroughputTokSCIHigh: &hi, CIConfidence: ptr(0.95)}
	s := report.NewSet([]report.Source{{File: label + ".json", Doc: &document.Document{Runs: []document.Run{{Run: record.Run{Label: label}, Levels: []document.Level{l}}}}}}, report.Options{})
	return s.Runs[0]
}

func ptr(v float64) *float64 { return &v }

// TestRatioInterval: without repeats, a B/A ratio whose interval holds 1
// is marked "~"; one whose interval lies above 1 is not.
func TestRatioInterval(t *testing.T) {
	a := sweepRun("a", 1000, 950, 1050)
	cases := []struct {
		name    string
		b       *report.Run
		similar bool
		text    string
	}{
		{"within the noise", sweepRun("b", 1030, 980, 1080), true, "~ B/A 95% interval"},
		{"clearly faster", sweepRun("b", 1300, 1240, 1360), false, "B/A 95% interval 1.2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := Rows(Pair{A: a, B: c.b})
			r := rows[0]
			if r.Test != nil || r.RatioLow == nil || r.Similar() != c.similar || !(*r.RatioLow < *r.Ratio && *r.Ratio < *r.RatioHigh) {
				t.Fatalf("row %+v", r)
			}
			if table := report.AlignTable(Table(rows), ""); !strings.Contains(table, c.text) {
				t.Fatalf("table lacks %q:\n%s", c.text, table)
			}
		})
	}
	// The interval of a ratio of two equal, independent figures: each side
	// ±5% (se of ln ≈ 0.0255) gives ln-ratio ±1.96·√2·0.0255 ≈ ±0.0707.
	lo, hi, conf := RatioInterval(document.Estimate{Value: ptr(1000), Low: ptr(950), High: ptr(1050)}, document.Estimate{Value: ptr(1000), Low: ptr(950), High: ptr(1050)}, 0.95, 0.95)
	if conf != 0.95 || math.Abs(math.Log(*hi)-0.0707) > 0.001 || math.Abs(math.Log(*lo)+0.0707) > 0.001 {
		t.Fatalf("ratio interval %v–%v", *lo, *hi)
	}
	if lo, _, _ := RatioInterval(document.Estimate{Value: ptr(1)}, document.Estimate{Value: ptr(1), Low: ptr(1), High: ptr(1)}, 0.95, 0.95); lo != nil {
		t.Fatal("an interval from a side without one")
	}
}
