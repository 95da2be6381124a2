package stats

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// PromptTolerance is the relative deviation of the mean prompt length from
// its target above which a level gets a warning (2%).
const PromptTolerance = 0.02

// Accumulator gathers the Results of one level and summarizes them. The
// live progress line and the final report use the same Accumulator, so
// what a person watches is what the report says. The zero value is ready
// to use; it is not safe for concurrent use.
type Accumulator struct {
	level   int
	started bool

	requests, errors int
	byReason         map[string]int

	// spans is the first send and last finish of each repeat (batch
	// method; pool and rate levels have only repeat 0).
	spans map[int]span

	outTokens      int
	outReported    int
	noOutput       int
	expectedOut    int
	mismatch       int
	minOut, maxOut int
	// promptOnTarget, promptTargetSum and promptTargetN sum the
	// server-reported and the aimed-at prompt tokens of the successful
	// requests that had a target, for the prompt-length warning (requests
	// without one, such as a mix's image requests or a session's later
	// turns, which carry the server's answers, are left out of it).
	promptOnTarget  int
	promptTargetSum int
	promptTargetN   int
	ttft, tpot, e2e []float64 // nanoseconds
	itl             []float64 // nanoseconds per token
	prompt          []float64 // tokens
	lag             []float64 // send − scheduled time (rate method), nanoseconds

	// Coordinated omission (rate method): each scheduled request's
	// scheduled time and lag, every scheduled single request's span
	// (send, last chunk) and every session's (its first turn's send to
	// its last turn's end) for the peak in flight, and the latencies of
	// successful ones from the scheduled time, all in nanoseconds.
	scheduled            []schedSample
	spansInFlight        []span
	sessionSpans         map[int]span
	ttftSched, e2eSched  []float64
	ttftSent, e2eSentAll []float64

	// Realistic workloads (issue 14, workload.go): the prompt cache,
	// turns of sessions, reasoning.
	cache     cacheAcc
	turns     turns
	reasoning reasoningAcc
}

// schedSample is one scheduled request: when it was due and how late it
// was sent, nanoseconds, and whether the level's schedule placed it (an
// arrival: a single request, or a session's first turn) rather than its
// session's previous turn (a later turn, due at that turn's end plus the
// think time).
type schedSample struct {
	at, lag int64
	arrival bool
}

// Add counts r in the summary. Warm-up Results are ignored.
func (a *Accumulator) Add(r *record.Result) {
	if r.Warmup {
		return
	}
	end := r.StartNS + r.E2ENS
	if !a.started {
		a.started = true
		a.level = r.Level
	}
	a.addSpan(r.Repeat, r.StartNS, end)
	a.requests++
	if r.ScheduledNS != nil {
		a.addScheduled(r)
	}
	a.turns.add(r)
	if !r.OK() {
		a.addError(r)
		return
	}
	a.addSuccess(r)
}

// addScheduled counts a request the rate method scheduled: its lag, its
// span in flight and, when it succeeded, its latencies from the scheduled
// time (the send-time ones beside them, for the means and E2E p99 only
// rate levels report).
func (a *Accumulator) addScheduled(r *record.Result) {
	lag := r.StartNS - *r.ScheduledNS
	a.lag = append(a.lag, float64(lag))
	a.scheduled = append(a.scheduled, schedSample{at: *r.ScheduledNS, lag: lag, arrival: r.Turn <= 1})
	a.addInFlight(r)
	if !r.OK() {
		return
	}
	a.e2eSched = append(a.e2eSched, float64(lag+r.E2ENS))
	a.e2eSentAll = append(a.e2eSentAll, float64(r.E2ENS))
	if r.TTFTNS != nil {
		a.ttftSched = append(a.ttftSched, float64(lag+*r.TTFTNS))
		a.ttftSent = append(a.ttftSent, float64(*r.TTFTNS))
	}
}

// addInFlight adds a scheduled request's span in flight, or widens its
// session's: what the rate method's cap on those in flight counts.
func (a *Accumulator) addInFlight(r *record.Result) {
	sp := span{r.StartNS, r.StartNS + r.E2ENS}
	if r.Session == nil {
		a.spansInFlight = append(a.spansInFlight, sp)
		return
	}
	if a.sessionSpans == nil {
		a.sessionSpans = map[int]span{}
	}
	if old, ok := a.sessionSpans[*r.Session]; ok {
		sp = span{min(old.start, sp.start), max(old.end, sp.end)}
	}
	a.sessionSpans[*r.Session] = sp
}

// span is the wall-clock extent of one repeat, in nanoseconds since the
// run's start.
type span struct{ start, end int64 }

func (a *Accumulator) addSpan(repeat int, start, end int64) {
	if a.spans == nil {
		a.spans = map[int]span{}
	}
	sp, ok := a.spans[repeat]
	if !ok {
		a.spans[repeat] = span{start, end}
		return
	}
	a.spans[repeat] = span{min(sp.start, start), max(sp.end, end)}
}

// wallNS is the level's wall time: first send to last finish, or for a
// level of several batches the sum of each batch's own wall time, so that
// the pauses between batches (GPU memory reads, releasing the next batch)
// do not count as time the server had work.
func (a *Accumulator) wallNS() int64 {
	var sum int64
	for _, sp := range a.spans {
		sum += sp.end - sp.start
	}
	return sum
}

func (a *Accumulator) addError(r *record.Result) {
	a.errors++
	reason := string(r.Reason)
	if reason == "" {
		reason = "other"
	}
	if a.byReason == nil {
		a.byReason = map[string]int{}
	}
	a.byReason[reason]++
}

func (a *Accumulator) addSuccess(r *record.Result) {
	a.cache.add(r)
	a.reasoning.add(r)
	a.e2e = append(a.e2e, float64(r.E2ENS))
	if r.TTFTNS != nil {
		a.ttft = append(a.ttft, float64(*r.TTFTNS))
	}
	if r.PromptTokens != nil {
		a.prompt = append(a.prompt, float64(*r.PromptTokens))
		if r.ExpectedPromptTokens > 0 {
			a.promptOnTarget += *r.PromptTokens
			a.promptTargetSum += r.ExpectedPromptTokens
			a.promptTargetN++
		}
	}
	a.itl = appendITL(a.itl, r)
	if r.OutputTokens == nil {
		a.noOutput++
		return
	}
	out := *r.OutputTokens
	a.outTokens += out
	a.outReported++
	if tp, ok := TPOTNS(r); ok {
		a.tpot = append(a.tpot, tp)
	}
	if r.ExpectedOutputTokens > 0 && out != r.ExpectedOutputTokens {
		if a.mismatch == 0 {
			a.minOut, a.maxOut = out, out
		}
		a.mismatch++
		a.expectedOut = r.ExpectedOutputTokens
		a.minOut, a.maxOut = min(a.minOut, out), max(a.maxOut, out)
	}
}

// TPOTNS is a request's time per output token after the first, in
// nanoseconds: (E2E − TTFT) / (output_tokens − 1). It is defined only for a
// successful request with a TTFT and more than one server-reported output
// token.
func TPOTNS(r *record.Result) (float64, bool) {
	if !r.OK() || r.TTFTNS == nil || r.OutputTokens == nil || *r.OutputTokens <= 1 {
		return 0, false
	}
	return float64(r.E2ENS-*r.TTFTNS) / float64(*r.OutputTokens-1), true
}

// appendITL appends r's inter-token latencies: the gaps between
// consecutive content chunks, each divided by the number of tokens the
// later chunk carried (ChunkTokens, where the server gave them; else one)
// and counted once per token.
func appendITL(dst []float64, r *record.Result) []float64 {
	offs := r.ChunkOffsetsNS
	for i := 1; i < len(offs); i++ {
		k := 1
		if i < len(r.ChunkTokens) && r.ChunkTokens[i] > 1 {
			k = r.ChunkTokens[i]
		}
		gap := float64(offs[i]-offs[i-1]) / float64(k)
		for range k {
			dst = append(dst, gap)
		}
	}
	return dst
}

// Requests is the number of counted (non-warm-up) requests added so far.
func (a *Accumulator) Requests() int { return a.requests }

// Level summarizes what was added, by the docs/metrics.md definitions:
//
//   - Concurrency: the Level field of the Results (callers of rate levels
//     overwrite it with the cap on requests in flight).
//   - Requests: counted requests, failed ones included; Errors: failed ones,
//     also per Reason in ErrorsByReason.
//   - ThroughputTokS: Σ server-reported output tokens of successful requests
//     / wall time from the level's first send to its last finish (over all
//     its requests, failed ones included); for the batch method, the sum
//     of each batch's first send to last finish, so the pauses between
//     batches do not count. WallSeconds and OutputTokens are that wall
//     time and that sum. A level whose requests all failed has 0
//     (nothing was generated), not null.
//   - TTFT p50/p95/p99, TPOT p50/p95 (TPOTNS), E2E p50/p95 and ITL p50/p99
//     in milliseconds, over successful requests, by Percentile.
//   - MeanPromptTokens and PromptTokensSD (sample SD) of server-reported
//     prompt tokens of successful requests.
//   - ScheduleLagP99Ms: p99 of send time − scheduled time, for requests the
//     rate method scheduled; with it (coordinated omission) the lag's
//     p50, p95 and mean and max, TTFT and E2E from the scheduled time
//     (p50, p95, p99, mean), the send-time TTFT and E2E means and E2E p99
//     beside them, and PeakInFlight. A session's later turns count here
//     too, scheduled at their previous turn's end plus the think time.
//   - Over the level's arrivals only, the requests its schedule placed
//     (every request of a level of single requests; the sessions' first
//     turns of a multi-turn level, so sessions/s): AchievedRate (n−1) /
//     (last send − first send), ScheduledRate (n−1) / (last scheduled −
//     first scheduled), and the lag's growth from the first quarter of
//     the arrivals to the last (by scheduled time). CheckSchedule then
//     decides ClientLimited.
//   - The prompt cache (PromptTokensSent, PromptTokensCached,
//     PromptCacheHitRate, ServerPrefillP50Ms), Turns, and the reasoning
//     figures (TTFR, TTFA, ReasoningTokens, AnswerTokens): workload.go.
//
// Telemetry fields (PeakVRAMGiB, PeakKVCacheUsage, Preemptions) stay null:
// they do not come from requests. Values that cannot be computed are null.
// Warnings name output-token mismatches, missing token counts, prompt
// lengths off target by more than PromptTolerance (the mean reported
// prompt of the successful requests that had a target against the mean of
// their targets), and truncated streams.
func (a *Accumulator) Level() document.Level {
	l := a.counts()
	if len(a.byReason) > 0 {
		l.ErrorsByReason = maps.Clone(a.byReason)
	}
	a.latencies(&l)
	if m, ok := Mean(a.prompt); ok {
		l.MeanPromptTokens = &m
	}
	if sd, ok := StdDev(a.prompt); ok {
		l.PromptTokensSD = &sd
	}
	a.schedule(&l)
	l.Warnings = a.warnings()
	l.Warnings = append(l.Warnings, a.cache.fill(&l)...)
	l.Turns = a.turns.summaries()
	l.Warnings = append(l.Warnings, a.reasoning.fill(&l)...)
	return l
}

// Live is the part of Level that a live progress line shows: Concurrency,
// Requests, Errors, WallSeconds, OutputTokens, ThroughputTokS and
// TTFTP50Ms, by the same definitions. It leaves out the other percentiles
// (ITL's sample grows with every chunk), so it stays cheap to call while a
// level runs.
func (a *Accumulator) Live() document.Level {
	l := a.counts()
	l.TTFTP50Ms = pctMs(sorted(a.ttft), 50)
	return l
}

// counts fills the request counts, wall time, output tokens and
// throughput of the level.
func (a *Accumulator) counts() document.Level {
	l := document.Level{Concurrency: a.level, Requests: a.requests, Errors: a.errors}
	if !a.started {
		return l
	}
	wall := float64(a.wallNS()) / 1e9
	l.WallSeconds = &wall
	if a.outReported > 0 || a.errors == a.requests {
		// Every request failed: the level generated nothing, a measured
		// zero. Only successes without a reported count leave it null.
		out := a.outTokens
		l.OutputTokens = &out
		if wall > 0 {
			l.ThroughputTokS = ptr.To(float64(out) / wall)
		}
	}
	return l
}

func (a *Accumulator) latencies(l *document.Level) {
	ttft, tpot, e2e, itl := sorted(a.ttft), sorted(a.tpot), sorted(a.e2e), sorted(a.itl)
	l.TTFTP50Ms, l.TTFTP95Ms, l.TTFTP99Ms = pctMs(ttft, 50), pctMs(ttft, 95), pctMs(ttft, 99)
	l.TPOTP50Ms, l.TPOTP95Ms = pctMs(tpot, 50), pctMs(tpot, 95)
	l.E2EP50Ms, l.E2EP95Ms = pctMs(e2e, 50), pctMs(e2e, 95)
	l.ITLP50Ms, l.ITLP99Ms = pctMs(itl, 50), pctMs(itl, 99)
}

func (a *Accumulator) schedule(l *document.Level) {
	if len(a.lag) == 0 {
		return
	}
	lag := sorted(a.lag)
	l.ScheduleLagP50Ms, l.ScheduleLagP95Ms, l.ScheduleLagP99Ms = pctMs(lag, 50), pctMs(lag, 95), pctMs(lag, 99)
	l.ScheduleLagMeanMs, l.ScheduleLagMaxMs = meanMs(lag), ptr.To(lag[len(lag)-1]/1e6)
	a.scheduledRate(l)
	l.PeakInFlight = ptr.To(peakInFlight(slices.AppendSeq(slices.Clone(a.spansInFlight), maps.Values(a.sessionSpans))))
	a.schedLatencies(l)
}

// scheduledRate sets, over the level's arrivals (the requests its
// schedule placed: not a session's later turns), the achieved and the
// scheduled rate and the lag's growth from the first quarter of them (by
// scheduled time) to the last; the rates need at least two arrivals, the
// growth four.
func (a *Accumulator) scheduledRate(l *document.Level) {
	var s []schedSample
	firstSend, lastSend := int64(math.MaxInt64), int64(math.MinInt64)
	for _, x := range a.scheduled {
		if x.arrival {
			s = append(s, x)
			firstSend, lastSend = min(firstSend, x.at+x.lag), max(lastSend, x.at+x.lag)
		}
	}
	slices.SortStableFunc(s, func(x, y schedSample) int { return cmp.Compare(x.at, y.at) })
	n := len(s)
	if n > 1 && lastSend > firstSend {
		l.AchievedRate = ptr.To(float64(n-1) / (float64(lastSend-firstSend) / 1e9))
	}
	if n > 1 && s[n-1].at > s[0].at {
		l.ScheduledRate = ptr.To(float64(n-1) / (float64(s[n-1].at-s[0].at) / 1e9))
	}
	if q := n / 4; q >= 1 {
		var first, last float64
		for i := range q {
			first += float64(s[i].lag)
			last += float64(s[n-q+i].lag)
		}
		l.ScheduleLagGrowthMs = ptr.To((last - first) / float64(q) / 1e6)
	}
}

// schedLatencies sets TTFT and E2E from the scheduled time, and the
// send-time means and E2E p99 beside them.
func (a *Accumulator) schedLatencies(l *document.Level) {
	ts, es := sorted(a.ttftSched), sorted(a.e2eSched)
	l.TTFTSchedP50Ms, l.TTFTSchedP95Ms, l.TTFTSchedP99Ms, l.TTFTSchedMeanMs = pctMs(ts, 50), pctMs(ts, 95), pctMs(ts, 99), meanMs(ts)
	l.E2ESchedP50Ms, l.E2ESchedP95Ms, l.E2ESchedP99Ms, l.E2ESchedMeanMs = pctMs(es, 50), pctMs(es, 95), pctMs(es, 99), meanMs(es)
	l.TTFTMeanMs, l.E2EMeanMs = meanMs(a.ttftSent), meanMs(a.e2eSentAll)
	l.E2EP99Ms = pctMs(sorted(a.e2eSentAll), 99)
}

// peakInFlight is the most spans open at once; a span ending when
// another starts does not overlap it.
func peakInFlight(spans []span) int {
	type edge struct {
		at    int64
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		edges = append(edges, edge{s.start, 1}, edge{s.end, -1})
	}
	slices.SortFunc(edges, func(x, y edge) int {
		if c := cmp.Compare(x.at, y.at); c != 0 {
			return c
		}
		return x.delta - y.delta // ends first
	})
	peak, open := 0, 0
	for _, e := range edges {
		open += e.delta
		peak = max(peak, open)
	}
	return peak
}

// meanMs is the mean of nanoseconds in milliseconds, nil when empty.
func meanMs(xs []float64) *float64 {
	m, ok := Mean(xs)
	if !ok {
		return nil
	}
	return ptr.To(m / 1e6)
}

func (a *Accumulator) warnings() []string {
	var w []string
	if a.mismatch > 0 {
		w = append(w, fmt.Sprintf("%d of %d successful requests generated a number of output tokens other than the %d asked for (min %d, max %d); they are counted in throughput and TPOT as reported",
			a.mismatch, a.requests-a.errors, a.expectedOut, a.minOut, a.maxOut))
	}
	if a.noOutput > 0 {
		w = append(w, fmt.Sprintf("%d successful requests had no server-reported output token count; they are left out of throughput and TPOT", a.noOutput))
	}
	if a.promptTargetN > 0 {
		target := float64(a.promptTargetSum) / float64(a.promptTargetN)
		mean := float64(a.promptOnTarget) / float64(a.promptTargetN)
		if dev := (mean - target) / target; math.Abs(dev) > PromptTolerance {
			w = append(w, fmt.Sprintf("mean prompt length %.1f tokens is %+.1f%% off the %.0f-token target", mean, dev*100, target))
		}
	}
	if n := a.byReason[string(record.ReasonTruncated)]; n > 0 {
		w = append(w, fmt.Sprintf("%d streams ended without their end marker (counted as errors: %s)", n, record.ReasonTruncated))
	}
	return w
}

// SummarizeLevel summarizes the Results of one level (see
// Accumulator.Level for the definitions). Warm-ups are ignored.
func SummarizeLevel(rs []record.Result) document.Level {
	var a Accumulator
	for i := range rs {
		a.Add(&rs[i])
	}
	return a.Level()
}

// Levels groups rs by Level, in order of first appearance, leaving out
// warm-ups, and summarizes each group with SummarizeLevel. rs should hold
// one run's Results (see summary.Runs for files with several runs).
func Levels(rs []record.Result) []document.Level {
	var order []int
	groups := map[int][]record.Result{}
	for _, r := range rs {
		if r.Warmup {
			continue
		}
		if _, ok := groups[r.Level]; !ok {
			order = append(order, r.Level)
		}
		groups[r.Level] = append(groups[r.Level], r)
	}
	out := make([]document.Level, 0, len(order))
	for _, lv := range order {
		l := SummarizeLevel(groups[lv])
		l.Classes = Classes(groups[lv])
		out = append(out, l)
	}
	return out
}

// Classes summarizes the Results of one level per request class (run
// --mix: Result.Class), each by SummarizeLevel over that class's Results
// alone, in order of class name; nil when no Result has a class.
func Classes(rs []record.Result) []document.Level {
	groups := map[string][]record.Result{}
	for _, r := range rs {
		if r.Class != "" && !r.Warmup {
			groups[r.Class] = append(groups[r.Class], r)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(groups))
	out := make([]document.Level, 0, len(names))
	for _, name := range names {
		l := SummarizeLevel(groups[name])
		l.Class = name
		out = append(out, l)
	}
	return out
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// pctMs is the p-th percentile of sorted nanoseconds, in milliseconds, or
// nil for an empty sample.
func pctMs(s []float64, p float64) *float64 {
	if len(s) == 0 {
		return nil
	}
	return ptr.To(percentileSorted(s, p) / 1e6)
}

// MergeLevel copies into dst what was measured over the level from outside
// its requests (telemetry), where src has it: peak VRAM, peak KV usage,
// preemptions, peak requests running and waiting, the prefix-cache hit
// rate; and appends src's warnings. Request-derived fields of dst are left alone.
func MergeLevel(dst *document.Level, src *record.Observations) {
	set := func(d **float64, s *float64) {
		if s != nil {
			*d = ptr.To(*s)
		}
	}
	set(&dst.PeakVRAMGiB, src.PeakVRAMGiB)
	set(&dst.PeakKVCacheUsage, src.PeakKVCacheUsage)
	set(&dst.Preemptions, src.Preemptions)
	set(&dst.PeakRequestsRunning, src.PeakRequestsRunning)
	set(&dst.PeakRequestsWaiting, src.PeakRequestsWaiting)
	set(&dst.PrefixCacheHitRate, src.PrefixCacheHitRate)
	dst.Warnings = append(dst.Warnings, src.Warnings...)
}
