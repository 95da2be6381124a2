// Package compare sets two results side by side: runs paired by label,
// backend or workload, and for each concurrency level both values and the
// ratio B/A of throughput, TTFT p50/p95 and TPOT p50 (or a batch run's mean
// TPOT). Where both sides have repeats, a Welch t-test (benchmath's
// AssumeNormal) says whether the throughput difference is significant at
// α = 0.05; otherwise, where both sides' levels carry confidence
// intervals, the ratio gets an interval of its own, and a ratio whose
// interval holds 1 is marked "~" (not shown to differ), so that nobody
// celebrates noise.
package compare

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
)

// By is what pairs the runs of side A with those of side B.
type By string

// Pairing keys.
const (
	ByLabel    By = "label"
	ByBackend  By = "backend"
	ByWorkload By = "workload"
)

// ParseBy reads a --by value.
func ParseBy(s string) (By, error) {
	switch b := By(s); b {
	case ByLabel, ByBackend, ByWorkload:
		return b, nil
	}
	return "", fmt.Errorf("want label, backend or workload, got %q", s)
}

func (b By) key(r *report.Run) string {
	switch b {
	case ByBackend:
		return r.Backend
	case ByWorkload:
		return r.Workload
	}
	return r.Label
}

// Side is one side of a comparison: the runs of a file, or one run of it.
type Side struct {
	// Name is what the user named: "a.json" or "a.json#label".
	Name string
	Runs []*report.Run
}

// Pair is a run of A and the run of B it is compared with.
type Pair struct {
	Key  string
	A, B *report.Run
}

// Pairs pairs the runs of a and b. When either side is a single run the
// two sides pair directly; otherwise runs pair by key, and a key two runs
// of one side share is an error (name the run with FILE#LABEL). Runs
// without a partner are listed in unpaired.
func Pairs(a, b Side, by By) (pairs []Pair, unpaired []string, err error) {
	if len(a.Runs) == 1 && len(b.Runs) == 1 {
		return []Pair{{Key: by.key(a.Runs[0]), A: a.Runs[0], B: b.Runs[0]}}, nil, nil
	}
	index := func(s Side) (map[string]*report.Run, error) {
		m := map[string]*report.Run{}
		for _, r := range s.Runs {
			k := by.key(r)
			if other, dup := m[k]; dup {
				return nil, fmt.Errorf("%s: runs %q and %q both have %s %q; pick one as %s#LABEL or compare --by label", s.Name, other.Label, r.Label, by, k, s.Name)
			}
			m[k] = r
		}
		return m, nil
	}
	ia, err := index(a)
	if err != nil {
		return nil, nil, err
	}
	ib, err := index(b)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range a.Runs {
		k := by.key(r)
		if rb, ok := ib[k]; ok {
			pairs = append(pairs, Pair{Key: k, A: r, B: rb})
		} else {
			unpaired = append(unpaired, fmt.Sprintf("%s: run %q has no %s %q in %s", a.Name, r.Label, by, k, b.Name))
		}
	}
	for _, r := range b.Runs {
		if _, ok := ia[by.key(r)]; !ok {
			unpaired = append(unpaired, fmt.Sprintf("%s: run %q has no %s %q in %s", b.Name, r.Label, by, by.key(r), a.Name))
		}
	}
	return pairs, unpaired, nil
}

// Metric is a compared quantity.
type Metric struct {
	Name string
	// Prec is the number of decimals shown.
	Prec int
	get  func(report.Point) *float64
	// better is the figure table's direction for it.
	better document.Better
	// fig is the level figure whose confidence interval goes with the
	// metric; "" for none.
	fig document.Figure
}

// Metrics are the compared quantities, in order: every figure of the
// figure table that shows in compare, then the batch records' mean TPOT.
func Metrics() []Metric {
	var out []Metric
	figs := document.Figures()
	for i := range figs {
		f := &figs[i]
		if !f.Is(document.InCompare) || f.Key == "" || f.Value == nil {
			continue
		}
		m := Metric{Name: f.TableHeader(), Prec: f.Prec, better: f.Better, get: func(p report.Point) *float64 { return p.Figure(f) }}
		if f.Interval != nil {
			m.fig = f.Key
		}
		out = append(out, m)
	}
	return append(out, Metric{Name: "mean TPOT ms (batch, incl. prefill)", Prec: 2, better: document.LowerIsBetter, get: func(p report.Point) *float64 { return p.BatchTPOTMs }})
}

// Row is one metric at one concurrency.
type Row struct {
	Concurrency int
	Metric      Metric
	A, B        *float64
	// Ratio is B/A; nil when either is missing or A is 0.
	Ratio *float64
	// Test is the significance test of the throughput repeats; nil when
	// a side has fewer than two repeats.
	Test *benchmath.Comparison
	// RatioLow and RatioHigh are the confidence interval of Ratio where
	// both sides' levels carry an interval of the metric (RatioInterval)
	// and there is no Test; Confidence is its confidence.
	RatioLow, RatioHigh *float64
	Confidence          float64
}

// Significant reports whether the row's difference is significant; rows
// without a test are reported as significant (there is nothing to say).
func (r Row) Significant() bool { return r.Test == nil || r.Test.P < r.Test.Alpha }

// Similar reports whether the row's ratio interval holds 1: the two sides
// are not shown to differ ("~").
func (r Row) Similar() bool {
	return r.Test == nil && r.RatioLow != nil && r.RatioHigh != nil && *r.RatioLow <= 1 && 1 <= *r.RatioHigh
}

// RatioInterval is a confidence interval of B/A from the two sides'
// intervals: each side's interval gives a standard error of its log,
// (ln high − ln low) / 2z (z the normal quantile of its confidence), and
// the ratio's is exp(ln(B/A) ± z·√(se_A² + se_B²)) at the lower of the two
// confidences. It treats each side's (bootstrap or order-statistic)
// interval as normal on the log scale; nil ends where a side lacks a
// bounded, positive interval.
func RatioInterval(a, b document.Estimate, confA, confB float64) (lo, hi *float64, conf float64) {
	ok := func(e document.Estimate) bool {
		return e.Value != nil && e.Low != nil && e.High != nil && *e.Value > 0 && *e.Low > 0 && *e.High >= *e.Low
	}
	if !ok(a) || !ok(b) || !(confA > 0 && confA < 1) || !(confB > 0 && confB < 1) {
		return nil, nil, 0
	}
	se := func(e document.Estimate, conf float64) float64 {
		return (math.Log(*e.High) - math.Log(*e.Low)) / (2 * zOf(conf))
	}
	conf = min(confA, confB)
	half := zOf(conf) * math.Hypot(se(a, confA), se(b, confB))
	mid := math.Log(*b.Value / *a.Value)
	l, h := math.Exp(mid-half), math.Exp(mid+half)
	return &l, &h, conf
}

// zOf is the standard normal quantile of a two-sided confidence.
func zOf(conf float64) float64 { return math.Sqrt2 * math.Erfinv(conf) }

// Alpha is the significance level of the t-test.
const Alpha = 0.05

// Rows compares the levels of a pair. Levels only one side measured have
// the other side nil; metrics neither side has at a level are left out.
func Rows(p Pair) []Row {
	cs, byC := pairLevels(p)
	var rows []Row
	ms := Metrics()
	for _, c := range cs {
		for _, m := range ms {
			if row, ok := compareAt(c, m, byC[c]); ok {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// pairLevels lines up the pair's levels by concurrency: the
// concurrencies in order, and each one's A and B points (nil for a side
// that did not measure it).
func pairLevels(p Pair) ([]int, map[int][2]*report.Point) {
	byC := map[int][2]*report.Point{}
	var cs []int
	for i, r := range []*report.Run{p.A, p.B} {
		for j := range r.Points {
			pt := &r.Points[j]
			e, ok := byC[pt.Concurrency]
			if !ok {
				cs = append(cs, pt.Concurrency)
			}
			e[i] = pt
			byC[pt.Concurrency] = e
		}
	}
	sort.Ints(cs)
	return cs, byC
}

// compareAt is metric m's row at concurrency c from the sides' points e:
// both values, B/A, and its significance; false when neither side has
// the metric.
func compareAt(c int, m Metric, e [2]*report.Point) (Row, bool) {
	row := Row{Concurrency: c, Metric: m}
	if e[0] != nil {
		row.A = m.get(*e[0])
	}
	if e[1] != nil {
		row.B = m.get(*e[1])
	}
	if row.A == nil && row.B == nil {
		return row, false
	}
	if row.A != nil && row.B != nil && *row.A != 0 {
		v := *row.B / *row.A
		row.Ratio = &v
	}
	if e[0] != nil && e[1] != nil {
		row.significance(m, *e[0], *e[1])
	}
	return row, true
}

// significance judges B/A where both sides measured the level: Welch's
// t-test over throughput's per-pass samples when each side has two, else
// the ratio's interval from the sides' intervals when both have them.
func (row *Row) significance(m Metric, a, b report.Point) {
	if m.fig == document.FigThroughput && len(a.Samples) >= 2 && len(b.Samples) >= 2 {
		t := benchmath.AssumeNormal.Compare(benchmath.NewSample(a.Samples, &benchmath.DefaultThresholds), benchmath.NewSample(b.Samples, &benchmath.DefaultThresholds))
		t.Alpha = Alpha
		row.Test = &t
		return
	}
	if m.fig != "" && a.Level != nil && b.Level != nil && a.Level.CIConfidence != nil && b.Level.CIConfidence != nil {
		row.RatioLow, row.RatioHigh, row.Confidence = RatioInterval(a.Estimate(m.fig), b.Estimate(m.fig), *a.Level.CIConfidence, *b.Level.CIConfidence)
	}
}

// Table lays out the rows of a pair.
func Table(rows []Row) report.Table {
	t := report.Table{Columns: []report.Column{
		{Header: "c", Align: report.Right}, {Header: "metric", Align: report.Left},
		{Header: "A", Align: report.Right}, {Header: "B", Align: report.Right},
		{Header: "B/A", Align: report.Right}, {Header: "significance", Align: report.Left},
	}}
	for _, r := range rows {
		ratio := report.Null
		if r.Ratio != nil {
			ratio = strconv.FormatFloat(*r.Ratio, 'f', 3, 64) + "×"
		}
		sig := ""
		switch {
		case r.Test != nil && r.Significant():
			sig = fmt.Sprintf("significant (Welch t-test %s)", r.Test)
		case r.Test != nil:
			sig = fmt.Sprintf("~ not significant (Welch t-test %s)", r.Test)
		case r.RatioLow != nil && r.Similar():
			sig = fmt.Sprintf("~ B/A %s%% interval %.3f–%.3f holds 1", strconv.FormatFloat(r.Confidence*100, 'f', -1, 64), *r.RatioLow, *r.RatioHigh)
		case r.RatioLow != nil:
			sig = fmt.Sprintf("B/A %s%% interval %.3f–%.3f", strconv.FormatFloat(r.Confidence*100, 'f', -1, 64), *r.RatioLow, *r.RatioHigh)
		}
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(r.Concurrency), r.Metric.Name,
			report.FormatFloat(r.A, r.Metric.Prec), report.FormatFloat(r.B, r.Metric.Prec), ratio, sig,
		})
	}
	return t
}

// Title names the two runs of a pair and the files they came from, with
// report.SimulatedMark after a simulated run's label.
func Title(p Pair) string {
	return fmt.Sprintf("A = %s (%s)  vs  B = %s (%s)", p.A.SimulatedLabel(), strings.Join(p.A.Files, ", "), p.B.SimulatedLabel(), strings.Join(p.B.Files, ", "))
}
