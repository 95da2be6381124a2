// Package slo answers the capacity question for a latency budget: for each
// run, the highest measured concurrency at which every bound of a service
// level objective holds, its throughput, and the first level that breaks
// and by which bound; then the best run of each workload.
package slo

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
)

// Metric is a quantity an SLO bounds.
type Metric string

// Metrics an SLO can bound. Time metrics are upper bounds in ms,
// ThroughputMin is a lower bound in tok/s, ErrorRate an upper bound on the
// fraction of failed requests.
const (
	TTFTP50       Metric = "ttft_p50"
	TTFTP95       Metric = "ttft_p95"
	TPOTP50       Metric = "tpot_p50"
	ThroughputMin Metric = "throughput_min"
	ErrorRate     Metric = "error_rate"
)

var metrics = []Metric{TTFTP50, TTFTP95, TPOTP50, ThroughputMin, ErrorRate}

// Bound is one term of an SLO.
type Bound struct {
	Metric Metric `json:"metric"`
	// Value is in ms for time metrics, tok/s for ThroughputMin and a
	// fraction (0–1) for ErrorRate.
	Value float64 `json:"value"`
}

func (b Bound) isTime() bool {
	return b.Metric == TTFTP50 || b.Metric == TTFTP95 || b.Metric == TPOTP50
}

// String writes the bound as a person would: "ttft_p95 ≤ 1500 ms".
func (b Bound) String() string {
	switch {
	case b.isTime():
		return fmt.Sprintf("%s ≤ %s ms", b.Metric, trim(b.Value))
	case b.Metric == ThroughputMin:
		return fmt.Sprintf("throughput ≥ %s tok/s", trim(b.Value))
	default:
		return fmt.Sprintf("error_rate ≤ %s%%", trim(b.Value*100))
	}
}

// value returns the point's value of the bound's metric, nil if unknown.
func (b Bound) value(p report.Point) *float64 {
	switch b.Metric {
	case TTFTP50:
		return p.TTFTP50Ms
	case TTFTP95:
		return p.TTFTP95Ms
	case TPOTP50:
		return p.TPOTP50Ms
	case ThroughputMin:
		return p.ThroughputTokS
	default:
		return p.ErrorRate()
	}
}

// holds reports whether v meets the bound.
func (b Bound) holds(v float64) bool {
	if b.Metric == ThroughputMin {
		return v >= b.Value
	}
	return v <= b.Value
}

// format writes a measured value of the bound's metric with its unit.
func (b Bound) format(v float64) string {
	switch {
	case b.isTime():
		return trim(round(v, 2)) + " ms"
	case b.Metric == ThroughputMin:
		return trim(round(v, 1)) + " tok/s"
	default:
		return trim(round(v*100, 2)) + "%"
	}
}

// Parse reads an SLO such as "ttft_p95=1.5s,tpot_p50=50ms". Time bounds
// need a unit (ms, s, …; Go duration syntax); throughput_min is tok/s
// (an optional "tok/s" suffix is allowed); error_rate is a fraction or a
// percentage ("0.01" or "1%"). Each metric may appear once.
func Parse(s string) ([]Bound, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty SLO: want terms like ttft_p95=1.5s,tpot_p50=50ms")
	}
	var out []Bound
	seen := map[Metric]bool{}
	for _, term := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		if !ok {
			return nil, fmt.Errorf("SLO term %q: want metric=value, e.g. ttft_p95=1.5s", term)
		}
		m := Metric(strings.TrimSpace(k))
		if !known(m) {
			return nil, fmt.Errorf("SLO term %q: unknown metric %q (want one of %s)", term, m, names())
		}
		if seen[m] {
			return nil, fmt.Errorf("SLO term %q: %s given twice", term, m)
		}
		seen[m] = true
		b := Bound{Metric: m}
		val, err := parseValue(b, strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("SLO term %q: %v", term, err)
		}
		b.Value = val
		out = append(out, b)
	}
	return out, nil
}

func parseValue(b Bound, v string) (float64, error) {
	switch {
	case b.isTime():
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("want a duration with a unit, e.g. 1.5s or 50ms")
		}
		if d <= 0 {
			return 0, fmt.Errorf("want a positive duration")
		}
		return float64(d) / float64(time.Millisecond), nil
	case b.Metric == ThroughputMin:
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "tok/s")), 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("want tokens per second ≥ 0, e.g. 500")
		}
		return f, nil
	default:
		pct := strings.HasSuffix(v, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "%")), 64)
		if pct {
			f /= 100
		}
		if err != nil || f < 0 || f > 1 || math.IsNaN(f) {
			return 0, fmt.Errorf("want a fraction 0–1 or a percentage, e.g. 0.01 or 1%%")
		}
		return f, nil
	}
}

func known(m Metric) bool {
	for _, k := range metrics {
		if k == m {
			return true
		}
	}
	return false
}

func names() string {
	s := make([]string, len(metrics))
	for i, m := range metrics {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// Break is a bound that a level did not meet, or could not be checked
// because the level lacks the metric.
type Break struct {
	Bound Bound `json:"bound"`
	// Value is the measured value; nil when the level lacks the metric.
	Value *float64 `json:"value"`
}

// String says what broke, e.g. "ttft_p95 4771.7 ms > 1500 ms".
func (b Break) String() string {
	if b.Value == nil {
		return fmt.Sprintf("%s not measured", b.Bound.Metric)
	}
	rel := ">"
	if b.Bound.Metric == ThroughputMin {
		rel = "<"
	}
	return fmt.Sprintf("%s %s %s %s", b.Bound.Metric, b.Bound.format(*b.Value), rel, b.Bound.format(b.Bound.Value))
}

// RunAnswer is the SLO answer for one run.
type RunAnswer struct {
	Label    string `json:"label"`
	Backend  string `json:"backend,omitempty"`
	Workload string `json:"workload,omitempty"`
	// Holds is the highest measured concurrency at which every bound
	// holds; 0 when none does.
	Holds int `json:"holds"`
	// ThroughputTokS is the throughput at Holds; nil when none holds.
	ThroughputTokS *float64 `json:"throughput_tok_s"`
	// FirstBreak is the lowest measured concurrency at which some bound
	// fails; 0 when every measured level holds.
	FirstBreak int `json:"first_break"`
	// BrokenBy are the bounds that fail at FirstBreak.
	BrokenBy []Break `json:"broken_by,omitempty"`
	// MaxMeasured is the highest concurrency the run measured.
	MaxMeasured int `json:"max_measured"`
}

// Answer is the SLO answer for a set.
type Answer struct {
	Bounds []Bound      `json:"bounds"`
	Runs   []RunAnswer  `json:"runs"`
	Best   []BestAnswer `json:"best"`
}

// BestAnswer names the run with the highest throughput at its held
// concurrency among the runs of one workload; Label is "" when no run of the
// workload meets the SLO.
type BestAnswer struct {
	Workload       string   `json:"workload"`
	Label          string   `json:"label"`
	Concurrency    int      `json:"concurrency"`
	ThroughputTokS *float64 `json:"throughput_tok_s"`
}

// WriteJSON writes the merged document of s as report.WriteJSON does, with
// a as its top-level field "slo" (readers of documents ignore it); with a
// nil a it writes the document alone.
func WriteJSON(w io.Writer, s *report.Set, a *Answer) error {
	return report.EncodeJSON(w, struct {
		*document.Document
		SLO *Answer `json:"slo,omitempty"`
	}{s.Merged(), a})
}

// Evaluate answers the SLO for every run of s. A level that lacks a bounded
// metric does not meet the SLO (it cannot be shown to). The best run is
// chosen per workload, since throughputs of different workloads do not
// compare; ties go to the lower concurrency, then the earlier run.
func Evaluate(s *report.Set, bounds []Bound) *Answer {
	a := &Answer{Bounds: bounds}
	for _, r := range s.Runs {
		a.Runs = append(a.Runs, evaluateRun(r, bounds))
	}
	var workloads []string
	best := map[string]*BestAnswer{}
	for _, ra := range a.Runs {
		b, ok := best[ra.Workload]
		if !ok {
			b = &BestAnswer{Workload: ra.Workload}
			best[ra.Workload] = b
			workloads = append(workloads, ra.Workload)
		}
		if ra.Holds == 0 || ra.ThroughputTokS == nil {
			continue
		}
		if b.Label == "" || *ra.ThroughputTokS > *b.ThroughputTokS ||
			(*ra.ThroughputTokS == *b.ThroughputTokS && ra.Holds < b.Concurrency) {
			b.Label, b.Concurrency, b.ThroughputTokS = ra.Label, ra.Holds, ra.ThroughputTokS
		}
	}
	for _, w := range workloads {
		a.Best = append(a.Best, *best[w])
	}
	return a
}

func evaluateRun(r *report.Run, bounds []Bound) RunAnswer {
	ra := RunAnswer{Label: r.Label, Backend: r.Backend, Workload: r.Workload}
	pts := append([]report.Point(nil), r.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Concurrency < pts[j].Concurrency })
	for _, p := range pts {
		ra.MaxMeasured = p.Concurrency
		var broken []Break
		for _, b := range bounds {
			v := b.value(p)
			if v == nil || !b.holds(*v) {
				broken = append(broken, Break{Bound: b, Value: v})
			}
		}
		if len(broken) == 0 {
			ra.Holds, ra.ThroughputTokS = p.Concurrency, p.ThroughputTokS
			continue
		}
		if ra.FirstBreak == 0 {
			ra.FirstBreak, ra.BrokenBy = p.Concurrency, broken
		}
	}
	return ra
}

func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round(v float64, prec int) float64 {
	p := math.Pow(10, float64(prec))
	return math.Round(v*p) / p
}

// Table lays the answer out as a report.Table, one row per run.
func (a *Answer) Table() report.Table {
	t := report.Table{Columns: []report.Column{
		{Header: "run", Align: report.Left}, {Header: "backend", Align: report.Left}, {Header: "workload", Align: report.Left},
		{Header: "holds up to c", Align: report.Right}, {Header: "throughput tok/s", Align: report.Right},
		{Header: "first break c", Align: report.Right}, {Header: "broken by", Align: report.Left},
	}}
	for _, r := range a.Runs {
		holds, brk, by := "none", report.Null, "every measured level holds (up to c="+strconv.Itoa(r.MaxMeasured)+")"
		if r.Holds > 0 {
			holds = strconv.Itoa(r.Holds)
		}
		if r.FirstBreak > 0 {
			brk = strconv.Itoa(r.FirstBreak)
			parts := make([]string, len(r.BrokenBy))
			for i, b := range r.BrokenBy {
				parts[i] = b.String()
			}
			by = strings.Join(parts, "; ")
		}
		if r.MaxMeasured == 0 {
			by = "no levels"
		}
		t.Rows = append(t.Rows, []string{r.Label, orNull(r.Backend), orNull(r.Workload), holds, report.FormatFloat(r.ThroughputTokS, 1), brk, by})
	}
	return t
}

// Title is the SLO in words, e.g. "SLO: ttft_p95 ≤ 1500 ms".
func (a *Answer) Title() string {
	parts := make([]string, len(a.Bounds))
	for i, b := range a.Bounds {
		parts[i] = b.String()
	}
	return "SLO: " + strings.Join(parts, ", ")
}

// BestLines are one line per workload naming its best run, e.g.
// "best chat run: vllm-fp8kv-chat at concurrency 16, 1209.9 tok/s".
func (a *Answer) BestLines() []string {
	var out []string
	for _, b := range a.Best {
		w := b.Workload
		if w == "" {
			w = "unnamed-workload"
		}
		if b.Label == "" {
			out = append(out, fmt.Sprintf("best %s run: none meets the SLO at any measured concurrency", w))
			continue
		}
		out = append(out, fmt.Sprintf("best %s run: %s at concurrency %d, %s tok/s", w, b.Label, b.Concurrency, report.FormatFloat(b.ThroughputTokS, 1)))
	}
	return out
}

func orNull(s string) string {
	if s == "" {
		return report.Null
	}
	return s
}
