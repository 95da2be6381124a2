package stats

import (
	"fmt"

	"github.com/servebench/servebench/document"
)

// The criteria of CheckSchedule (docs/metrics.md, "Coordinated
// omission").
const (
	// ClientLimitedMinRequests is the fewest arrivals (scheduled requests;
	// sessions, in a multi-turn level) a level needs to be judged: with
	// fewer, a quarter of the level is one arrival and chance decides.
	ClientLimitedMinRequests = 8
	// ClientLimitedRateShare is the share of the scheduled rate below
	// which the achieved rate counts as fallen behind (95%).
	ClientLimitedRateShare = 0.95
	// ClientLimitedGrowthMs is the least growth of the schedule lag, in
	// milliseconds, from the level's first quarter to its last, that
	// counts as the client falling behind: 25 ms, or one mean gap of the
	// schedule when that is longer, so that timer jitter on a busy
	// machine is not taken for it.
	ClientLimitedGrowthMs = 25.0
)

// CheckSchedule decides whether the client, not the server, limited a
// rate level's rate, and says so as data: ClientLimited, and a warning
// when true. The client limited the rate when both
//
//   - it fell behind: AchievedRate < ClientLimitedRateShare ×
//     ScheduledRate (the sends were spread over more time than the
//     schedule allowed), and
//   - it kept falling behind: ScheduleLagGrowthMs > max(
//     ClientLimitedGrowthMs, the schedule's mean gap in ms).
//
// Lag that is large but steady (every request late by the same time) is
// not a limit on the rate; the *_sched_* latencies show its cost all the
// same. The warning names the cause the records can tell apart: requests
// in flight reached the level's cap (l.Concurrency: --max-concurrency),
// so requests waited for a slot; or they did not, so the client itself
// (CPU, scheduling) could not send in time. Levels without a schedule,
// or with fewer than ClientLimitedMinRequests arrivals (requests the
// schedule placed: sessions, in a multi-turn level), are left unjudged
// (nil).
func CheckSchedule(l *document.Level) {
	if l.ScheduledRate == nil || l.AchievedRate == nil || l.ScheduleLagGrowthMs == nil || arrivals(l) < ClientLimitedMinRequests {
		return
	}
	scheduled, achieved, growth := *l.ScheduledRate, *l.AchievedRate, *l.ScheduleLagGrowthMs
	threshold := max(ClientLimitedGrowthMs, 1000/scheduled)
	limited := achieved < ClientLimitedRateShare*scheduled && growth > threshold
	l.ClientLimited = &limited
	if !limited {
		return
	}
	unit, what := "req/s", "requests"
	if n := arrivals(l); n < l.Requests {
		unit, what = "arrivals/s", "sessions and single requests"
		if len(l.Turns) > 0 && l.Turns[0].Turn == 1 && l.Turns[0].Requests == n {
			unit, what = "sessions/s", "sessions"
		}
	}
	cause := what + " in flight stayed below the cap, so the client itself (CPU, scheduling) could not send in time"
	if l.PeakInFlight != nil && *l.PeakInFlight >= l.Concurrency {
		cause = fmt.Sprintf("%s in flight reached the cap of %d (--max-concurrency), so later %s waited for a slot", what, l.Concurrency, what)
	} else if l.PeakInFlight != nil {
		cause = fmt.Sprintf("%s in flight peaked at %d, below the cap of %d, so the client itself (CPU, scheduling) could not send in time", what, *l.PeakInFlight, l.Concurrency)
	}
	requested := ""
	if l.RequestedRate != nil {
		requested = fmt.Sprintf(", requested %.3g", *l.RequestedRate)
	}
	l.Warnings = append(l.Warnings, fmt.Sprintf(
		"client-limited: servebench sent %.3g %s against a schedule of %.3g %s%s, and its schedule lag grew by %.0f ms from the first quarter of the level to the last; %s. The server never saw the scheduled rate: read ttft_sched_* and e2e_sched_*, which count the client's queueing",
		achieved, unit, scheduled, unit, requested, growth, cause))
}

// arrivals is the number of requests a level's schedule placed: its
// requests less the later turns of its sessions (Turns), which follow
// their previous turn rather than the schedule.
func arrivals(l *document.Level) int {
	n := l.Requests
	for _, t := range l.Turns {
		if t.Turn > 1 {
			n -= t.Requests
		}
	}
	return n
}
