package find

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/saturation"
	"github.com/servebench/servebench/slo"
)

// Answer is what a search found: the largest load that met the SLO, how
// sure that is, and the evidence.
type Answer struct {
	// Label names the run the probes were recorded under.
	Label string `json:"label,omitempty"`
	// By is what the search varied: concurrency or rate (requests/s).
	By slo.Load `json:"by"`
	// SLO is the budget in Parse's syntax, Bounds its terms.
	SLO    string      `json:"slo"`
	Bounds []slo.Bound `json:"bounds"`
	// Load is the largest load measured that met every bound, with every
	// lower load measured meeting them too; nil when none did.
	Load *float64 `json:"load"`
	// LoadCILow and LoadCIHigh bound the largest load that meets the SLO
	// (docs/metrics.md, "servebench find"): from the highest load that
	// passed with no interval straddling a bound, to the load below the
	// lowest that failed so (concurrency) or up to it (rate, exclusive).
	// Nil where unbounded: nothing passed confidently, or nothing failed.
	LoadCILow  *float64 `json:"load_ci_low"`
	LoadCIHigh *float64 `json:"load_ci_high"`
	// ThroughputTokS, GoodputReqS and GoodputFraction are the level's at
	// Load.
	ThroughputTokS  *float64 `json:"throughput_tok_s"`
	GoodputReqS     *float64 `json:"goodput_req_s,omitempty"`
	GoodputFraction *float64 `json:"goodput_fraction,omitempty"`
	// FirstFail is the lowest load measured that failed, and FailedBy
	// the bounds it broke; nil and empty when none failed.
	FirstFail *float64    `json:"first_fail"`
	FailedBy  []slo.Break `json:"failed_by,omitempty"`
	// SaturatedAt and Saturation are the load where the server saturated
	// and the sign, when the growth stopped there.
	SaturatedAt *float64            `json:"saturated_at,omitempty"`
	Saturation  *saturation.Finding `json:"saturation,omitempty"`
	// Stop is why the search ended.
	Stop Stop `json:"stop"`
	// Probes are the loads measured, in the order first measured; Passes
	// and Requests their totals.
	Probes   []ProbeResult `json:"probes"`
	Passes   int           `json:"passes"`
	Requests int           `json:"requests"`
	// Warnings say what makes the answer doubtful: a load whose passes
	// differed beyond their intervals (the server drifted).
	Warnings []string `json:"warnings,omitempty"`
}

// Answer is the search's answer so far (final once Done).
func (s *Search) Answer() Answer {
	a := Answer{By: s.cfg.By, SLO: slo.Text(s.cfg.Bounds), Bounds: s.cfg.Bounds, Stop: s.stop}
	for _, p := range s.probes {
		if p.Passes == 0 {
			continue
		}
		a.Probes = append(a.Probes, *p)
		a.Passes += p.Passes
		a.Requests += p.Requests
	}
	lo, hi := s.bracket()
	if lo != nil {
		a.Load = ptr(lo.Load)
		a.ThroughputTokS, a.GoodputReqS, a.GoodputFraction = lo.ThroughputTokS, lo.GoodputReqS, lo.GoodputFraction
		if sat := s.saturated(lo); sat != nil && hi == nil {
			a.SaturatedAt, a.Saturation = ptr(sat.Load), sat.Saturation
		}
	}
	if hi != nil {
		a.FirstFail = ptr(hi.Load)
		a.FailedBy = slo.Judge(slo.Of(&hi.level), s.cfg.Bounds).Broken
	}
	a.LoadCILow, a.LoadCIHigh = s.interval()
	a.Warnings = slices.Clone(s.warnings)
	return a
}

// intervalEnds are the probes that bound the answer's interval: the
// highest load that passed with no interval straddling a bound, with only
// passes below it, and the lowest load above the answer that failed so;
// nil where there is none.
func (s *Search) intervalEnds() (ends [2]*ProbeResult) {
	lo, _ := s.bracket()
	for _, p := range s.byLoad() {
		if p.Verdict == Fail {
			break
		}
		if !p.Uncertain {
			ends[0] = p
		}
	}
	for _, p := range s.byLoad() {
		if p.Verdict == Fail && !p.Uncertain && (lo == nil || p.Load > lo.Load) {
			ends[1] = p
			break
		}
	}
	return ends
}

// interval bounds the largest load that meets the SLO from the interval's
// end probes: the confident pass, and the confident fail (one below it
// for concurrency, exclusive for rate).
func (s *Search) interval() (lo, hi *float64) {
	ends := s.intervalEnds()
	if ends[0] != nil {
		lo = ptr(ends[0].Load)
	}
	if ends[1] != nil {
		v := ends[1].Load
		if s.cfg.By.Whole() {
			v--
		}
		hi = ptr(v)
	}
	return lo, hi
}

func ptr(v float64) *float64 { return &v }

// Line is the answer in one line a person can act on, e.g.
// "concurrency 4 meets ttft_p95 ≤ 120 ms (interval 4–4) at 3,605.2 tok/s,
// goodput 28.1 req/s (99.8% of requests); 5 breaks it: ttft_p95 151.3 ms >
// 120 ms. 6 probes, 2,400 requests."
func (a Answer) Line() string {
	var b strings.Builder
	by := string(a.By)
	terms := make([]string, len(a.Bounds))
	for i, bd := range a.Bounds {
		terms[i] = bd.String()
	}
	budget := strings.Join(terms, ", ")
	if a.Label != "" {
		b.WriteString(a.Label + ": ")
	}
	switch {
	case a.Load == nil && a.FirstFail != nil:
		fmt.Fprintf(&b, "no %s tried meets %s: the lowest, %s, breaks it (%s)", by, budget, a.By.Format(*a.FirstFail), breaks(a.FailedBy))
	case a.Load == nil:
		fmt.Fprintf(&b, "no answer for %s: the search stopped (%s) before a load was judged", budget, a.Stop)
	default:
		fmt.Fprintf(&b, "%s %s meets %s (interval %s)", by, a.By.Format(*a.Load), budget, a.intervalText())
		fmt.Fprintf(&b, " at %s tok/s", decimals(a.ThroughputTokS, 1))
		if a.GoodputReqS != nil && a.GoodputFraction != nil {
			fmt.Fprintf(&b, ", goodput %s req/s (%s%% of requests)", decimals(a.GoodputReqS, 2), strconv.FormatFloat(math.Round(*a.GoodputFraction*1000)/10, 'f', 1, 64))
		}
		switch {
		case a.FirstFail != nil:
			fmt.Fprintf(&b, "; %s breaks it: %s", a.By.Format(*a.FirstFail), breaks(a.FailedBy))
		case a.Stop == Saturated && a.Saturation != nil:
			fmt.Fprintf(&b, "; the server saturated there (%s), so more load buys only latency", a.Saturation.Detail)
		case a.Stop == MaxLoad:
			b.WriteString("; every load up to the highest allowed passed")
		}
	}
	if a.Stop == OutOfTime || a.Stop == Interrupted {
		fmt.Fprintf(&b, " [search cut short: %s]", a.Stop)
	}
	fmt.Fprintf(&b, ". %d probes, %d passes, %d requests.", len(a.Probes), a.Passes, a.Requests)
	return b.String()
}

// intervalText writes the answer's interval: "4–5", "≥ 4", "12.5–< 14".
func (a Answer) intervalText() string {
	lo, hi := "?", "?"
	if a.LoadCILow != nil {
		lo = a.By.Format(*a.LoadCILow)
	}
	if a.LoadCIHigh != nil {
		hi = a.By.Format(*a.LoadCIHigh)
		if a.By == slo.ByRate {
			hi = "< " + hi
		}
	}
	switch {
	case a.LoadCILow == nil && a.LoadCIHigh == nil:
		return "unbounded"
	case a.LoadCIHigh == nil:
		return "≥ " + lo
	case a.LoadCILow == nil:
		return "≤ " + hi
	}
	return lo + "–" + hi
}

func breaks(bs []slo.Break) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return strings.Join(parts, "; ")
}

// Contains reports whether load lies in the answer's interval (for rate
// searches the upper end is exclusive).
func (a Answer) Contains(load float64) bool {
	if a.LoadCILow != nil && load < *a.LoadCILow {
		return false
	}
	if a.LoadCIHigh == nil {
		return true
	}
	if a.By == slo.ByRate {
		return load < *a.LoadCIHigh
	}
	return load <= *a.LoadCIHigh
}

// decimals writes *v with prec decimals, "—" for nil (a figure the level
// lacks), as report's tables show numbers.
func decimals(v *float64, prec int) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "—"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}
