// Package saturation says when more load stops buying throughput: the
// point past which a sweep or a search learns nothing but longer queues.
// One pure function, Check, looks at a level (and the one before it at a
// lower load) and names the first sign it finds; `servebench run
// --stop-when-saturated` and `servebench find` both use it.
package saturation

import (
	"fmt"

	"github.com/servebench/servebench/document"
)

// Reason is a sign of saturation.
type Reason string

// Signs of saturation, in the order Check looks for them.
const (
	// None: the level shows no sign.
	None Reason = ""
	// Preempted: the server preempted requests during the level (its
	// KV cache could not hold them all).
	Preempted Reason = "preempted"
	// KVCacheFull: the server's KV-cache usage reached KVCacheLimit.
	KVCacheFull Reason = "kv_cache_full"
	// RateShortfall: an open-loop level sent at less than MinRateRatio of
	// the rate its schedule asked for (the cap on requests in flight was
	// full: the server did not keep up).
	RateShortfall Reason = "rate_shortfall"
	// QueueGrowing: the server's waiting-requests gauge kept rising
	// through an open-loop level.
	QueueGrowing Reason = "queue_growing"
	// ThroughputFlat: throughput rose by less than MinGain over the
	// previous, lower load while latency rose.
	ThroughputFlat Reason = "throughput_flat"
)

// Thresholds of the signs.
const (
	// MinGain is the relative throughput gain below which a step of load
	// bought nothing (5%).
	MinGain = 0.05
	// KVCacheLimit is the KV-cache usage at which the cache counts as
	// full (0.95).
	KVCacheLimit = 0.95
	// MinRateRatio is the share of the scheduled rate below which an
	// open-loop level fell short (0.95).
	MinRateRatio = 0.95
	// MinQueueRise is the least rise of the waiting gauge over a level,
	// in requests, that counts as growing; it must also be at least half
	// the level's peak, so that a queue that only fluctuates does not
	// count.
	MinQueueRise = 1.0
)

// Finding is the result of Check: the sign found and its evidence in
// words; Reason None when the level shows none.
type Finding struct {
	Reason Reason `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// Saturated reports whether a sign was found.
func (f Finding) Saturated() bool { return f.Reason != None }

// Check looks for a sign of saturation in cur. prev is the level measured
// before it at a lower load (nil for the first level); only the
// throughput sign needs it. Server signs (preemptions, KV usage, queue)
// need the server's metrics and are skipped where a level has none.
func Check(prev, cur *document.Level) Finding {
	switch {
	case cur.Preemptions != nil && *cur.Preemptions > 0:
		return Finding{Preempted, fmt.Sprintf("the server preempted %g requests", *cur.Preemptions)}
	case cur.PeakKVCacheUsage != nil && *cur.PeakKVCacheUsage >= KVCacheLimit:
		return Finding{KVCacheFull, fmt.Sprintf("KV-cache usage reached %.1f%%", *cur.PeakKVCacheUsage*100)}
	}
	if f := rateShortfall(cur); f.Saturated() {
		return f
	}
	if f := queueGrowing(cur); f.Saturated() {
		return f
	}
	return throughputFlat(prev, cur)
}

// rateShortfall compares an open-loop level's achieved rate with its
// schedule's own rate (the requested rate where the schedule's is
// unknown), so that a Poisson schedule's chance spread does not count.
func rateShortfall(cur *document.Level) Finding {
	if cur.AchievedRate == nil {
		return Finding{}
	}
	want := cur.ScheduledRate
	if want == nil {
		want = cur.RequestedRate
	}
	if want == nil || *want <= 0 || *cur.AchievedRate >= MinRateRatio**want {
		return Finding{}
	}
	return Finding{RateShortfall, fmt.Sprintf("sent %.3g req/s of the %.3g req/s scheduled (%.0f%%)", *cur.AchievedRate, *want, *cur.AchievedRate / *want * 100)}
}

// queueGrowing looks at the waiting gauge's trend over an open-loop
// level.
func queueGrowing(cur *document.Level) Finding {
	if cur.RequestedRate == nil || cur.RequestsWaitingRise == nil || cur.PeakRequestsWaiting == nil {
		return Finding{}
	}
	rise := *cur.RequestsWaitingRise
	if rise < MinQueueRise || rise < *cur.PeakRequestsWaiting/2 {
		return Finding{}
	}
	return Finding{QueueGrowing, fmt.Sprintf("the server's queue grew by %.1f requests through the level (peak %g)", rise, *cur.PeakRequestsWaiting)}
}

// throughputFlat compares throughput and latency with the previous load.
// Latency is the median E2E latency, or the median TTFT where a level has
// no E2E.
func throughputFlat(prev, cur *document.Level) Finding {
	if prev == nil || prev.ThroughputTokS == nil || cur.ThroughputTokS == nil || *prev.ThroughputTokS <= 0 {
		return Finding{}
	}
	gain := *cur.ThroughputTokS / *prev.ThroughputTokS - 1
	if gain >= MinGain {
		return Finding{}
	}
	name, was, now := "E2E p50", prev.E2EP50Ms, cur.E2EP50Ms
	if was == nil || now == nil {
		name, was, now = "TTFT p50", prev.TTFTP50Ms, cur.TTFTP50Ms
	}
	if was == nil || now == nil || *now <= *was {
		return Finding{}
	}
	return Finding{ThroughputFlat, fmt.Sprintf("throughput %+.1f%% over the previous load (%.1f → %.1f tok/s) while %s rose %.1f → %.1f ms",
		gain*100, *prev.ThroughputTokS, *cur.ThroughputTokS, name, *was, *now)}
}
