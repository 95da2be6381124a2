package slo

import (
	"fmt"

	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// BreakWatch watches a level's counted requests as they end and says
// when the level's verdict is decided to break: when, on the requests so
// far, the one-sided lower bound of a latency percentile that a ceiling
// bounds lies beyond the ceiling (the rule Judge decides a break by, its
// distribution-free order-statistic part: stats.LowBoundAbove). A search
// stops such a level early, since more requests would not make it pass.
//
// A bound checked after every request and acted on at the first crossing
// would break far more often than 1 − confidence at a load that truly
// holds it (optional stopping: one of many looks crosses by chance), and
// the borderline loads that decide a search's answer would then stop
// early. So it looks at the bounds only when the requests counted reach
// DecisiveRequests (59 for a p95 at 95%: the fewest that can decide
// either way) and each doubling of that, and spends the 1 − confidence
// over the looks, half of what is left at each (Bonferroni: at most
// 1 − confidence in all): a level that breaks by far stops at its first
// look, one near its bound runs its length and is judged as before.
// Bounds that are not on a per-request latency's percentile (throughput,
// error rate, goodput) never stop a level. It is not safe for concurrent
// use.
type BreakWatch struct {
	// miss is the 1 − confidence the next look may spend; next the
	// counted requests it waits for, counted those so far.
	miss          float64
	next, counted int
	terms         []watchTerm
}

// watchTerm is one watched bound and its counts so far.
type watchTerm struct {
	b     Bound
	q     float64
	value func(*record.Result) (float64, bool)
	// n counts the requests with the latency, within those at or below
	// the bound's value.
	n, within int
}

// latency is the per-request latency, in ms, whose percentiles a bound
// on metric m is on, by the latency row its figure fills (the figure
// table's Latency: "TTFT", "TPOT", "E2E"); nil for a metric that is not
// one.
func latency(m Metric) func(*record.Result) (float64, bool) {
	f := m.figure()
	if f == nil {
		return nil
	}
	ms := func(ns float64) float64 { return ns / 1e6 }
	switch f.Latency {
	case "TTFT":
		return func(r *record.Result) (float64, bool) {
			if r.TTFTNS == nil {
				return 0, false
			}
			return ms(float64(*r.TTFTNS)), true
		}
	case "TPOT":
		return func(r *record.Result) (float64, bool) {
			v, ok := stats.TPOTNS(r)
			return ms(v), ok
		}
	case "E2E":
		return func(r *record.Result) (float64, bool) { return ms(float64(r.E2ENS)), true }
	}
	return nil
}

// NewBreakWatch watches the latency percentile ceilings of bounds at
// confidence (0: stats.DefaultConfidence); it never stops a level when
// bounds have none.
func NewBreakWatch(bounds []Bound, confidence float64) *BreakWatch {
	if confidence == 0 {
		confidence = stats.DefaultConfidence
	}
	w := &BreakWatch{miss: (1 - confidence) / 2, next: max(DecisiveRequests(bounds, confidence), 1)}
	for _, b := range bounds {
		v := latency(b.Metric)
		if b.Percentile() == 0 || b.lower() || v == nil {
			continue
		}
		w.terms = append(w.terms, watchTerm{b: b, q: b.Percentile() / 100, value: v})
	}
	return w
}

// Add counts one counted request that ended (a failed one has no
// latency and counts for no bound, as in the level's percentiles) and
// returns why the level's verdict is now decided to break ("ttft_p95
// decisively above 1000 ms"), or "" while it is not.
func (w *BreakWatch) Add(r *record.Result) string {
	ok := r.OK()
	for i := range w.terms {
		t := &w.terms[i]
		if v, has := t.value(r); ok && has {
			t.n++
			if v <= t.b.Value {
				t.within++
			}
		}
	}
	w.counted++
	if w.counted < w.next {
		return ""
	}
	conf := 1 - w.miss
	w.next *= 2
	w.miss /= 2
	for _, t := range w.terms {
		if stats.LowBoundAbove(t.n, t.within, t.q, conf) {
			return fmt.Sprintf("%s decisively above %s", t.b.Metric, t.b.format(t.b.Value))
		}
	}
	return ""
}
