// Package slo answers the capacity question for a latency budget: for each
// run, the highest measured load (concurrency, or request rate for the
// rate method) below which every measured load meets every bound of a
// service level objective, its throughput and goodput, and the first load
// that breaks and by which bound; then the best run of each workload.
//
// Judge is the one pass/fail test of a level against an SLO: `report
// --slo` answers with it and `servebench find` searches with it.
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
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/stats"
)

// Metric is a quantity an SLO bounds.
type Metric string

// Metrics an SLO can bound. Time metrics (percentiles of TTFT, TPOT and
// E2E latency) are upper bounds in ms, ThroughputMin is a lower bound in
// tok/s, ErrorRate an upper bound on the fraction of failed requests, and
// Goodput a lower bound on the fraction of requests that meet every
// per-request time bound (GoodputBudget).
const (
	TTFTP50       Metric = "ttft_p50"
	TTFTP95       Metric = "ttft_p95"
	TTFTP99       Metric = "ttft_p99"
	TPOTP50       Metric = "tpot_p50"
	TPOTP95       Metric = "tpot_p95"
	TPOTP99       Metric = "tpot_p99"
	E2EP50        Metric = "e2e_p50"
	E2EP95        Metric = "e2e_p95"
	E2EP99        Metric = "e2e_p99"
	ThroughputMin Metric = "throughput_min"
	ErrorRate     Metric = "error_rate"
	Goodput       Metric = "goodput"
)

var metrics = []Metric{TTFTP50, TTFTP95, TTFTP99, TPOTP50, TPOTP95, TPOTP99, E2EP50, E2EP95, E2EP99, ThroughputMin, ErrorRate, Goodput}

// timeFigures maps each time metric to its level figure.
var timeFigures = map[Metric]document.Figure{
	TTFTP50: document.FigTTFTP50, TTFTP95: document.FigTTFTP95, TTFTP99: document.FigTTFTP99,
	TPOTP50: document.FigTPOTP50, TPOTP95: document.FigTPOTP95, TPOTP99: document.FigTPOTP99,
	E2EP50: document.FigE2EP50, E2EP95: document.FigE2EP95, E2EP99: document.FigE2EP99,
}

// Bound is one term of an SLO.
type Bound struct {
	Metric Metric `json:"metric"`
	// Value is in ms for time metrics, tok/s for ThroughputMin and a
	// fraction (0–1) for ErrorRate and Goodput.
	Value float64 `json:"value"`
}

func (b Bound) isTime() bool {
	_, ok := timeFigures[b.Metric]
	return ok
}

// lower reports whether the bound is a floor (the value must reach it)
// rather than a ceiling.
func (b Bound) lower() bool { return b.Metric == ThroughputMin || b.Metric == Goodput }

// Percentile is the percentile a time bound is on (50, 95, 99); 0 for
// other bounds.
func (b Bound) Percentile() float64 {
	switch {
	case !b.isTime():
		return 0
	case strings.HasSuffix(string(b.Metric), "_p50"):
		return 50
	case strings.HasSuffix(string(b.Metric), "_p95"):
		return 95
	}
	return 99
}

// String writes the bound as a person would: "ttft_p95 ≤ 1500 ms".
func (b Bound) String() string {
	switch {
	case b.isTime():
		return fmt.Sprintf("%s ≤ %s ms", b.Metric, trim(b.Value))
	case b.Metric == ThroughputMin:
		return fmt.Sprintf("throughput ≥ %s tok/s", trim(b.Value))
	case b.Metric == Goodput:
		return fmt.Sprintf("goodput ≥ %s%% of requests", trim(b.Value*100))
	default:
		return fmt.Sprintf("error_rate ≤ %s%%", trim(b.Value*100))
	}
}

// text writes the bound in Parse's syntax, canonically.
func (b Bound) text() string {
	if b.isTime() {
		return fmt.Sprintf("%s=%sms", b.Metric, trim(b.Value))
	}
	return fmt.Sprintf("%s=%s", b.Metric, trim(b.Value))
}

// estimate returns the point's value of the bound's metric with its
// confidence interval; Value nil if unknown. known reports whether the
// point has intervals at all (documents from before them have none, and
// their figures count as exact).
func (b Bound) estimate(p report.Point) (e document.Estimate, known bool) {
	lvl := p.Level
	known = lvl != nil && lvl.CIConfidence != nil
	switch {
	case b.isTime():
		if lvl == nil {
			return document.Estimate{Value: b.pointValue(p)}, false
		}
		return lvl.Estimate(timeFigures[b.Metric]), known
	case b.Metric == ThroughputMin:
		e = p.Estimate(document.FigThroughput)
		e.Value = p.ThroughputTokS
		return e, known
	case b.Metric == Goodput:
		if lvl == nil {
			return document.Estimate{}, false
		}
		return document.Estimate{Value: lvl.GoodputFraction, Low: lvl.GoodputFractionCILow, High: lvl.GoodputFractionCIHigh}, known
	}
	e.Value = p.ErrorRate()
	if known && e.Value != nil {
		iv := stats.ProportionCI(*p.Errors, *p.Requests, *lvl.CIConfidence)
		e.Low, e.High = iv.Low, iv.High
	}
	return e, known
}

// pointValue is a time metric as a Point without a level has it.
func (b Bound) pointValue(p report.Point) *float64 {
	switch b.Metric {
	case TTFTP50:
		return p.TTFTP50Ms
	case TTFTP95:
		return p.TTFTP95Ms
	case TPOTP50:
		return p.TPOTP50Ms
	}
	return nil
}

// holds reports whether v meets the bound.
func (b Bound) holds(v float64) bool {
	if b.lower() {
		return v >= b.Value
	}
	return v <= b.Value
}

// straddles reports whether an interval holds values on both sides of the
// bound's threshold; an unbounded end reaches every value on its side.
func (b Bound) straddles(e document.Estimate) bool {
	if b.lower() {
		return (e.Low == nil || *e.Low < b.Value) && (e.High == nil || *e.High >= b.Value)
	}
	return (e.Low == nil || *e.Low <= b.Value) && (e.High == nil || *e.High > b.Value)
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
	if seen[Goodput] {
		if _, ok := GoodputBudget(out); !ok {
			return nil, fmt.Errorf("goodput needs a latency bound to count requests against (ttft_*, tpot_* or e2e_*)")
		}
	}
	return out, nil
}

// Text writes bounds in Parse's syntax, canonically (times in ms), as
// documents record the SLO their goodput counts against:
// "ttft_p95=1500ms,tpot_p50=50ms".
func Text(bounds []Bound) string {
	parts := make([]string, len(bounds))
	for i, b := range bounds {
		parts[i] = b.text()
	}
	return strings.Join(parts, ",")
}

// GoodputBudget is the per-request part of bounds, the budget goodput
// counts each request against (vLLM's --goodput): for TTFT, TPOT and E2E
// latency, the largest value any of their percentile bounds gives (a
// request within the loosest bound of the SLO is one the SLO accepts). ok
// is false when bounds have no time bound.
func GoodputBudget(bounds []Bound) (b record.GoodputBudget, ok bool) {
	set := func(dst **float64, v float64) {
		if *dst == nil || v > **dst {
			*dst = &v
		}
		ok = true
	}
	for _, bd := range bounds {
		switch {
		case strings.HasPrefix(string(bd.Metric), "ttft_"):
			set(&b.TTFTMs, bd.Value)
		case strings.HasPrefix(string(bd.Metric), "tpot_"):
			set(&b.TPOTMs, bd.Value)
		case strings.HasPrefix(string(bd.Metric), "e2e_"):
			set(&b.E2EMs, bd.Value)
		}
	}
	return b, ok
}

// MinRequests is the number of counted requests a level needs so that
// each percentile bound has at least 20 requests beyond its percentile
// (400 for a p95, 2,000 for a p99, 40 for a p50), which is what its
// interval needs to be narrow; 0 for bounds without a percentile.
func MinRequests(bounds []Bound) int {
	n := 0
	for _, b := range bounds {
		if p := b.Percentile(); p > 0 {
			n = max(n, int(math.Ceil(20/(1-p/100)-1e-9)))
		}
	}
	return n
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
	default: // error_rate, goodput
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
	// CILow and CIHigh are its confidence interval, where the level has
	// one.
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
}

// String says what broke, e.g. "ttft_p95 4771.7 ms > 1500 ms".
func (b Break) String() string {
	if b.Value == nil {
		return fmt.Sprintf("%s not measured", b.Bound.Metric)
	}
	rel := ">"
	if b.Bound.lower() {
		rel = "<"
	}
	return fmt.Sprintf("%s %s %s %s", b.Bound.Metric, b.Bound.format(*b.Value), rel, b.Bound.format(b.Bound.Value))
}

// Check is one bound held against a level: the measured figure, its
// confidence interval where the level has one, and the verdicts.
type Check struct {
	Bound  Bound    `json:"bound"`
	Value  *float64 `json:"value"`
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// Holds is whether the measured value meets the bound.
	Holds bool `json:"holds"`
	// Straddles is whether the interval holds the threshold.
	Straddles bool `json:"straddles,omitempty"`
}

// Judgement is a level held against an SLO (Judge).
type Judgement struct {
	// Checks are every bound's check, in the SLO's order.
	Checks []Check `json:"checks"`
	// Broken are the bounds the level does not meet by their measured
	// value, or cannot be checked on (the level lacks the metric). The
	// level passes when there are none.
	Broken []Break `json:"broken,omitempty"`
	// Uncertain are the bounds whose confidence interval holds the
	// threshold: more requests could turn the verdict. Levels without
	// intervals are never uncertain.
	Uncertain []Metric `json:"uncertain,omitempty"`
}

// Pass reports whether every bound holds.
func (j Judgement) Pass() bool { return len(j.Broken) == 0 }

// Judge holds one level against the SLO: each bound passes or breaks by
// its measured value, and is uncertain when its confidence interval
// straddles the threshold. A level that lacks a bounded metric breaks it
// (it cannot be shown to hold). It is the one pass/fail test of both
// `report --slo` and `servebench find`.
func Judge(p report.Point, bounds []Bound) Judgement {
	var j Judgement
	for _, b := range bounds {
		e, known := b.estimate(p)
		c := Check{Bound: b, Value: e.Value, CILow: e.Low, CIHigh: e.High}
		c.Holds = e.Value != nil && b.holds(*e.Value)
		c.Straddles = e.Value != nil && known && b.straddles(e)
		j.Checks = append(j.Checks, c)
		if !c.Holds {
			j.Broken = append(j.Broken, Break{Bound: b, Value: e.Value, CILow: e.Low, CIHigh: e.High})
		}
		if c.Straddles {
			j.Uncertain = append(j.Uncertain, b.Metric)
		}
	}
	return j
}

// Load names what a run's levels vary: concurrency, or the rate method's
// request rate.
type Load string

// Loads.
const (
	ByConcurrency Load = "concurrency"
	ByRate        Load = "rate"
	// ByUsers varies the people of a model of people (run --users).
	ByUsers Load = "users"
)

// Whole says the load takes whole values only (concurrency, people).
func (l Load) Whole() bool { return l != ByRate }

// Format writes a load value with its unit: "16", "12.5 req/s".
func (l Load) Format(v float64) string {
	if l == ByRate {
		return trim(round(v, 3)) + " req/s"
	}
	return trim(v)
}

// RunAnswer is the SLO answer for one run.
type RunAnswer struct {
	Label    string `json:"label"`
	Backend  string `json:"backend,omitempty"`
	Workload string `json:"workload,omitempty"`
	// By is what the run's levels vary: concurrency, or request rate
	// (requests/s) for a rate-method run.
	By Load `json:"by"`
	// Holds is the highest measured load below which every measured
	// load meets the SLO (itself included); 0 when the lowest does not.
	Holds float64 `json:"holds"`
	// ThroughputTokS is the throughput at Holds; nil when none holds.
	ThroughputTokS *float64 `json:"throughput_tok_s"`
	// GoodputReqS and GoodputFraction are the goodput at Holds, where
	// the level has it.
	GoodputReqS     *float64 `json:"goodput_req_s,omitempty"`
	GoodputFraction *float64 `json:"goodput_fraction,omitempty"`
	// FirstBreak is the lowest measured load at which some bound fails;
	// 0 when every measured level holds.
	FirstBreak float64 `json:"first_break"`
	// BrokenBy are the bounds that fail at FirstBreak.
	BrokenBy []Break `json:"broken_by,omitempty"`
	// Uncertain are the measured loads whose verdict an interval
	// straddled: more requests there could move the answer.
	Uncertain []float64 `json:"uncertain,omitempty"`
	// MaxMeasured is the highest load the run measured.
	MaxMeasured float64 `json:"max_measured"`
}

// Answer is the SLO answer for a set.
type Answer struct {
	Bounds []Bound      `json:"bounds"`
	Runs   []RunAnswer  `json:"runs"`
	Best   []BestAnswer `json:"best"`
	// Warnings are findings about the answer, as data (goodput that
	// cannot be counted against this SLO).
	Warnings []string `json:"warnings,omitempty"`
}

// BestAnswer names the run with the highest throughput at its held
// load among the runs of one workload; Label is "" when no run of the
// workload meets the SLO.
type BestAnswer struct {
	Workload string `json:"workload"`
	Label    string `json:"label"`
	// By and Load are the held load of the run (Concurrency repeats it
	// for concurrency runs, as earlier answers had it).
	By             Load     `json:"by,omitempty"`
	Load           float64  `json:"load,omitempty"`
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

// Evaluate answers the SLO for every run of s. The best run is chosen per
// workload, since throughputs of different workloads do not compare; ties
// go to the lower load, then the earlier run.
func Evaluate(s *report.Set, bounds []Bound) *Answer {
	a := &Answer{Bounds: bounds}
	text := Text(bounds)
	_, hasBudget := GoodputBudget(bounds)
	var other []string
	for _, r := range s.Runs {
		ra := evaluateRun(r, bounds)
		if r.Sweep == nil || r.Sweep.SLO != text {
			// Goodput counted against another budget (or none) is not
			// this SLO's.
			ra.GoodputReqS, ra.GoodputFraction = nil, nil
			if r.Kind == report.KindSweep && hasBudget {
				other = append(other, r.Label)
			}
		}
		a.Runs = append(a.Runs, ra)
	}
	if len(other) > 0 {
		names := strings.Join(quoteAll(other), ", ")
		if len(other) > 3 {
			names = fmt.Sprintf("%d runs (%s, …)", len(other), strings.Join(quoteAll(other[:2]), ", "))
		}
		a.Warnings = append(a.Warnings, fmt.Sprintf("no goodput for %s: their documents were summarized without this SLO; report their records files (.jsonl) with --slo to count it", names))
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
			(*ra.ThroughputTokS == *b.ThroughputTokS && ra.Holds < b.Load) {
			b.Label, b.By, b.Load, b.ThroughputTokS = ra.Label, ra.By, ra.Holds, ra.ThroughputTokS
			b.Concurrency = 0
			if ra.By == ByConcurrency {
				b.Concurrency = int(ra.Holds)
			}
		}
	}
	for _, w := range workloads {
		a.Best = append(a.Best, *best[w])
	}
	return a
}

// RunLoad is what a run's points vary: the request rate when every point
// has one (a rate-method run), else concurrency.
func RunLoad(pts []report.Point) Load {
	for _, p := range pts {
		if p.Rate == nil {
			return ByConcurrency
		}
	}
	if len(pts) == 0 {
		return ByConcurrency
	}
	return ByRate
}

func evaluateRun(r *report.Run, bounds []Bound) RunAnswer {
	ra := RunAnswer{Label: r.Label, Backend: r.Backend, Workload: r.Workload, By: RunLoad(r.Points)}
	pts := append([]report.Point(nil), r.Points...)
	load := func(p report.Point) float64 {
		if ra.By == ByRate {
			return *p.Rate
		}
		return float64(p.Concurrency)
	}
	sort.SliceStable(pts, func(i, j int) bool { return load(pts[i]) < load(pts[j]) })
	for _, p := range pts {
		ra.MaxMeasured = load(p)
		j := Judge(p, bounds)
		if len(j.Uncertain) > 0 {
			ra.Uncertain = append(ra.Uncertain, load(p))
		}
		if !j.Pass() {
			if ra.FirstBreak == 0 {
				ra.FirstBreak, ra.BrokenBy = load(p), j.Broken
			}
			continue
		}
		if ra.FirstBreak == 0 {
			ra.Holds, ra.ThroughputTokS = load(p), p.ThroughputTokS
			if p.Level != nil {
				ra.GoodputReqS, ra.GoodputFraction = p.Level.GoodputReqS, p.Level.GoodputFraction
			}
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
	holdsHdr, brkHdr := "holds up to c", "first break c"
	for _, r := range a.Runs {
		if r.By == ByRate {
			holdsHdr, brkHdr = "holds up to", "first break"
		}
	}
	t := report.Table{Columns: []report.Column{
		{Header: "run", Align: report.Left}, {Header: "backend", Align: report.Left}, {Header: "workload", Align: report.Left},
		{Header: holdsHdr, Align: report.Right}, {Header: "throughput tok/s", Align: report.Right},
		{Header: brkHdr, Align: report.Right}, {Header: "broken by", Align: report.Left},
	}}
	goodput := false
	for _, r := range a.Runs {
		goodput = goodput || r.GoodputReqS != nil
	}
	if goodput {
		t.Columns = append(t.Columns[:5], append([]report.Column{{Header: "goodput req/s", Align: report.Right}, {Header: "good %", Align: report.Right}}, t.Columns[5:]...)...)
	}
	for _, r := range a.Runs {
		holds, brk, by := "none", report.Null, "every measured level holds (up to "+r.By.prefix()+r.By.Format(r.MaxMeasured)+")"
		if r.Holds > 0 {
			holds = r.By.Format(r.Holds)
		}
		if r.FirstBreak > 0 {
			brk = r.By.Format(r.FirstBreak)
			parts := make([]string, len(r.BrokenBy))
			for i, b := range r.BrokenBy {
				parts[i] = b.String()
			}
			by = strings.Join(parts, "; ")
		}
		if r.MaxMeasured == 0 {
			by = "no levels"
		}
		if len(r.Uncertain) > 0 {
			us := make([]string, len(r.Uncertain))
			for i, u := range r.Uncertain {
				us[i] = r.By.Format(u)
			}
			by += " (an interval straddles the bound at " + strings.Join(us, ", ") + ")"
		}
		row := []string{r.Label, orNull(r.Backend), orNull(r.Workload), holds, report.FormatFloat(r.ThroughputTokS, 1)}
		if goodput {
			row = append(row, report.FormatFloat(r.GoodputReqS, 2), pct(r.GoodputFraction))
		}
		t.Rows = append(t.Rows, append(row, brk, by))
	}
	return t
}

// prefix is how a load is introduced in words: "c=" for concurrency.
func (l Load) prefix() string {
	if l == ByRate {
		return ""
	}
	return "c="
}

func pct(v *float64) string {
	if v == nil {
		return report.Null
	}
	return strconv.FormatFloat(math.Round(*v*1000)/10, 'f', 1, 64)
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
		at := fmt.Sprintf("concurrency %d", b.Concurrency)
		if b.By == ByRate {
			at = ByRate.Format(b.Load)
		}
		out = append(out, fmt.Sprintf("best %s run: %s at %s, %s tok/s", w, b.Label, at, report.FormatFloat(b.ThroughputTokS, 1)))
	}
	return out
}

func orNull(s string) string {
	if s == "" {
		return report.Null
	}
	return s
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}
