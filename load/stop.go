package load

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/servebench/servebench/record"
)

// LevelStop makes the check that may end a level early: called as each
// level starts, it returns a check (nil: none) that the level's counted
// Results are handed to, one at a time, as they end; a check that
// returns a reason ("ttft_p95 decisively above 1000 ms") stops the level
// as the level's own length would: no further request, turn or arrival
// is sent, those in flight end and count. The level's level_end line
// then carries a warning that says so, since its figures come from fewer
// requests than planned. A search stops a level whose SLO verdict is
// decided to break (slo.BreakWatch); every method checks it the same way.
type LevelStop func(l Level) func(r *record.Result) (why string)

// levelStop is the running level's early stop: its check, and what it
// decided.
type levelStop struct {
	halt    atomic.Bool
	mu      sync.Mutex
	check   func(*record.Result) string
	why     string
	counted int // counted Results ended
}

// begin readies the stop of level l under stop (nil: none).
func (s *levelStop) begin(l Level, stop LevelStop) {
	s.halt.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.check, s.why, s.counted = nil, "", 0
	if stop != nil {
		s.check = stop(l)
	}
}

// result hands one ended Result to the check; warm-ups are not counted.
func (s *levelStop) result(r *record.Result) {
	if r.Warmup {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counted++
	if s.check == nil || s.why != "" {
		return
	}
	if why := s.check(r); why != "" {
		s.why = why
		s.halt.Store(true)
	}
}

// halted reports whether the check stopped the level.
func (s *levelStop) halted() bool { return s.halt.Load() }

// halting reports whether the level sends nothing more: the run was
// cancelled, or its early stop decided.
func (r *runner) halting() bool { return r.ctx.Err() != nil || r.stop.halted() }

// note is the level's warning when the check stopped it early:
// "stopped after 87 of 2048 counted turns: ttft_p95 decisively above
// 1000 ms"; "" when it ran its length. planned is the level's planned
// counted requests, unit what they are.
func (s *levelStop) note(planned int, unit string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why == "" {
		return ""
	}
	return fmt.Sprintf("stopped after %d of %d counted %s: %s", s.counted, planned, unit, s.why)
}

// plannedCounted is the counted requests level l plans under the sweep's
// method, and whether they are turns or requests, for the note of an
// early stop.
func (r *runner) plannedCounted(l Level) (int, string) {
	switch {
	case r.s.Method == Users:
		return countTarget(l), "turns"
	case l.Sessions > 0 && r.s.Sessions != nil:
		return l.Requests, "turns"
	}
	return r.s.Method.Total(l), "requests"
}

// stopNote adds the early stop's warning to the level's level_end line.
func (r *runner) stopNote(l Level, end *record.LevelEnd) {
	if w := r.stop.note(r.plannedCounted(l)); w != "" {
		end.Fields = merge(end.Fields, &record.Observations{Warnings: []string{w}})
	}
}
