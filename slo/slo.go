// Package slo defines service level objectives and judges a level
// against one: an SLO is a list of bounds on a level's figures (the
// percentiles of TTFT, TPOT and E2E latency, throughput, error rate,
// goodput), and Judge is the one pass/fail test of a level against it,
// which `report --slo` answers with and `servebench find` searches with.
// The figures an SLO can bound and their units are the figure table's
// (document.Figures, FigureSpec.SLO); the package formats nothing beyond
// a bound's own words.
package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// Metric is a quantity an SLO bounds: a figure's SLO name
// (document.FigureSpec.SLO), ErrorRate or Goodput.
type Metric string

// Metrics an SLO can bound that the code names. Time metrics (percentiles
// of TTFT, TPOT and E2E latency) are upper bounds in ms, ThroughputMin is
// a lower bound in tok/s, ErrorRate an upper bound on the fraction of
// failed requests, and Goodput a lower bound on the fraction of requests
// that meet every per-request time bound (GoodputBudget). Every figure of
// the figure table with an SLO name can be bounded the same way.
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

// metrics lists what an SLO can bound: the figure table's SLO names, in
// its order, then the error rate and goodput.
func metrics() []Metric {
	var out []Metric
	for _, f := range document.Figures() {
		if f.SLO != "" {
			out = append(out, Metric(f.SLO))
		}
	}
	return append(out, ErrorRate, Goodput)
}

// figure is the level figure a metric bounds; nil for ErrorRate and
// Goodput, which are not a figure with an SLO name.
func (m Metric) figure() *document.FigureSpec {
	figs := document.Figures()
	for i := range figs {
		if figs[i].SLO == string(m) {
			return &figs[i]
		}
	}
	return nil
}

// Figure is the level figure the bound is on (its unit is the bound
// Value's); nil for ErrorRate and Goodput, which are not one. Charts draw
// a bound on its figure's chart with it.
func (b Bound) Figure() *document.FigureSpec { return b.Metric.figure() }

// Bound is one term of an SLO.
type Bound struct {
	Metric Metric `json:"metric"`
	// Value is in ms for time metrics, tok/s for ThroughputMin and a
	// fraction (0–1) for ErrorRate and Goodput.
	Value float64 `json:"value"`
}

// isTime reports whether the bound is on a latency in ms (its value is
// parsed as a duration).
func (b Bound) isTime() bool {
	f := b.Metric.figure()
	return f != nil && f.Unit == "ms"
}

// lower reports whether the bound is a floor (the value must reach it)
// rather than a ceiling.
func (b Bound) lower() bool {
	if f := b.Metric.figure(); f != nil {
		return f.Better == document.HigherIsBetter
	}
	return b.Metric == Goodput
}

// Percentile is the percentile a bound is on (50, 95, 99); 0 for bounds
// that are not on a percentile.
func (b Bound) Percentile() float64 {
	if f := b.Metric.figure(); f != nil {
		return f.Percentile()
	}
	return 0
}

// String writes the bound as a person would: "ttft_p95 ≤ 1500 ms",
// "throughput ≥ 500 tok/s".
func (b Bound) String() string {
	f := b.Metric.figure()
	switch {
	case f != nil && f.Better == document.HigherIsBetter:
		return strings.TrimSpace(fmt.Sprintf("%s ≥ %s %s", f.Label, trim(b.Value), f.Unit))
	case f != nil:
		return strings.TrimSpace(fmt.Sprintf("%s ≤ %s %s", b.Metric, trim(b.Value), f.Unit))
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

// Subject is a level as Judge sees it: its figures, their intervals,
// and its request counts.
type Subject struct {
	// Level is the sweep level; nil where there is none (a batch
	// record), whose figures count as exact.
	Level *document.Level
	// Figure returns the subject's value of a figure; nil means the
	// Level's (FigureSpec.Value).
	Figure func(*document.FigureSpec) *float64
	// Requests and Errors count its requests; nil where unknown.
	Requests, Errors *int
}

// Of is the subject of a sweep level.
func Of(l *document.Level) Subject {
	return Subject{Level: l, Requests: &l.Requests, Errors: &l.Errors}
}

// value is the subject's figure f.
func (s Subject) value(f *document.FigureSpec) *float64 {
	if s.Figure != nil {
		return s.Figure(f)
	}
	if s.Level == nil || f.Value == nil {
		return nil
	}
	return f.Value(s.Level)
}

// errorRate is Errors / Requests; nil where either is unknown or there
// were no requests.
func (s Subject) errorRate() *float64 {
	if s.Requests == nil || s.Errors == nil || *s.Requests <= 0 {
		return nil
	}
	v := float64(*s.Errors) / float64(*s.Requests)
	return &v
}

// estimate returns the subject's value of the bound's metric with its
// confidence interval; Value nil if unknown. known reports whether the
// subject has intervals at all (documents from before them have none,
// and their figures count as exact).
func (b Bound) estimate(s Subject) (e document.Estimate, known bool) {
	lvl := s.Level
	known = lvl != nil && lvl.CIConfidence != nil
	if f := b.Metric.figure(); f != nil {
		if lvl != nil {
			e = f.Estimate(lvl)
		}
		e.Value = s.value(f)
		return e, known
	}
	if b.Metric == Goodput {
		if lvl == nil {
			return document.Estimate{}, false
		}
		return document.Estimate{Value: lvl.GoodputFraction, Low: lvl.GoodputFractionCILow, High: lvl.GoodputFractionCIHigh}, known
	}
	e.Value = s.errorRate()
	if known && e.Value != nil {
		iv := stats.ProportionCI(*s.Errors, *s.Requests, *lvl.CIConfidence)
		e.Low, e.High = iv.Low, iv.High
	}
	return e, known
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

// oneSided is the subject's one-sided bounds of the bound's percentile
// (document.Level.OneSided); ok false where it has none (a bound not on
// a percentile, a document from before them), and the verdict rests on
// the two-sided interval.
func (b Bound) oneSided(s Subject) (o document.OneSidedBounds, ok bool) {
	f := b.Metric.figure()
	if f == nil || b.Percentile() == 0 || s.Level == nil || s.Level.CIConfidence == nil {
		return o, false
	}
	o, ok = s.Level.OneSided[f.Key]
	return o, ok && o.N > 0
}

// decided reports whether the one-sided bounds settle the verdict: a
// ceiling holds when the upper bound is within it and breaks when the
// lower bound is beyond it (a floor the other way round).
func (b Bound) decided(o document.OneSidedBounds) bool {
	if b.lower() {
		return (o.Low != nil && *o.Low >= b.Value) || (o.High != nil && *o.High < b.Value)
	}
	return (o.High != nil && *o.High <= b.Value) || (o.Low != nil && *o.Low > b.Value)
}

// oneSidedNote is Check.Note of an undecided verdict on a percentile:
// where every value lies on one side of the bound it says so, with the
// confidence that gives and the requests 95% needs ("ttft_p95 ≤ 1000 ms:
// all 48 requests under 210 ms (91% confidence; 59 requests give 95%)");
// where the bound's side has no one-sided bound for want of requests, the
// measured value and the requests that would give one; "" where the
// values lie on both sides and the bounds straddle it.
func (b Bound) oneSidedNote(o document.OneSidedBounds, conf, value float64) string {
	q := b.Percentile() / 100
	ceiling := !b.lower()
	var side string
	var seen float64
	var confAll float64
	var upperNeeded bool
	switch {
	case o.Max != nil && *o.Max <= b.Value:
		side, seen, confAll, upperNeeded = "under", *o.Max, stats.AllBelowConfidence(o.N, q), true
	case o.Min != nil && *o.Min > b.Value:
		side, seen, confAll, upperNeeded = "over", *o.Min, stats.AllAboveConfidence(o.N, q), false
	}
	if side != "" {
		need := stats.BoundSampleSize(q, conf, upperNeeded)
		return fmt.Sprintf("%s: all %d requests %s %s (%s%% confidence; %d requests give %s%%)", b, o.N, side, b.format(seen),
			trim(math.Floor(confAll*100)), need, trim(conf*100))
	}
	// The bound's own side: the upper bound decides whether a ceiling
	// holds, the lower one whether a floor does.
	far, sideName, upper := o.High, "upper", ceiling
	if !ceiling {
		far, sideName, upper = o.Low, "lower", false
	}
	if far != nil || !b.holds(value) {
		return ""
	}
	rel := "≤"
	if !ceiling {
		rel = "≥"
	}
	note := fmt.Sprintf("%s %s %s %s; %d requests give no %s%% %s bound on a p%s", b.Metric, b.format(value), rel, b.format(b.Value),
		o.N, trim(conf*100), sideName, trim(b.Percentile()))
	if need := stats.BoundSampleSize(q, conf, upper); need > o.N {
		note += fmt.Sprintf(" (%d would)", need)
	}
	return note
}

// unboundedNote is Check.Note: the measured value on the passing side,
// the interval's end on the failing side missing for want of requests;
// "" otherwise.
func (b Bound) unboundedNote(e document.Estimate, s Subject) string {
	p := b.Percentile()
	if p == 0 || s.Level == nil || s.Level.CIConfidence == nil || s.Requests == nil || !b.holds(*e.Value) {
		return ""
	}
	side, far := "upper", e.High
	if b.lower() {
		side, far = "lower", e.Low
	}
	if far != nil {
		return ""
	}
	conf := *s.Level.CIConfidence
	rel := "≤"
	if b.lower() {
		rel = "≥"
	}
	note := fmt.Sprintf("%s %s %s %s; %d requests give no %s%% %s bound on a p%s", b.Metric, b.format(*e.Value), rel, b.format(b.Value),
		*s.Requests, trim(conf*100), side, trim(p))
	if need := stats.QuantileSampleSize(p/100, conf); need > *s.Requests {
		note += fmt.Sprintf(" (%d would)", need)
	}
	return note
}

// format writes a measured value of the bound's metric with its unit.
func (b Bound) format(v float64) string {
	f := b.Metric.figure()
	switch {
	case f != nil && f.Unit == "%":
		return trim(round(v*100, 2)) + "%"
	case f != nil:
		// Latencies to 0.01 ms whatever their table precision; other
		// figures as their tables show them.
		prec := f.Prec
		if f.Unit == "ms" {
			prec = 2
		}
		return strings.TrimSpace(trim(round(v, prec)) + " " + f.Unit)
	default:
		return trim(round(v*100, 2)) + "%"
	}
}

// Format writes a measured value of the bound's metric with its unit, as
// verdicts and reports do ("18920.35 ms").
func (b Bound) Format(v float64) string { return b.format(v) }

// FormatInterval writes an interval of the bound's metric with its unit
// once ("18250.1–19080.2 ms").
func (b Bound) FormatInterval(lo, hi float64) string {
	l, h := b.format(lo), b.format(hi)
	if i := strings.IndexByte(h, ' '); i > 0 && strings.HasSuffix(l, h[i:]) {
		l = strings.TrimSuffix(l, h[i:])
	} else if strings.HasSuffix(h, "%") && strings.HasSuffix(l, "%") {
		l = strings.TrimSuffix(l, "%")
	}
	return l + "–" + h
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

// DecisiveRequests is the fewest counted requests whose one-sided
// bounds at confidence can decide every percentile bound of bounds
// (stats.BoundSampleSize on the side that decides a pass: 59 for a p95
// at 95%, 299 for a p99); 0 for bounds without a percentile. Fewer can
// still decide a break, never a pass.
func DecisiveRequests(bounds []Bound, confidence float64) int {
	n := 0
	for _, b := range bounds {
		if p := b.Percentile(); p > 0 {
			n = max(n, stats.BoundSampleSize(p/100, confidence, !b.lower()))
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
	case b.Metric.figure() != nil:
		unit := b.Metric.figure().Unit
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, unit)), 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			if unit == "tok/s" {
				return 0, fmt.Errorf("want tokens per second ≥ 0, e.g. 500")
			}
			return 0, fmt.Errorf("want a number ≥ 0 (%s)", unit)
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
	for _, k := range metrics() {
		if k == m {
			return true
		}
	}
	return false
}

func names() string {
	ms := metrics()
	s := make([]string, len(ms))
	for i, m := range ms {
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
	// Straddles is whether the verdict is undecided: for a percentile,
	// neither its one-sided upper bound is within the threshold nor its
	// lower bound beyond it (document.OneSidedBounds); for other figures,
	// and levels without one-sided bounds, whether the interval holds
	// the threshold.
	Straddles bool `json:"straddles,omitempty"`
	// Note says what is known where the verdict is undecided only for
	// want of requests: every value on one side of the threshold
	// ("ttft_p95 ≤ 1000 ms: all 48 requests under 210 ms (91% confidence;
	// 59 requests give 95%)"), or no bound on the threshold's side
	// ("ttft_p95 104 ms ≤ 1000 ms; 48 requests give no 95% upper bound on
	// a p95 (59 would)").
	Note string `json:"note,omitempty"`
}

// String says what the check found, with the figure's unit: "ttft_p95
// 310.52 ms ≤ 1000 ms", or "tpot_p95 not measured".
func (c Check) String() string {
	if c.Value == nil {
		return fmt.Sprintf("%s not measured", c.Bound.Metric)
	}
	rel := "≤"
	switch {
	case c.Bound.lower() && c.Holds:
		rel = "≥"
	case c.Bound.lower():
		rel = "<"
	case !c.Holds:
		rel = ">"
	}
	return fmt.Sprintf("%s %s %s %s", c.Bound.Metric, c.Bound.format(*c.Value), rel, c.Bound.format(c.Bound.Value))
}

// Judgement is a level held against an SLO (Judge).
type Judgement struct {
	// Checks are every bound's check, in the SLO's order.
	Checks []Check `json:"checks"`
	// Broken are the bounds the level does not meet by their measured
	// value, or cannot be checked on (the level lacks the metric). The
	// level passes when there are none.
	Broken []Break `json:"broken,omitempty"`
	// Uncertain are the bounds whose verdict is undecided (Check.
	// Straddles): more requests could turn it. Levels without intervals
	// are never uncertain.
	Uncertain []Metric `json:"uncertain,omitempty"`
}

// Pass reports whether every bound holds.
func (j Judgement) Pass() bool { return len(j.Broken) == 0 }

// Undecided reports whether more requests could turn the level's verdict:
// some bound is uncertain and none is decisively broken. A level that
// breaks one bound decisively breaks the SLO whatever its other bounds
// turn out to be, so it is decided.
func (j Judgement) Undecided() bool {
	for _, c := range j.Checks {
		if !c.Holds && !c.Straddles {
			return false
		}
	}
	return len(j.Uncertain) > 0
}

// Judge holds one level against the SLO: each bound passes or breaks by
// its measured value, and is uncertain unless its 95% one-sided bounds
// decide it (a percentile's upper bound within a ceiling: it holds; its
// lower bound beyond it: it breaks), or, for a figure without them, its
// confidence interval lies on one side of the threshold. A decided
// verdict always agrees with the measured value, which lies between the
// bounds. A level that lacks a bounded metric breaks it
// (it cannot be shown to hold). It is the one pass/fail test of both
// `report --slo` and `servebench find`.
func Judge(s Subject, bounds []Bound) Judgement {
	var j Judgement
	for _, b := range bounds {
		e, known := b.estimate(s)
		c := Check{Bound: b, Value: e.Value, CILow: e.Low, CIHigh: e.High}
		c.Holds = e.Value != nil && b.holds(*e.Value)
		if o, ok := b.oneSided(s); ok && e.Value != nil {
			c.Straddles = !b.decided(o)
			if c.Straddles {
				c.Note = b.oneSidedNote(o, *s.Level.CIConfidence, *e.Value)
			}
		} else {
			c.Straddles = e.Value != nil && known && b.straddles(e)
			if c.Straddles {
				c.Note = b.unboundedNote(e, s)
			}
		}
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

func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round(v float64, prec int) float64 {
	p := math.Pow(10, float64(prec))
	return math.Round(v*p) / p
}
