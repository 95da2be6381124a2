package load

import (
	"context"
	"time"
)

// Clock is the time a Sweep runs on. load reads the time only with Now and
// waits for it only with Sleep and AfterFunc of its Clock, never with the
// time package itself (a test holds every file but this one to that). The
// default, RealClock, is the machine's monotonic clock.
//
// The contract, for a clock other than the real one (a fake in tests, a
// virtual clock that a simulated server shares):
//
//   - Every wait for time is a call on the Clock: Sleep blocks the calling
//     goroutine until d has passed on the clock or ctx ends; AfterFunc runs
//     f on its own goroutine once d has passed. A virtual clock therefore
//     sees each goroutine enter and leave its waits; there are no timer
//     channels it could not see received from.
//   - load's waits for time are few: the rate method's Sleep until the
//     Pacer's next due time (one goroutine per rate level, one Sleep at a
//     time); a multi-turn session's Sleep for the think time before each
//     turn after the first (one per session in flight, on the session's
//     goroutine); and, once the sweep's context is cancelled, one
//     AfterFunc for the grace period of requests in flight, stopped before
//     Do returns. Pool and batch levels of single requests never wait for
//     time.
//   - Besides those, load's goroutines wait only on each other (workers,
//     the batch gate, the rate method's cap on requests in flight, the one
//     goroutine that calls the Sink) and on the calls it makes: Client.Do,
//     Source.Items, Sink and Observer methods.
//   - Times load records are differences of Now: Result.StartNS is Now −
//     the sweep's start, ScheduledNS the level's start + Pacer.Due.
//     Request.RunStart is the sweep's start on this clock, so the Client
//     must measure its timings (StartNS refined at the write, TTFT, E2E,
//     chunk offsets) on the same clock: backend's Clients measure on the
//     machine's monotonic clock and go with RealClock only.
//
// Driving a whole sweep in virtual time follows from that: a virtual clock
// whose time moves only when its owner advances it (to the earliest
// pending Sleep or AfterFunc deadline) may advance once every goroutine of
// the sweep and of the simulated server waits on the clock or on another
// goroutine that does — for a simulated Client whose Do waits only with
// this Clock, once every request in flight and the rate pacer (if any) are
// asleep on it. Knowing that moment is the clock owner's part: inside a
// testing/synctest bubble the Go runtime knows it (use RealClock there,
// whose time the bubble makes virtual; TestRateInVirtualTime does); a
// program that drives a sweep itself needs the waits among load's own
// goroutines listed above to tell the clock, too.
type Clock interface {
	// Now returns the current time on the clock.
	Now() time.Time
	// Sleep waits until d has passed on the clock or ctx is done and
	// reports whether d passed (false: ctx ended first). For d ≤ 0 it
	// returns at once, true unless ctx is done.
	Sleep(ctx context.Context, d time.Duration) bool
	// AfterFunc calls f on its own goroutine once d has passed on the
	// clock. stop cancels the call and reports whether it did (false: f
	// was already called or stopped).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the machine's clock: time.Now (with its monotonic reading),
// timers and time.AfterFunc.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits on a timer or ctx.
func (RealClock) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
