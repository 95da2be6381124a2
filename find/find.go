// Package find searches for the largest load that meets a latency budget
// (`servebench find`). The search is a pure state machine, Search: it
// says which load to measure next (Next), takes the measured level
// (Observe), and in the end gives the Answer. It never measures anything
// itself; Drive runs it against a Prober, which may be a live server,
// a launched profile or a simulator.
//
// The search grows the load geometrically until a probe fails the SLO or
// the server saturates, then bisects between the last pass and the first
// fail until the two are at most Resolution of the answer apart (one
// concurrency step where that is more). A probe whose verdict is
// undecided (slo.Judge: its one-sided 95% bounds neither within a bound
// nor beyond it) is measured again, its passes pooled, MaxRepeats times
// and past them until its requests are as many as a decided pass needs
// (slo.DecisiveRequests), before its verdict counts; a verdict that is
// still undecided counts by its measured value and widens the answer's
// interval. Before it answers, each load that bounds the interval and was
// measured once is measured again, so that the answer rests on verdicts
// that held at two times (docs/metrics.md, "servebench find").
package find

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/saturation"
	"github.com/servebench/servebench/slo"
)

// Defaults of a Config.
const (
	DefaultGrowth     = 2.0
	DefaultResolution = 0.25
	DefaultMaxRepeats = 3
	// DefaultMaxConcurrency and DefaultMaxRate bound the growth.
	DefaultMaxConcurrency = 4096
	DefaultMaxRate        = 100000
)

// Config is what a search looks for.
type Config struct {
	// By is what the search varies: concurrency or request rate.
	By slo.Load
	// Bounds is the SLO every probe is judged against (slo.Judge).
	Bounds []slo.Bound
	// Start is the first load (default 1: one request in flight, or one
	// request per second).
	Start float64
	// Max is the highest load tried (default DefaultMaxConcurrency or
	// DefaultMaxRate).
	Max float64
	// Growth is the factor between loads while growing (default 2).
	Growth float64
	// Resolution is the widest bisection bracket accepted, as a fraction
	// of the answer (default and most 0.25); for concurrency a bracket of
	// one is always accepted.
	Resolution float64
	// MaxRepeats is how many times a straddling probe is measured again:
	// 0 means the default (3), NoRepeats none.
	MaxRepeats int
}

// NoRepeats is the Config.MaxRepeats of a search that never measures a
// probe again.
const NoRepeats = -1

// Repeats is the Config.MaxRepeats for n repeats (n = 0: NoRepeats).
func Repeats(n int) int {
	if n == 0 {
		return NoRepeats
	}
	return n
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.By == "" {
		c.By = slo.ByConcurrency
	}
	if !slices.Contains([]slo.Load{slo.ByConcurrency, slo.ByRate, slo.ByUsers}, c.By) {
		return c, fmt.Errorf("by %q: want concurrency, rate or users", c.By)
	}
	if len(c.Bounds) == 0 {
		return c, errors.New("no SLO bounds to search against")
	}
	c.fillZero()
	return c, c.validate()
}

// fillZero gives each zero setting its default: the start, the highest
// load (by what is searched), the growth, the resolution and the repeats.
func (c *Config) fillZero() {
	if c.Start == 0 {
		c.Start = 1
	}
	if c.Max == 0 {
		c.Max = DefaultMaxConcurrency
		if c.By == slo.ByRate {
			c.Max = DefaultMaxRate
		}
	}
	if c.Growth == 0 {
		c.Growth = DefaultGrowth
	}
	if c.Resolution == 0 {
		c.Resolution = DefaultResolution
	}
	switch c.MaxRepeats {
	case 0:
		c.MaxRepeats = DefaultMaxRepeats
	case NoRepeats:
		c.MaxRepeats = 0
	}
}

// validate checks the filled settings' ranges, naming the first one out
// of range.
func (c Config) validate() error {
	switch {
	case !(c.Start > 0) || math.IsInf(c.Start, 0):
		return fmt.Errorf("start %v: want a positive load", c.Start)
	case c.By.Whole() && c.Start != math.Trunc(c.Start):
		return fmt.Errorf("start %v: want a whole %s", c.Start, c.By)
	case !(c.Max >= c.Start) || math.IsInf(c.Max, 0):
		return fmt.Errorf("max %v: want a load at least the start %v", c.Max, c.Start)
	case !(c.Growth > 1) || c.Growth > 100:
		return fmt.Errorf("growth %v: want a factor above 1 (and at most 100)", c.Growth)
	case !(c.Resolution > 0) || c.Resolution > DefaultResolution:
		return fmt.Errorf("resolution %v: want a fraction above 0 and at most %v", c.Resolution, DefaultResolution)
	case c.MaxRepeats < 0 || c.MaxRepeats > 10:
		return fmt.Errorf("max repeats %d: want 0 to 10 (NoRepeats for 0)", c.MaxRepeats)
	}
	return nil
}

// Probe is one measurement the search asks for: the load, and its pass
// number (0 for the first measurement of that load, 1… for repeats, which
// the Prober pools with the earlier passes).
type Probe struct {
	Load float64
	Pass int
	// Undecided says the pass measures again a load whose verdict its
	// passes so far leave undecided (a straddling probe's repeat): a
	// borderline load, which a Prober that stops a decisively broken
	// pass early runs whole, so that its pooled verdict rests on whole
	// passes rather than on one stopped where it happened to look worst.
	Undecided bool
}

// Verdict is a probe's outcome against the SLO.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
)

// Stop is why a search ended.
type Stop string

// Reasons a search ends.
const (
	// Resolved: the bracket between the last pass and the first fail is
	// within the resolution.
	Resolved Stop = "resolved"
	// Saturated: a passing load saturated the server; more load would buy
	// only latency.
	Saturated Stop = "saturated"
	// MaxLoad: every load up to the highest allowed passed.
	MaxLoad Stop = "max_load"
	// FirstLoadFails: the first load already fails the SLO.
	FirstLoadFails Stop = "first_load_fails"
	// OutOfTime: the time allowed ran out (--max-time).
	OutOfTime Stop = "max_time"
	// Interrupted: the search was cancelled (Ctrl-C) or a probe failed.
	Interrupted Stop = "interrupted"
)

// ProbeResult is a load the search measured, with its evidence.
type ProbeResult struct {
	Load float64 `json:"load"`
	// Passes is how many times the load was measured (pooled).
	Passes int `json:"passes"`
	// Requests is the counted requests of all passes.
	Requests int     `json:"requests"`
	Verdict  Verdict `json:"verdict"`
	// Uncertain is true when an interval still straddled a bound after
	// the last pass: the verdict is the measured value's, not a
	// confident one.
	Uncertain bool `json:"uncertain,omitempty"`
	// Checks are the bounded figures with their intervals.
	Checks []slo.Check `json:"checks"`
	// ThroughputTokS, GoodputReqS and GoodputFraction are the level's.
	ThroughputTokS  *float64 `json:"throughput_tok_s"`
	GoodputReqS     *float64 `json:"goodput_req_s,omitempty"`
	GoodputFraction *float64 `json:"goodput_fraction,omitempty"`
	// Saturation is the sign of saturation found at this load, if any.
	Saturation *saturation.Finding `json:"saturation,omitempty"`

	level document.Level
	// passChecks are the bounded figures of each pass alone, where the
	// Prober measured them (ObservePass).
	passChecks [][]slo.Check
}

// Level is the probe's level summary, pooled over its passes.
func (p *ProbeResult) Level() document.Level { return p.level }

// Search is the state machine of one search. Call Next for the probe to
// measure, Observe with its level, until Next says it is done; then
// Answer. What it asks next is a function of the probes measured so far
// (plan), so that a verdict that changes on a later pass moves the search
// back where it belongs. It is not safe for concurrent use.
type Search struct {
	cfg    Config
	probes []*ProbeResult
	// pending is the probe Next handed out and Observe has not taken.
	pending *Probe
	// next is the probe to hand out, nil when the search ended.
	next *Probe
	stop Stop
	// warnings are the drift check's (checkDrift), drifted the loads it
	// warned about.
	warnings []string
	drifted  map[float64]bool
}

// New starts a search.
func New(cfg Config) (*Search, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Search{cfg: cfg, next: &Probe{Load: cfg.Start}}, nil
}

// Config is the search's configuration, defaults filled in.
func (s *Search) Config() Config { return s.cfg }

// Next returns the probe to measure, or false when the search ended.
func (s *Search) Next() (Probe, bool) {
	if s.next == nil {
		return Probe{}, false
	}
	p := *s.next
	s.pending = &p
	return p, true
}

// Observe takes the level that the probe Next returned measured, pooled
// over all of that load's passes so far, and decides the next probe: the
// same load again while its interval straddles a bound and repeats are
// left, else the plan's.
func (s *Search) Observe(l document.Level) {
	if s.pending == nil {
		return
	}
	pr := s.probe(s.pending.Load)
	s.pending = nil
	before := pr.Requests
	pr.Passes++
	pr.level = l
	pr.Requests = l.Requests
	pr.ThroughputTokS, pr.GoodputReqS, pr.GoodputFraction = l.ThroughputTokS, l.GoodputReqS, l.GoodputFraction
	j := slo.Judge(slo.Of(&l), s.cfg.Bounds)
	pr.Checks = j.Checks
	pr.Verdict = Fail
	if j.Pass() {
		pr.Verdict = Pass
	}
	s.checkDrift(pr)
	straddles := j.Undecided()
	if straddles && s.extend(pr, before, &l) {
		pr.Uncertain = false
		s.next = &Probe{Load: pr.Load, Pass: pr.Passes, Undecided: true}
		return
	}
	pr.Uncertain = straddles
	if pr.Saturation == nil && pr.Verdict == Pass {
		var prev *document.Level
		if below := s.below(pr.Load); below != nil {
			prev = &below.level
		}
		if f := saturation.Check(prev, &pr.level); f.Saturated() {
			pr.Saturation = &f
		}
	}
	s.plan()
}

// extend reports whether a probe whose verdict is undecided is measured
// again: while repeats are left, and past them (repeats on) while its
// pooled requests are fewer than the SLO's one-sided bounds need to
// decide a pass (slo.DecisiveRequests: 299 for a p99, more than four
// passes of 72) and its last pass added requests, so that a verdict
// left undecided is one more requests did not settle.
func (s *Search) extend(pr *ProbeResult, before int, l *document.Level) bool {
	if pr.Passes <= s.cfg.MaxRepeats {
		return true
	}
	if s.cfg.MaxRepeats == 0 || l.CIConfidence == nil || pr.Requests <= before {
		return false
	}
	return pr.Requests < slo.DecisiveRequests(s.cfg.Bounds, *l.CIConfidence)
}

// probe returns the result of load, adding it on its first pass.
func (s *Search) probe(load float64) *ProbeResult {
	for _, p := range s.probes {
		if p.Load == load {
			return p
		}
	}
	p := &ProbeResult{Load: load}
	s.probes = append(s.probes, p)
	return p
}

// byLoad is the measured probes in order of load.
func (s *Search) byLoad() []*ProbeResult {
	var ps []*ProbeResult
	for _, p := range s.probes {
		if p.Passes > 0 {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *ProbeResult) int { return cmp.Compare(a.Load, b.Load) })
	return ps
}

// below is the measured probe at the highest load below load; nil if none.
func (s *Search) below(load float64) *ProbeResult {
	var out *ProbeResult
	for _, p := range s.byLoad() {
		if p.Load < load {
			out = p
		}
	}
	return out
}

// bracket is the highest load that passed with every lower load passing
// (lo), and the lowest load that failed (hi); nil where there is none.
func (s *Search) bracket() (lo, hi *ProbeResult) {
	for _, p := range s.byLoad() {
		if p.Verdict == Fail {
			return lo, p
		}
		lo = p
	}
	return lo, nil
}

// plan decides the next probe from the probes measured: grow while
// nothing failed (until saturation or the highest load), else bisect the
// bracket; once the bracket is within the resolution, measure again each
// load that bounds the answer's interval and was measured once, so that
// the interval rests on verdicts that held at two times; then end.
func (s *Search) plan() {
	lo, hi := s.bracket()
	switch {
	case lo == nil:
		s.finish(FirstLoadFails)
	case hi == nil:
		// People who think between turns add load even past the
		// server's saturation, and the answer is where their latency
		// breaks: a users search grows until a bound fails.
		if sat := s.saturated(lo); sat != nil && s.cfg.By != slo.ByUsers {
			s.finish(Saturated)
			return
		}
		if lo.Load >= s.cfg.Max {
			s.finish(MaxLoad)
			return
		}
		s.next = &Probe{Load: s.grow(lo.Load)}
	case !s.resolved(lo.Load, hi.Load):
		s.next = &Probe{Load: s.mid(lo.Load, hi.Load)}
	default:
		s.finish(Resolved)
	}
}

// finish ends the search with why, after the confirmation passes: each
// load that bounds the answer's interval and was measured once is
// measured again first (not when repeats are off).
func (s *Search) finish(why Stop) {
	if s.cfg.MaxRepeats > 0 {
		for _, p := range s.intervalEnds() {
			if p != nil && p.Passes == 1 {
				s.next = &Probe{Load: p.Load, Pass: 1}
				return
			}
		}
	}
	s.end(why)
}

// saturated is the first passing probe up to lo where the server
// saturated; nil if none.
func (s *Search) saturated(lo *ProbeResult) *ProbeResult {
	for _, p := range s.byLoad() {
		if p.Load > lo.Load {
			break
		}
		if p.Saturation != nil {
			return p
		}
	}
	return nil
}

// grow is the next load of the growth phase: load × Growth, at least one
// more for concurrency, at most Max.
func (s *Search) grow(load float64) float64 {
	next := load * s.cfg.Growth
	if s.cfg.By.Whole() {
		next = max(math.Round(next), load+1)
	} else {
		next = roundRate(next)
	}
	return min(next, s.cfg.Max)
}

// resolved reports whether the bracket lo–hi is within the resolution.
func (s *Search) resolved(lo, hi float64) bool {
	width := hi - lo
	if width <= s.cfg.Resolution*lo || (s.cfg.By.Whole() && width <= 1) {
		return true
	}
	m := s.mid(lo, hi)
	return m <= lo || m >= hi
}

// mid is the bisection point of the bracket lo–hi.
func (s *Search) mid(lo, hi float64) float64 {
	m := lo + (hi-lo)/2
	if s.cfg.By.Whole() {
		return math.Floor(m)
	}
	return roundRate(m)
}

// roundRate keeps a rate to four significant digits, so that the loads
// of a search read well.
func roundRate(r float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 4, 64), 64)
	return v
}

// end stops the search.
func (s *Search) end(why Stop) {
	s.next = nil
	if s.stop == "" {
		s.stop = why
	}
}

// Stop ends the search early (out of time, interrupted); a probe handed
// out and not observed is dropped.
func (s *Search) Stop(why Stop) {
	s.pending = nil
	s.end(why)
}

// Done reports whether the search ended.
func (s *Search) Done() bool { return s.next == nil }
