// Package compare sets two results side by side: runs paired by label,
// backend or workload, and for each concurrency level both values and the
// ratio B/A of throughput, TTFT p50/p95 and TPOT p50 (or a batch run's mean
// TPOT). Where both sides have repeats, a Welch t-test (benchmath's
// AssumeNormal) says whether the throughput difference is significant at
// α = 0.05, so that nobody celebrates noise.
package compare

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

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
}

// Metrics are the compared quantities, in order.
var Metrics = []Metric{
	{"throughput tok/s", 1, func(p report.Point) *float64 { return p.ThroughputTokS }},
	{"TTFT p50 ms", 1, func(p report.Point) *float64 { return p.TTFTP50Ms }},
	{"TTFT p95 ms", 1, func(p report.Point) *float64 { return p.TTFTP95Ms }},
	{"TPOT p50 ms", 2, func(p report.Point) *float64 { return p.TPOTP50Ms }},
	{"mean TPOT ms (batch, incl. prefill)", 2, func(p report.Point) *float64 { return p.BatchTPOTMs }},
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
}

// Significant reports whether the row's difference is significant; rows
// without a test are reported as significant (there is nothing to say).
func (r Row) Significant() bool { return r.Test == nil || r.Test.P < r.Test.Alpha }

// Alpha is the significance level of the t-test.
const Alpha = 0.05

// Rows compares the levels of a pair. Levels only one side measured have
// the other side nil; metrics neither side has at a level are left out.
func Rows(p Pair) []Row {
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
	var rows []Row
	for _, c := range cs {
		e := byC[c]
		for mi, m := range Metrics {
			row := Row{Concurrency: c, Metric: m}
			if e[0] != nil {
				row.A = m.get(*e[0])
			}
			if e[1] != nil {
				row.B = m.get(*e[1])
			}
			if row.A == nil && row.B == nil {
				continue
			}
			if row.A != nil && row.B != nil && *row.A != 0 {
				v := *row.B / *row.A
				row.Ratio = &v
			}
			if mi == 0 && e[0] != nil && e[1] != nil && len(e[0].Samples) >= 2 && len(e[1].Samples) >= 2 {
				t := benchmath.AssumeNormal.Compare(benchmath.NewSample(e[0].Samples, &benchmath.DefaultThresholds), benchmath.NewSample(e[1].Samples, &benchmath.DefaultThresholds))
				t.Alpha = Alpha
				row.Test = &t
			}
			rows = append(rows, row)
		}
	}
	return rows
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
		if r.Test != nil {
			if r.Significant() {
				sig = fmt.Sprintf("significant (Welch t-test %s)", r.Test)
			} else {
				sig = fmt.Sprintf("~ not significant (Welch t-test %s)", r.Test)
			}
		}
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(r.Concurrency), r.Metric.Name,
			report.FormatFloat(r.A, r.Metric.Prec), report.FormatFloat(r.B, r.Metric.Prec), ratio, sig,
		})
	}
	return t
}

// Title names the two runs of a pair and the files they came from.
func Title(p Pair) string {
	return fmt.Sprintf("A = %s (%s)  vs  B = %s (%s)", p.A.Label, strings.Join(p.A.Files, ", "), p.B.Label, strings.Join(p.B.Files, ", "))
}
