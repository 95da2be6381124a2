package find

import (
	"context"

	"github.com/servebench/servebench/document"
)

// Prober measures the probes of a search: whatever can run a level at a
// load, a live server, a launched profile or a simulator, is a target.
type Prober interface {
	// Probe measures p (another pass of its load when p.Pass > 0) and
	// returns that load's level summary pooled over all its passes so
	// far, with its confidence intervals and goodput.
	Probe(ctx context.Context, p Probe) (document.Level, error)
}

// PassProber is a Prober that can also say what the latest probe's pass
// measured alone, for the search's drift check (Search.ObservePass).
type PassProber interface {
	Prober
	// PassLevel is the level summary of the latest Probe's pass alone;
	// false when it has none.
	PassLevel() (document.Level, bool)
}

// Drive runs the search against pr until it ends, ctx is cancelled, a
// probe fails, or outOfTime (nil: never) says, before a probe, that no
// time is left. It returns the answer so far in every case, with the
// error of a failed probe.
func Drive(ctx context.Context, s *Search, pr Prober, outOfTime func() bool) (Answer, error) {
	for {
		if ctx.Err() != nil {
			s.Stop(Interrupted)
			break
		}
		if outOfTime != nil && outOfTime() && !s.Done() {
			s.Stop(OutOfTime)
			break
		}
		p, ok := s.Next()
		if !ok {
			break
		}
		l, err := pr.Probe(ctx, p)
		if err != nil {
			s.Stop(Interrupted)
			return s.Answer(), err
		}
		if ctx.Err() != nil {
			// The level was cut short: its verdict would be on part of it.
			s.Stop(Interrupted)
			break
		}
		if pp, ok := pr.(PassProber); ok {
			if one, ok := pp.PassLevel(); ok {
				s.ObservePass(one)
			}
		}
		s.Observe(l)
	}
	return s.Answer(), nil
}
