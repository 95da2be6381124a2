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

	outTokens   int
	outReported int
	noOutput    int
	expectedOut int
	// asksVary says the mismatched requests asked for different output
	// lengths (people's drawn answers), so no one length is "asked for".
	asksVary       bool
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
	scheduled           []schedSample
	spansInFlight       []span
	sessionSpans        map[int]span
	ttftSched, e2eSched []float64

	// Realistic workloads (workload.go): the prompt cache,
	// turns of sessions, reasoning.
	cache     cacheAcc
	turns     turns
	people    people
	reasoning reasoningAcc

	// implausible counts successful requests whose records hold a token
	// count that cannot be true (record.PlausibleOutputTokens,
	// record.PlausibleTokens: a records file written by hand or by an
	// older servebench); their counts are left out. firstImplausible
	// describes the first.
	implausible      int
	firstImplausible string
	// warned counts requests whose records carry warnings
	// (record.Result.Warnings); firstWarning is the first of them.
	warned       int
	firstWarning string

	// Options tune the summary: the confidence of its intervals and the
	// goodput budget. Set them before the first Add.
	Options Options
	// rows keep what the intervals and goodput need of every counted
	// request, in the order added.
	rows []row
	// sortedLat are sorted copies of ttft, tpot, e2e and itl, kept
	// between summaries: find summarizes a level as it ends and again in
	// the final document, and sorting the inter-token gaps (one per
	// output token) is the dearest part of a summary.
	sortedLat [4]sortedCache
	// adds counts the calls of Add; memo is the last Level (levelMemo).
	adds int
	memo levelMemo
}

// sortedCache is a sorted copy of an append-only sample: as the sample
// only grows, its length tells whether the copy is of its present values.
type sortedCache struct {
	n int
	s []float64
}

// of is xs sorted, from the cache when xs has not grown since.
func (c *sortedCache) of(xs []float64) []float64 {
	if c.s == nil || c.n != len(xs) {
		c.s, c.n = sorted(xs), len(xs)
	}
	return c.s
}

// Options are what a level summary needs beyond its Results.
type Options struct {
	// Confidence is the confidence of the intervals (0–1); 0 means
	// DefaultConfidence.
	Confidence float64
	// Budget is the goodput budget; nil leaves goodput null.
	Budget *record.GoodputBudget
	// Backend is the server family of the run ("ollama", "vllm"), for
	// warnings that explain one server's way of counting; "" when not
	// known.
	Backend string
}

func (o Options) confidence() float64 {
	if o.Confidence > 0 && o.Confidence < 1 {
		return o.Confidence
	}
	return DefaultConfidence
}

// row is one counted request as the intervals and goodput see it. Times
// are nanoseconds; ttft and tpot are NaN where the request has none, out
// is −1 where the server reported no output count.
type row struct {
	repeat     int
	start      int64
	scheduled  int64
	hasSched   bool
	e2e        float64
	ttft, tpot float64
	out        int
	ok         bool
	// arrival says the level's schedule placed the request: a single
	// request, or a session's first turn.
	arrival bool
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
	a.adds++
	if r.Warmup {
		return
	}
	end := r.StartNS + r.E2ENS
	if !a.started {
		a.started = true
		a.level = r.Level
	}
	a.addSpan(r.Repeat, r.StartNS, end)
	a.rows = append(a.rows, newRow(r))
	a.requests++
	if r.ScheduledNS != nil {
		a.addScheduled(r)
	}
	a.turns.add(r)
	a.people.add(r)
	if !r.OK() {
		a.addError(r)
		return
	}
	a.addSuccess(r)
}

// addScheduled counts a request the rate method scheduled: its lag, its
// span in flight and, when it succeeded, its latencies from the scheduled
// time.
func (a *Accumulator) addScheduled(r *record.Result) {
	lag := r.StartNS - *r.ScheduledNS
	a.lag = append(a.lag, float64(lag))
	a.scheduled = append(a.scheduled, schedSample{at: *r.ScheduledNS, lag: lag, arrival: r.Turn <= 1})
	a.addInFlight(r)
	if !r.OK() {
		return
	}
	a.e2eSched = append(a.e2eSched, float64(lag+r.E2ENS))
	if r.TTFTNS != nil {
		a.ttftSched = append(a.ttftSched, float64(lag+*r.TTFTNS))
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

func newRow(r *record.Result) row {
	w := row{repeat: r.Repeat, start: r.StartNS, e2e: float64(r.E2ENS), ttft: math.NaN(), tpot: math.NaN(), out: -1, ok: r.OK(),
		arrival: r.Turn <= 1}
	if r.ScheduledNS != nil {
		w.scheduled, w.hasSched = *r.ScheduledNS, true
	}
	if r.TTFTNS != nil {
		w.ttft = float64(*r.TTFTNS)
	}
	if tp, ok := TPOTNS(r); ok {
		w.tpot = tp
	}
	if r.OutputTokens != nil {
		w.out = *r.OutputTokens
	}
	return w
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
	if len(r.Warnings) > 0 {
		if a.warned == 0 {
			a.firstWarning = r.Warnings[0]
		}
		a.warned++
	}
	if p := r.PromptTokens; p != nil && !record.PlausibleTokens(*p) {
		a.noteImplausible(r, "prompt_tokens", *p)
	} else if p != nil {
		a.prompt = append(a.prompt, float64(*p))
		if r.ExpectedPromptTokens > 0 {
			a.promptOnTarget += *p
			a.promptTargetSum += r.ExpectedPromptTokens
			a.promptTargetN++
		}
	}
	a.itl = appendITL(a.itl, r)
	if o := r.OutputTokens; o != nil && !record.PlausibleOutputTokens(*o, r.ExpectedOutputTokens) {
		a.noteImplausible(r, "output_tokens", *o)
		return
	}
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
		a.asksVary = a.asksVary || a.mismatch > 0 && r.ExpectedOutputTokens != a.expectedOut
		a.mismatch++
		a.expectedOut = r.ExpectedOutputTokens
		a.minOut, a.maxOut = min(a.minOut, out), max(a.maxOut, out)
	}
}

// noteImplausible counts a request whose record holds a token count
// that cannot be true.
func (a *Accumulator) noteImplausible(r *record.Result, field string, n int) {
	if a.implausible == 0 {
		a.firstImplausible = fmt.Sprintf("request %d: %s %d", r.Seq, field, n)
	}
	a.implausible++
}

// TPOTNS is a request's time per output token after the first, in
// nanoseconds: (E2E − TTFT) / (output_tokens − 1). It is defined only for a
// successful request with a TTFT and more than one server-reported output
// token that can be true (record.PlausibleOutputTokens).
func TPOTNS(r *record.Result) (float64, bool) {
	if !r.OK() || r.TTFTNS == nil || r.OutputTokens == nil || *r.OutputTokens <= 1 ||
		!record.PlausibleOutputTokens(*r.OutputTokens, r.ExpectedOutputTokens) {
		return 0, false
	}
	return float64(r.E2ENS-*r.TTFTNS) / float64(*r.OutputTokens-1), true
}

// appendITL appends r's inter-token latencies: the gaps between
// consecutive content chunks, each divided by the number of tokens the
// later chunk carried (ChunkTokens, where the server gave them and they
// can be true: chunkTokens; else one) and counted once per token.
func appendITL(dst []float64, r *record.Result) []float64 {
	offs := r.ChunkOffsetsNS
	tokens := chunkTokens(r)
	if need := len(offs); cap(dst)-len(dst) < need {
		// A level's gaps run to millions; append grows a large slice by
		// a quarter, which copies it some five times over on the way
		// there. Doubling copies it about once.
		dst = slices.Grow(dst, max(need, len(dst)))
	}
	for i := 1; i < len(offs); i++ {
		k := 1
		if tokens != nil {
			k = tokens[i]
		}
		gap := float64(offs[i]-offs[i-1]) / float64(k)
		for range k {
			dst = append(dst, gap)
		}
	}
	return dst
}

// chunkTokens returns r.ChunkTokens when they can be true: one per content
// chunk, each at least 1, adding up to at most the plausible output count.
// Otherwise (a records file written by an older servebench, which took
// Ollama's constant "completion_tokens": 0 for a running count, or one
// written by hand) it returns nil, and every chunk counts as one token.
func chunkTokens(r *record.Result) []int {
	ks := r.ChunkTokens
	if len(ks) == 0 || len(ks) != len(r.ChunkOffsetsNS) {
		return nil
	}
	limit := record.MaxTokenCount
	if r.ExpectedOutputTokens > 0 {
		limit = r.ExpectedOutputTokens + 1
	}
	sum := 0
	for _, k := range ks {
		if k < 1 || k > limit-sum {
			return nil
		}
		sum += k
	}
	return ks
}

// Requests is the number of counted (non-warm-up) requests added so far.
func (a *Accumulator) Requests() int { return a.requests }

// Succeeded is the number of successful counted requests added so far.
func (a *Accumulator) Succeeded() int { return a.requests - a.errors }

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
//   - TTFT, TPOT (TPOTNS), E2E and ITL in milliseconds over successful
//     requests: the mean and the p50, p90, p95 and p99 of each, by Mean
//     and Percentile.
//   - MeanPromptTokens and PromptTokensSD (sample SD) of server-reported
//     prompt tokens of successful requests.
//   - ScheduleLagP99Ms: p99 of send time − scheduled time, for requests the
//     rate method scheduled; with it (coordinated omission) the lag's
//     p50, p95 and mean and max, TTFT and E2E from the scheduled time
//     (p50, p95, p99, mean) to read beside the send-time ones above, and
//     PeakInFlight. A session's later turns count here too, scheduled at
//     their previous turn's end plus the think time.
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
	if l, ok := a.memo.get(a.adds, a.Options); ok {
		return l
	}
	l := a.summarize()
	a.memo.put(a.adds, a.Options, l)
	return l
}

// summarize is Level, computed.
func (a *Accumulator) summarize() document.Level {
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
	a.intervals(&l)
	a.goodput(&l)
	if n := len(a.spans); n > 1 {
		l.Repeats = n
	}
	l.Warnings = a.warnings()
	l.Warnings = append(l.Warnings, a.cache.fill(&l, a.Options.Backend)...)
	l.Turns = a.turns.summaries()
	a.people.fill(&l)
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
	c := &a.sortedLat
	ttft, tpot, e2e, itl := c[0].of(a.ttft), c[1].of(a.tpot), c[2].of(a.e2e), c[3].of(a.itl)
	l.TTFTP50Ms, l.TTFTP95Ms, l.TTFTP99Ms = pctMs(ttft, 50), pctMs(ttft, 95), pctMs(ttft, 99)
	l.TPOTP50Ms, l.TPOTP95Ms = pctMs(tpot, 50), pctMs(tpot, 95)
	l.E2EP50Ms, l.E2EP95Ms = pctMs(e2e, 50), pctMs(e2e, 95)
	l.ITLP50Ms, l.ITLP99Ms = pctMs(itl, 50), pctMs(itl, 99)
	// Means and tails.
	l.TTFTMeanMs, l.TTFTP90Ms = meanMs(ttft), pctMs(ttft, 90)
	l.TPOTMeanMs, l.TPOTP90Ms, l.TPOTP99Ms = meanMs(tpot), pctMs(tpot, 90), pctMs(tpot, 99)
	l.ITLMeanMs, l.ITLP90Ms, l.ITLP95Ms = meanMs(itl), pctMs(itl, 90), pctMs(itl, 95)
	l.E2EMeanMs, l.E2EP90Ms, l.E2EP99Ms = meanMs(e2e), pctMs(e2e, 90), pctMs(e2e, 99)
}

// schedule fills the rate method's figures. With several repeats (find's
// repeated probes) the rates are Σ(n − 1) / Σ(last − first) over the
// repeats, so the pauses between them do not count.
func (a *Accumulator) schedule(l *document.Level) {
	if len(a.lag) == 0 {
		return
	}
	lag := sorted(a.lag)
	l.ScheduleLagP50Ms, l.ScheduleLagP95Ms, l.ScheduleLagP99Ms = pctMs(lag, 50), pctMs(lag, 95), pctMs(lag, 99)
	l.ScheduleLagMeanMs, l.ScheduleLagMaxMs = meanMs(lag), ptr.To(lag[len(lag)-1]/1e6)
	l.AchievedRate = a.rate(func(w row) (int64, bool) { return w.start, w.arrival })
	l.ScheduledRate = a.rate(func(w row) (int64, bool) { return w.scheduled, w.hasSched && w.arrival })
	a.lagGrowth(l)
	l.PeakInFlight = ptr.To(peakInFlight(slices.AppendSeq(slices.Clone(a.spansInFlight), maps.Values(a.sessionSpans))))
	a.schedLatencies(l)
}

// rate is Σ(n − 1) / Σ(last − first) in requests/s over the repeats, of
// the times at picks (the level's arrivals: the requests its schedule
// placed, not a session's later turns); nil without two times in some
// repeat.
func (a *Accumulator) rate(at func(row) (int64, bool)) *float64 {
	type ext struct {
		n           int
		first, last int64
	}
	by := map[int]*ext{}
	for _, w := range a.rows {
		t, ok := at(w)
		if !ok {
			continue
		}
		e := by[w.repeat]
		if e == nil {
			by[w.repeat] = &ext{1, t, t}
			continue
		}
		e.n++
		e.first, e.last = min(e.first, t), max(e.last, t)
	}
	gaps, span := 0, int64(0)
	for _, e := range by {
		gaps += e.n - 1
		span += e.last - e.first
	}
	if gaps < 1 || span <= 0 {
		return nil
	}
	return ptr.To(float64(gaps) / (float64(span) / 1e9))
}

// lagGrowth sets the lag's growth from the first quarter of the level's
// arrivals (by scheduled time: the requests its schedule placed, not a
// session's later turns) to the last; it needs at least four arrivals.
func (a *Accumulator) lagGrowth(l *document.Level) {
	var s []schedSample
	for _, x := range a.scheduled {
		if x.arrival {
			s = append(s, x)
		}
	}
	slices.SortStableFunc(s, func(x, y schedSample) int { return cmp.Compare(x.at, y.at) })
	n := len(s)
	if q := n / 4; q >= 1 {
		var first, last float64
		for i := range q {
			first += float64(s[i].lag)
			last += float64(s[n-q+i].lag)
		}
		l.ScheduleLagGrowthMs = ptr.To((last - first) / float64(q) / 1e6)
	}
}

// schedLatencies sets TTFT and E2E from the scheduled time.
func (a *Accumulator) schedLatencies(l *document.Level) {
	ts, es := sorted(a.ttftSched), sorted(a.e2eSched)
	l.TTFTSchedP50Ms, l.TTFTSchedP95Ms, l.TTFTSchedP99Ms, l.TTFTSchedMeanMs = pctMs(ts, 50), pctMs(ts, 95), pctMs(ts, 99), meanMs(ts)
	l.E2ESchedP50Ms, l.E2ESchedP95Ms, l.E2ESchedP99Ms, l.E2ESchedMeanMs = pctMs(es, 50), pctMs(es, 95), pctMs(es, 99), meanMs(es)
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
		asked := fmt.Sprintf("the %d asked for", a.expectedOut)
		if a.asksVary {
			asked = "each asked for"
		}
		w = append(w, fmt.Sprintf("%d of %d successful requests generated a number of output tokens other than %s (min %d, max %d); they are counted in throughput and TPOT as reported",
			a.mismatch, a.requests-a.errors, asked, a.minOut, a.maxOut))
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
	if a.implausible > 0 {
		w = append(w, fmt.Sprintf("%d successful requests hold token counts that cannot be true (%s; above 2^31-1, negative, or above max_tokens+1); those counts are left out", a.implausible, a.firstImplausible))
	}
	if a.warned > 0 {
		w = append(w, fmt.Sprintf("%d successful requests carry warnings (first: %s)", a.warned, a.firstWarning))
	}
	if n := a.byReason[string(record.ReasonTruncated)]; n > 0 {
		w = append(w, fmt.Sprintf("%d streams ended without their end marker (counted as errors: %s)", n, record.ReasonTruncated))
	}
	return w
}

// SummarizeLevel summarizes the Results of one level (see
// Accumulator.Level for the definitions) with the default Options: 95%
// intervals, no goodput. Warm-ups are ignored.
func SummarizeLevel(rs []record.Result) document.Level {
	return Summarize(rs, Options{})
}

// Summarize summarizes the Results of one level with opts.
func Summarize(rs []record.Result, opts Options) document.Level {
	a := Accumulator{Options: opts}
	for i := range rs {
		a.Add(&rs[i])
	}
	return a.Level()
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
// its requests (telemetry), where src has it (record.Observations'
// figures), and appends src's warnings to the level's own.
// Request-derived fields of dst are left alone.
func MergeLevel(dst *document.Level, src *record.Observations) {
	dst.MergeFigures(src)
	mergeEnergy(dst, src)
	dst.Warnings = append(dst.Warnings, src.Warnings...)
}

// mergeEnergy copies the level's energy and power into dst and derives
// joules per output token and tokens/s per watt.
func mergeEnergy(dst *document.Level, src *record.Observations) {
	if src.EnergyJ == nil {
		return
	}
	dst.EnergyJ, dst.MeanPowerW, dst.PeakPowerW = ptr.To(*src.EnergyJ), src.MeanPowerW, src.PeakPowerW
	dst.EnergyMethod = src.EnergyMethod
	if dst.OutputTokens != nil && *dst.OutputTokens > 0 {
		dst.JoulesPerOutputToken = ptr.To(*src.EnergyJ / float64(*dst.OutputTokens))
	}
	if dst.ThroughputTokS != nil && src.MeanPowerW != nil && *src.MeanPowerW > 0 {
		dst.TokSPerWatt = ptr.To(*dst.ThroughputTokS / *src.MeanPowerW)
	}
}

// Cost sets l's dollars per million output tokens from a price per hour
// of the level's wall time or per kWh of its energy (0: not given);
// it stays nil without output tokens, or without energy for a kWh price.
func Cost(l *document.Level, perHour, perKWh float64) {
	if l.OutputTokens == nil || *l.OutputTokens <= 0 {
		return
	}
	mtok := float64(*l.OutputTokens) / 1e6
	switch {
	case perHour > 0 && l.WallSeconds != nil:
		l.CostUSDPerMTok = ptr.To(perHour * *l.WallSeconds / 3600 / mtok)
	case perKWh > 0 && l.EnergyJ != nil:
		l.CostUSDPerMTok = ptr.To(perKWh * *l.EnergyJ / 3.6e6 / mtok)
	}
}
