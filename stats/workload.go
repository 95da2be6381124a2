package stats

import (
	"fmt"
	"maps"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// Summaries of realistic workloads: the server's prefix cache,
// multi-turn sessions turn by turn, and reasoning models. docs/metrics.md
// defines each figure.

// cacheAcc gathers prompt tokens sent and served from the prefix cache.
type cacheAcc struct {
	// sent is Σ reported prompt tokens; reported counts the requests
	// with a cached count, and cached / sentReported are their sums.
	sent, reported, cached, sentReported int
	anyPrompt                            bool
	prefill                              []float64 // server prefill ns
	// reusing counts requests meant to share a prefix (sessions' turns,
	// shared prefixes).
	reusing int
}

func (c *cacheAcc) add(r *record.Result) {
	if r.Turn > 0 || r.PrefixGroup != nil {
		c.reusing++
	}
	if r.PromptTokens != nil {
		c.anyPrompt = true
		c.sent += *r.PromptTokens
		if r.CachedPromptTokens != nil {
			c.reported++
			c.cached += *r.CachedPromptTokens
			c.sentReported += *r.PromptTokens
		}
	}
	if r.Server != nil && r.Server.PromptEvalNS != nil {
		c.prefill = append(c.prefill, float64(*r.Server.PromptEvalNS))
	}
}

// fill writes the level's prompt-cache fields; the warning says when
// requests meant to share prefixes got no cached count from their server
// (backend, the server family, says why where it is Ollama).
func (c *cacheAcc) fill(l *document.Level, backend string) (warnings []string) {
	if c.anyPrompt {
		l.PromptTokensSent = ptr.To(c.sent)
	}
	if c.reported > 0 {
		l.PromptTokensCached = ptr.To(c.cached)
		if c.sentReported > 0 {
			l.PromptCacheHitRate = ptr.To(float64(c.cached) / float64(c.sentReported))
		}
	}
	l.ServerPrefillP50Ms = pctMs(sorted(c.prefill), 50)
	if c.reusing > 0 && c.reported == 0 {
		// Why is Ollama's habit only where the server is Ollama.
		why := ""
		if backend == "ollama" {
			why = " (Ollama counts the whole prompt in prompt_eval_count)"
		}
		warnings = append(warnings, "the server reported no prompt tokens served from its cache for any request"+why+": prompt_tokens_cached and prompt_cache_hit_rate are null; the cache's effect shows in TTFT and server prefill by turn, and in prefix_cache_hit_rate where the server's metrics give it")
	}
	return warnings
}

// turnAcc gathers one turn of a multi-turn level.
type turnAcc struct {
	requests, errors int
	ttft, prompt     []float64
	cached           []float64
	prefill          []float64
}

func (t *turnAcc) add(r *record.Result) {
	t.requests++
	if !r.OK() {
		t.errors++
		return
	}
	if r.TTFTNS != nil {
		t.ttft = append(t.ttft, float64(*r.TTFTNS))
	}
	if r.PromptTokens != nil {
		t.prompt = append(t.prompt, float64(*r.PromptTokens))
	}
	if r.CachedPromptTokens != nil {
		t.cached = append(t.cached, float64(*r.CachedPromptTokens))
	}
	if r.Server != nil && r.Server.PromptEvalNS != nil {
		t.prefill = append(t.prefill, float64(*r.Server.PromptEvalNS))
	}
}

func (t *turnAcc) summary(turn int) document.TurnSummary {
	ttft := sorted(t.ttft)
	s := document.TurnSummary{Turn: turn, Requests: t.requests, Errors: t.errors,
		TTFTP50Ms: pctMs(ttft, 50), TTFTP95Ms: pctMs(ttft, 95), ServerPrefillP50Ms: pctMs(sorted(t.prefill), 50)}
	if m, ok := Mean(t.prompt); ok {
		s.MeanPromptTokens = &m
	}
	if m, ok := Mean(t.cached); ok {
		s.MeanCachedTokens = &m
	}
	return s
}

// turns gathers a level's requests by turn (Result.Turn > 0).
type turns map[int]*turnAcc

func (ts *turns) add(r *record.Result) {
	if r.Turn <= 0 {
		return
	}
	if *ts == nil {
		*ts = turns{}
	}
	acc := (*ts)[r.Turn]
	if acc == nil {
		acc = &turnAcc{}
		(*ts)[r.Turn] = acc
	}
	acc.add(r)
}

// summaries are the turns in order.
func (ts turns) summaries() []document.TurnSummary {
	if len(ts) == 0 {
		return nil
	}
	out := make([]document.TurnSummary, 0, len(ts))
	for _, k := range slices.Sorted(maps.Keys(ts)) {
		out = append(out, ts[k].summary(k))
	}
	return out
}

// reasoningAcc gathers the reasoning figures of a level's successful
// requests.
type reasoningAcc struct {
	ttfr, ttfa                []float64
	reasoning, answer, counts int
	estimated                 bool
	unfinished                int // requests whose answer never began
}

func (a *reasoningAcc) add(r *record.Result) {
	if r.TTFRNS != nil {
		a.ttfr = append(a.ttfr, float64(*r.TTFRNS))
		if r.TTFANS == nil {
			a.unfinished++
		}
	}
	if r.TTFANS != nil {
		a.ttfa = append(a.ttfa, float64(*r.TTFANS))
	}
	if r.ReasoningTokens != nil && r.OutputTokens != nil {
		a.counts++
		a.reasoning += *r.ReasoningTokens
		a.answer += max(*r.OutputTokens-*r.ReasoningTokens, 0)
		a.estimated = a.estimated || r.ReasoningTokensEstimated
	}
}

// fill writes the level's reasoning fields; warnings says what of them
// is estimated or missing.
func (a *reasoningAcc) fill(l *document.Level) (warnings []string) {
	ttfr, ttfa := sorted(a.ttfr), sorted(a.ttfa)
	l.TTFRP50Ms, l.TTFRP95Ms = pctMs(ttfr, 50), pctMs(ttfr, 95)
	l.TTFAP50Ms, l.TTFAP95Ms = pctMs(ttfa, 50), pctMs(ttfa, 95)
	if a.counts > 0 {
		l.ReasoningTokens, l.AnswerTokens = ptr.To(a.reasoning), ptr.To(a.answer)
		l.ReasoningTokensEstimated = a.estimated
	}
	if a.estimated {
		warnings = append(warnings, "the server did not split reasoning from answer tokens: reasoning_tokens and answer_tokens are estimated from the streamed chunks (reasoning_tokens_estimated)")
	}
	if a.unfinished > 0 {
		warnings = append(warnings, fmt.Sprintf("%d requests ended inside their reasoning (no answer token): they have no time to first answer token; raise --max-tokens to see the answers", a.unfinished))
	}
	return warnings
}
