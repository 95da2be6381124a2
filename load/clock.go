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

// Tracker is implemented by a virtual Clock that must know when every
// goroutine of a sweep waits, so that it may move its time (see Clock:
// "Knowing that moment is the clock owner's part"). load tells it about
// its own goroutines and the waits among them; the Clock already sees
// its Sleeps and AfterFuncs, and the Client its Do calls.
//
// The accounting is in tokens: the goroutine that calls Sweep.Do holds
// one; Busy(+1) gives one to each goroutine load starts, before it
// starts; a goroutine gives its token back with Busy(−1) when it ends or
// starts to wait on another goroutine, and the goroutine that ends that
// wait hands it a token (Busy(+1)) before giving up its own. So the
// count of tokens never drops to zero while a goroutine is about to act,
// and reaches zero exactly when every goroutine of the sweep waits on the
// Clock or the Client: then the Clock may move its time.
//
// With a Clock that is not a Tracker (RealClock), load tracks nothing.
type Tracker interface {
	// Busy adds delta tokens (+1: a goroutine may act; −1: it waits or
	// ended).
	Busy(delta int)
}

// noTracker is the Tracker of a Clock that tracks nothing.
type noTracker struct{}

func (noTracker) Busy(int) {}

// trackerOf returns c's Tracker, or one that tracks nothing.
func trackerOf(c Clock) Tracker {
	if t, ok := c.(Tracker); ok {
		return t
	}
	return noTracker{}
}
