package report_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/chart"
	"github.com/servebench/servebench/report/compare"
	"github.com/servebench/servebench/report/html"
	"github.com/servebench/servebench/report/reporttest"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
)

// TestFigureTableDrivesEveryWriter: a figure added to the figure table
// alone, here in the test, shows in every writer's output (text,
// Markdown, CSV, gobench, compare, the SLO's metrics and answer, charts,
// HTML and the document's list of figures with intervals) without any
// writer naming it.
func TestFigureTableDrivesEveryWriter(t *testing.T) {
	var lo, hi *float64
	remove := document.Register(document.FigureSpec{
		Key: "probe_ms", Label: "probe", Unit: "ms", Better: document.LowerIsBetter, Prec: 1,
		Value: func(l *document.Level) *float64 {
			v := 4000 + float64(l.Concurrency) + 0.25
			return &v
		},
		Interval: func(*document.Level) (**float64, **float64) { return &lo, &hi },
		SLO:      "probe", Shows: document.Everywhere,
	})
	defer remove()

	set := reporttest.LoadSeed(t, "multi-backend-sweep.json")
	layout := report.Build(set)
	outputs := map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return report.WriteText(b, layout) },
		"markdown": func(b *bytes.Buffer) error { return report.WriteMarkdown(b, layout) },
		"csv":      func(b *bytes.Buffer) error { return report.WriteCSV(b, set) },
		"gobench":  func(b *bytes.Buffer) error { return report.WriteGoBench(b, set) },
		"html":     func(b *bytes.Buffer) error { return html.Write(b, layout, chart.ForSet(set)) },
	}
	want := map[string]string{"text": "probe ms", "markdown": "probe ms", "csv": "probe_ms", "gobench": "4004.25 probe-ms", "html": "probe ms"}
	for name, write := range outputs {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(b.String(), want[name]) {
			t.Errorf("%s output lacks %q", name, want[name])
		}
		if name != "gobench" && name != "csv" && !strings.Contains(b.String(), "4004.2") {
			t.Errorf("%s output lacks the figure's value 4004.2 at c=4", name)
		}
	}

	run := set.Runs[0]
	var found bool
	for _, r := range compare.Rows(compare.Pair{A: run, B: run}) {
		found = found || (r.Metric.Name == "probe ms" && r.Ratio != nil && *r.Ratio == 1)
	}
	if !found {
		t.Error("compare has no probe ms row")
	}

	bounds, err := slo.Parse("probe=2s")
	if err != nil {
		t.Fatalf("an SLO cannot bound the figure: %v", err)
	}
	a := sloreport.Evaluate(set, bounds)
	if got := a.Title(); got != "SLO: probe ≤ 2000 ms" {
		t.Errorf("SLO title %q", got)
	}
	if ra := a.Runs[0]; ra.FirstBreak == 0 || !strings.Contains(ra.BrokenBy[0].String(), "probe 40") || !strings.Contains(ra.BrokenBy[0].String(), "> 2000 ms") {
		t.Errorf("SLO answer %+v: want every level broken by probe", ra)
	}

	var charted bool
	for _, c := range chart.ForSet(set) {
		charted = charted || (c.Name == "probe_ms" && strings.Contains(string(c.SVG()), "probe vs concurrency"))
	}
	if !charted {
		t.Error("no probe chart")
	}
	if !slices.Contains(document.IntervalFigures(), "probe_ms") || document.LookupFigure("probe_ms") == nil {
		t.Error("the document's figure list lacks probe_ms")
	}
}
