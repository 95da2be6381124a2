package find

import (
	"fmt"
	"strconv"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/slo"
)

// ObservePass takes the level of the pending probe's latest pass alone
// (not pooled with its earlier passes), for the drift check; call it
// before Observe. A Prober that cannot measure a pass alone leaves it
// out, and the search then has no drift check.
func (s *Search) ObservePass(l document.Level) {
	if s.pending == nil {
		return
	}
	pr := s.probe(s.pending.Load)
	pr.passChecks = append(pr.passChecks, slo.Judge(slo.Of(&l), s.cfg.Bounds).Checks)
}

// checkDrift compares the latest pass of pr with each earlier one and
// keeps a warning, once per load, when a bounded figure's intervals do
// not overlap: the server changed between the passes (it warmed up, a
// GPU throttled, another load came), and the verdicts the search pooled
// may not hold at any one time. Passes that each broke the SLO are left
// alone: past what the server sustains its queue grows, so latency grows
// with time inside a level and two passes differ without the server
// changing, and the verdict (breaks) stands either way.
func (s *Search) checkDrift(pr *ProbeResult) {
	n := len(pr.passChecks)
	if n < 2 || s.drifted[pr.Load] {
		return
	}
	last := pr.passChecks[n-1]
	for k, earlier := range pr.passChecks[:n-1] {
		if broke(earlier) && broke(last) {
			continue
		}
		for i := range min(len(last), len(earlier)) {
			a, b := earlier[i], last[i]
			if !apart(a, b) {
				continue
			}
			if s.drifted == nil {
				s.drifted = map[float64]bool{}
			}
			s.drifted[pr.Load] = true
			s.warnings = append(s.warnings, fmt.Sprintf(
				"%s %s measured twice differed beyond the intervals: %s %s (%s) on pass %d, %s (%s) on pass %d; the server changed during the search, so the answer may not hold: measure again, or check what else ran",
				s.cfg.By, strconv.FormatFloat(pr.Load, 'f', -1, 64), a.Bound.Metric,
				value(a), interval(a), k+1, value(b), interval(b), n))
			return
		}
	}
}

// apart reports whether two checks of one figure have intervals that do
// not overlap.
func apart(a, b slo.Check) bool {
	if a.CILow == nil || a.CIHigh == nil || b.CILow == nil || b.CIHigh == nil {
		return false
	}
	return *b.CILow > *a.CIHigh || *b.CIHigh < *a.CILow
}

// broke reports whether a pass's checks decided that it broke the SLO:
// some bound beyond its threshold, not merely undecided.
func broke(cs []slo.Check) bool {
	for _, c := range cs {
		if !c.Holds && !c.Straddles {
			return true
		}
	}
	return false
}

// value is c's value as verdicts write it ("18920.35 ms"), "?" when
// unknown.
func value(c slo.Check) string {
	if c.Value == nil {
		return "?"
	}
	return c.Bound.Format(*c.Value)
}

// interval is c's interval as verdicts write it ("18250.1–19080.2 ms");
// apart has made sure both ends are known.
func interval(c slo.Check) string {
	return c.Bound.FormatInterval(*c.CILow, *c.CIHigh)
}
