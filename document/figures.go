package document

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The table of level figures: each figure a level reports is declared
// here once, with its JSON name, label, unit, direction, precision, the
// getters of its value and of its confidence interval, whether it can be
// an estimate, and the outputs that show it. Every writer (the text,
// Markdown and HTML level tables and latency section, CSV, gobench,
// compare, charts and the SLO's metric names) reads this table instead of
// naming figures itself, so adding a figure is one entry here plus the
// code that computes it (docs/extending.md).

// Figure names a level figure by its JSON name ("ttft_p95_ms").
type Figure string

// Figures the code refers to by name: those with confidence intervals.
const (
	FigThroughput Figure = "throughput_tok_s"
	FigTTFTP50    Figure = "ttft_p50_ms"
	FigTTFTP95    Figure = "ttft_p95_ms"
	FigTTFTP99    Figure = "ttft_p99_ms"
	FigTPOTP50    Figure = "tpot_p50_ms"
	FigTPOTP95    Figure = "tpot_p95_ms"
	FigTPOTP99    Figure = "tpot_p99_ms"
	FigE2EP50     Figure = "e2e_p50_ms"
	FigE2EP95     Figure = "e2e_p95_ms"
	FigE2EP99     Figure = "e2e_p99_ms"
)

// Better says which way a figure improves, for readers that mark gains
// and losses (gobench's benchstat units, compare).
type Better int8

// Directions.
const (
	// Neither: the figure describes the run rather than grading it.
	Neither Better = iota
	LowerIsBetter
	HigherIsBetter
)

// Shows is the set of outputs that show a figure.
type Shows uint16

// Outputs.
const (
	// InTable: a column of the level table (text, Markdown, HTML), where
	// some level has the figure (always, with FigureSpec.Always).
	InTable Shows = 1 << iota
	// InCSV: a CSV column.
	InCSV
	// InGoBench: a gobench metric, its unit the JSON name with dashes.
	InGoBench
	// InCompare: a row of `compare`.
	InCompare
	// InChart: a chart of its own against the load. (Throughput, TTFT,
	// TPOT, per-request rate, KV cache and VRAM have the charts package's
	// hand-laid charts instead, which pair figures and batch records.)
	InChart
	// InCompact: a column of the compact level table people read in a
	// terminal (report and run's table without --wide or --columns),
	// after the load; the figures an SLO names join it. A compact figure
	// is also InTable.
	InCompact

	// Everywhere is every output but the compact table: a new figure's
	// usual choice (the compact table stays about 97 columns wide).
	Everywhere = InTable | InCSV | InGoBench | InCompare | InChart
)

// FigureSpec declares one level figure.
type FigureSpec struct {
	// Key is the figure's JSON name in a level; "" for a column of the
	// level table that repeats a figure in another place (never looked
	// up by name).
	Key Figure
	// Label names it in tables and charts ("TTFT p95"); Unit is its unit
	// ("ms", "tok/s", "GiB"; "%" for a 0–1 fraction shown as a
	// percentage; "" for a count). Header overrides the table header
	// "Label Unit" where that reads wrong.
	Label, Unit, Header string
	// Better says which way the figure improves.
	Better Better
	// Prec is the decimals shown (−1: the shortest exact form).
	Prec int
	// Value returns the level's figure; nil where the level lacks it.
	Value func(*Level) *float64
	// Interval returns the addresses of the level's interval ends, which
	// stats fills and readers read; nil for a figure without an interval.
	Interval func(*Level) (low, high **float64)
	// Estimated reports whether the level's value is an estimate rather
	// than a count ("≈" in tables); nil: never.
	Estimated func(*Level) bool
	// Text formats a figure that is not a number (a verdict, a list);
	// such a figure shows in the level table only.
	Text func(*Level) string
	// Latency and Stat place a latency statistic in the latency section
	// of a report, as the row ("TTFT") and column ("p95") it fills.
	Latency, Stat string
	// SLO is the name an SLO bounds the figure by ("ttft_p95"); "" when
	// it cannot be bounded. The bound is a ceiling for a figure where
	// lower is better, a floor where higher is.
	SLO string
	// Shows lists the outputs that show the figure; Always keeps its
	// level-table column even when no level has it.
	Shows  Shows
	Always bool
}

// TableHeader is the figure's level-table header: "TTFT p95 ms".
func (f *FigureSpec) TableHeader() string {
	if f.Header != "" {
		return f.Header
	}
	if f.Unit == "" {
		return f.Label
	}
	return f.Label + " " + f.Unit
}

// Format writes v as tables show it: with Prec decimals, a "%" figure
// times 100 with one decimal.
func (f *FigureSpec) Format(v float64) string {
	if f.Unit == "%" {
		return strconv.FormatFloat(v*100, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', f.Prec, 64)
}

// Is reports whether the figure shows in output s.
func (f *FigureSpec) Is(s Shows) bool { return f.Shows&s != 0 }

// Estimate returns the figure's value and interval in l.
func (f *FigureSpec) Estimate(l *Level) Estimate {
	var e Estimate
	if f.Value != nil {
		e.Value = f.Value(l)
	}
	if f.Interval != nil {
		lo, hi := f.Interval(l)
		e.Low, e.High = *lo, *hi
	}
	return e
}

// figures is the table, in the order the level table shows its columns
// (CSV and gobench keep the examples' columns first, then follow it).
var figures = builtinFigures()

// Figures returns the table of level figures, in order. The slice is the
// table's: callers must not change it.
func Figures() []FigureSpec { return figures }

// LookupFigure returns the figure named key; nil when there is none.
func LookupFigure(key Figure) *FigureSpec {
	if key == "" {
		return nil
	}
	for i := range figures {
		if figures[i].Key == key {
			return &figures[i]
		}
	}
	return nil
}

// IntervalFigures lists the figures that carry a confidence interval.
func IntervalFigures() []Figure {
	var out []Figure
	for _, f := range figures {
		if f.Interval != nil && f.Key != "" {
			out = append(out, f.Key)
		}
	}
	return out
}

// Register adds a figure at the end of the table, for a figure defined
// outside this package (and for tests of the writers), and returns the
// function that removes it again. It is not safe to call while writers
// run.
func Register(f FigureSpec) (remove func()) {
	figures = append(slices.Clip(figures), f)
	return func() {
		figures = slices.DeleteFunc(slices.Clone(figures), func(g FigureSpec) bool { return g.Key == f.Key && g.Label == f.Label })
	}
}

// IntervalFields returns the addresses of the figure's interval ends in
// l, which stats fills; nil for a figure without an interval.
func (l *Level) IntervalFields(f Figure) (low, high **float64) {
	spec := LookupFigure(f)
	if spec == nil || spec.Interval == nil {
		return nil, nil
	}
	return spec.Interval(l)
}

// Estimate returns the figure's value and interval; zero for an unknown
// figure.
func (l *Level) Estimate(f Figure) Estimate {
	spec := LookupFigure(f)
	if spec == nil {
		return Estimate{}
	}
	return spec.Estimate(l)
}

// Estimate is a level figure with its confidence interval; nil where
// unknown or unbounded.
type Estimate struct {
	Value, Low, High *float64
}

// Percentile is the percentile a figure is ("p95": 95), from its Stat;
// 0 for a figure that is not a percentile.
func (f *FigureSpec) Percentile() float64 {
	p, ok := strings.CutPrefix(f.Stat, "p")
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(p, 64)
	if err != nil {
		return 0
	}
	return v
}

// yesNo is a verdict as a table cell: "yes", "no", "" when not judged.
func yesNo(v *bool) string {
	switch {
	case v == nil:
		return ""
	case *v:
		return "yes"
	}
	return "no"
}

// reasons lists counts by reason, "reason:n" by reason, "" for none.
func reasons(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
