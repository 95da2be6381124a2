package telemetry

import (
	"fmt"

	"github.com/servebench/servebench/internal/ptr"
)

// MetricsSummary is what the server's metrics said about one level. Nil
// fields were not observed (the server does not export them, or no scrape
// succeeded).
type MetricsSummary struct {
	// PeakKVUsage is the largest KV-cache usage fraction (0–1) seen.
	PeakKVUsage *float64
	// Preemptions is the preemption counter's increase over the level.
	Preemptions *float64
	// PeakRunning and PeakWaiting are the largest request gauges seen.
	PeakRunning *float64
	PeakWaiting *float64
	// PeakKVTokensUsed is the largest KV-cache tokens-in-use gauge seen.
	PeakKVTokensUsed *float64
	// KVTokensMax is the KV-cache capacity in tokens, from the last scrape
	// that had it.
	KVTokensMax *float64
	// Cache is the KV-cache configuration from the last scrape that had it.
	Cache CacheConfig
	// PrefixCacheHitRate is the server's prefix-cache hit rate over the
	// level: Δhits / Δqueries of its counters (vLLM V1), else the mean of
	// its hit-rate gauge over the level's scrapes (SGLang, vLLM V0).
	PrefixCacheHitRate *float64
	// WaitingRise is how much the waiting-requests gauge rose over the
	// level along its least-squares line through the scrapes (slope ×
	// span, scrapes taken one interval apart); nil with fewer than three
	// readings of the gauge.
	WaitingRise *float64
	// Scrapes and Failures count scrape attempts that succeeded / failed.
	Scrapes, Failures int
	// Warnings are findings as data (a counter reset, scrape failures).
	Warnings []string
}

// Accumulator folds the Samples of one level into a MetricsSummary. It is
// pure (no clock, no I/O) so it can be tested on captured scrapes; it is
// not safe for concurrent use.
type Accumulator struct {
	s                      MetricsSummary
	preemptions            counterDelta
	cacheQueries, cacheHit counterDelta
	hitRateSum             float64
	hitRateN               int
	lastErr                error
	// dropped counts, per metric, the scrapes whose value was out of
	// range, in order of first sight, with the first such value.
	dropped      []Dropped
	droppedCount map[string]int
	waiting      []float64
}

// counterDelta sums a counter's increases between consecutive scrapes; a
// counter that goes down was reset (server restart) and counts again from
// zero.
type counterDelta struct {
	last   *float64
	n      int // scrapes that carried the counter
	resets int
	total  *float64 // nil until two scrapes carried it
}

func (c *counterDelta) observe(v *float64) {
	if v == nil {
		return
	}
	c.n++
	if c.last == nil {
		c.last = ptr.To(*v)
		return
	}
	step := *v - *c.last
	if step < 0 {
		c.resets++
		step = *v
	}
	total := step
	if c.total != nil {
		total += *c.total
	}
	c.total = &total
	c.last = ptr.To(*v)
}

// Observe folds one successful scrape into the summary.
func (a *Accumulator) Observe(s Sample) {
	a.s.Scrapes++
	a.s.PeakKVUsage = maxPtr(a.s.PeakKVUsage, s.KVUsage)
	a.s.PeakRunning = maxPtr(a.s.PeakRunning, s.Running)
	a.s.PeakWaiting = maxPtr(a.s.PeakWaiting, s.Waiting)
	if s.Waiting != nil {
		a.waiting = append(a.waiting, *s.Waiting)
	}
	a.s.PeakKVTokensUsed = maxPtr(a.s.PeakKVTokensUsed, s.KVTokensUsed)
	if s.KVTokensMax != nil {
		a.s.KVTokensMax = ptr.To(*s.KVTokensMax)
	}
	if !s.Cache.empty() {
		a.s.Cache = s.Cache
	}
	a.preemptions.observe(s.Preemptions)
	a.s.Preemptions = a.preemptions.total
	a.cacheQueries.observe(s.PrefixCacheQueries)
	a.cacheHit.observe(s.PrefixCacheHits)
	if s.PrefixCacheHitRate != nil {
		a.hitRateSum += *s.PrefixCacheHitRate
		a.hitRateN++
	}
	for _, d := range s.Dropped {
		if a.droppedCount == nil {
			a.droppedCount = map[string]int{}
		}
		if a.droppedCount[d.Metric] == 0 {
			a.dropped = append(a.dropped, d)
		}
		a.droppedCount[d.Metric]++
	}
}

// prefixHitRate is the level's prefix-cache hit rate (see
// MetricsSummary.PrefixCacheHitRate); nil when the level queried nothing.
func (a *Accumulator) prefixHitRate() *float64 {
	q, h := a.cacheQueries.total, a.cacheHit.total
	if q != nil && h != nil {
		if *q <= 0 {
			return nil
		}
		return ptr.To(min(*h / *q, 1))
	}
	if a.hitRateN > 0 {
		return ptr.To(a.hitRateSum / float64(a.hitRateN))
	}
	return nil
}

// Fail counts one failed scrape; the last error is kept for the warning.
func (a *Accumulator) Fail(err error) {
	a.s.Failures++
	a.lastErr = err
}

// Summary returns the level's summary with its warnings.
func (a *Accumulator) Summary() MetricsSummary {
	s := a.s
	s.WaitingRise = trendRise(a.waiting)
	s.Warnings = nil
	s.PrefixCacheHitRate = a.prefixHitRate()
	if a.preemptions.n == 1 {
		s.Warnings = append(s.Warnings, "metrics: the preemption counter was read only once during the level, so preemptions is null")
	}
	if a.preemptions.resets > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("metrics: the preemption counter went down %d time(s) during the level (server restarted?); counted from zero after each reset", a.preemptions.resets))
	}
	for _, d := range a.dropped {
		s.Warnings = append(s.Warnings, fmt.Sprintf("metrics: %s was outside %s in %d scrape(s) (first value %s); those values were dropped", d.Metric, d.Range, a.droppedCount[d.Metric], d.Value))
	}
	if a.s.Failures > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("metrics: %d of %d scrapes failed (last: %v)", a.s.Failures, a.s.Failures+a.s.Scrapes, a.lastErr))
	}
	return s
}

// maxPtr returns the larger of cur and v, treating nil as absent.
func maxPtr(cur, v *float64) *float64 {
	if v == nil {
		return cur
	}
	if cur == nil || *v > *cur {
		return ptr.To(*v)
	}
	return cur
}

// trendRise is the rise of the least-squares line through ys, taken at
// x = 0, 1, …: slope × (n − 1); nil for fewer than three values.
func trendRise(ys []float64) *float64 {
	n := len(ys)
	if n < 3 {
		return nil
	}
	mx := float64(n-1) / 2
	my := 0.0
	for _, y := range ys {
		my += y
	}
	my /= float64(n)
	var sxy, sxx float64
	for i, y := range ys {
		dx := float64(i) - mx
		sxy += dx * (y - my)
		sxx += dx * dx
	}
	return ptr.To(sxy / sxx * float64(n-1))
}
