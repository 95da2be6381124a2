package stats

import (
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

	firstStart, lastStart int64
	// spans is the first send and last finish of each repeat (batch
	// method; pool and rate levels have only repeat 0).
	spans map[int]span

	outTokens       int
	outReported     int
	noOutput        int
	expectedOut     int
	mismatch        int
	minOut, maxOut  int
	promptTargetSum int
	promptTargetN   int
	ttft, tpot, e2e []float64 // nanoseconds
	itl             []float64 // nanoseconds per token
	prompt          []float64 // tokens
	lag             []float64 // send − scheduled time (rate method), nanoseconds

	// Realistic workloads (issue 14, workload.go): the prompt cache,
	// turns of sessions, reasoning; and the first and last scheduled send
	// (a multi-turn rate level schedules only its sessions' first turns).
	cache cacheAcc
	// targeted holds the reported prompt tokens of successful requests
	// that aimed at a length (a multi-turn level's first turns only).
	targeted              []float64
	turns                 turns
	reasoning             reasoningAcc
	schedFirst, schedLast int64
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
		a.firstStart, a.lastStart = r.StartNS, r.StartNS
	}
	a.firstStart = min(a.firstStart, r.StartNS)
	a.lastStart = max(a.lastStart, r.StartNS)
	a.addSpan(r.Repeat, r.StartNS, end)
	a.requests++
	if r.ScheduledNS != nil {
		if len(a.lag) == 0 {
			a.schedFirst, a.schedLast = r.StartNS, r.StartNS
		}
		a.schedFirst, a.schedLast = min(a.schedFirst, r.StartNS), max(a.schedLast, r.StartNS)
		a.lag = append(a.lag, float64(r.StartNS-*r.ScheduledNS))
	}
	a.turns.add(r)
	if r.ExpectedPromptTokens > 0 {
		a.promptTargetSum += r.ExpectedPromptTokens
		a.promptTargetN++
	}
	if !r.OK() {
		a.addError(r)
		return
	}
	a.addSuccess(r)
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
	if r.ExpectedPromptTokens > 0 && r.PromptTokens != nil {
		a.targeted = append(a.targeted, float64(*r.PromptTokens))
	}
	a.e2e = append(a.e2e, float64(r.E2ENS))
	if r.TTFTNS != nil {
		a.ttft = append(a.ttft, float64(*r.TTFTNS))
	}
	if r.PromptTokens != nil {
		a.prompt = append(a.prompt, float64(*r.PromptTokens))
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
//   - AchievedRate: (n−1) / (last send − first send) in requests/s over
//     the n requests the rate method scheduled (every request of a level
//     of single requests; the first turns, so sessions/s, of a multi-turn
//     level), and ScheduleLagP99Ms: p99 of send time − scheduled time.
//   - The prompt cache (PromptTokensSent, PromptTokensCached,
//     PromptCacheHitRate, ServerPrefillP50Ms), Turns, and the reasoning
//     figures (TTFR, TTFA, ReasoningTokens, AnswerTokens): workload.go.
//
// Telemetry fields (PeakVRAMGiB, PeakKVCacheUsage, Preemptions) stay null:
// they do not come from requests. Values that cannot be computed are null.
// Warnings name output-token mismatches, missing token counts, prompt
// lengths off target by more than PromptTolerance, and truncated streams.
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
	l.ScheduleLagP99Ms = pctMs(sorted(a.lag), 99)
	if span := a.schedLast - a.schedFirst; len(a.lag) > 1 && span > 0 {
		l.AchievedRate = ptr.To(float64(len(a.lag)-1) / (float64(span) / 1e9))
	}
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
	// The target is held against the requests that aimed at it (in a
	// multi-turn level, the first turns: later ones carry the answers).
	if meanPrompt, ok := Mean(a.targeted); a.promptTargetN > 0 && ok {
		target := float64(a.promptTargetSum) / float64(a.promptTargetN)
		if dev := (meanPrompt - target) / target; math.Abs(dev) > PromptTolerance {
			w = append(w, fmt.Sprintf("mean prompt length %.1f tokens is %+.1f%% off the %.0f-token target", meanPrompt, dev*100, target))
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
		out = append(out, SummarizeLevel(groups[lv]))
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
