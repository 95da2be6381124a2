package stats

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/record"
)

// turn builds a successful turn k of session s: TTFT and prefill in ms,
// prompt and cached tokens (cached < 0: the server did not say).
func turn(s, k int, startMs, ttftMs, prefillMs float64, prompt, cached int) record.Result {
	r := ok(0, startMs, ttftMs, ttftMs+50, 8, prompt)
	r.Session, r.Turn = ip(s), k
	r.Server = &record.ServerTimings{PromptEvalNS: i64(ms(prefillMs))}
	if cached >= 0 {
		r.CachedPromptTokens = ip(cached)
	}
	return r
}

func TestTurnsAndPromptCache(t *testing.T) {
	rs := []record.Result{
		turn(0, 1, 0, 40, 30, 100, 0), turn(0, 2, 100, 12, 4, 150, 108), turn(0, 3, 200, 10, 3, 200, 158),
		turn(1, 1, 10, 44, 34, 100, 0), turn(1, 2, 110, 14, 6, 150, 108),
	}
	failed := record.Result{Session: ip(1), Turn: 3, Reason: record.ReasonTimeout, Error: "timeout", StartNS: ms(210)}
	rs = append(rs, failed)
	l := SummarizeLevel(rs)
	if len(l.Turns) != 3 {
		t.Fatalf("turns %+v", l.Turns)
	}
	t1, t2, t3 := l.Turns[0], l.Turns[1], l.Turns[2]
	if t1.Turn != 1 || t1.Requests != 2 || t3.Requests != 2 || t3.Errors != 1 {
		t.Fatalf("turn counts %+v %+v", t1, t3)
	}
	near(t, "turn 1 TTFT p50", t1.TTFTP50Ms, 42)
	near(t, "turn 2 TTFT p50", t2.TTFTP50Ms, 13)
	near(t, "turn 2 mean prompt", t2.MeanPromptTokens, 150)
	near(t, "turn 2 mean cached", t2.MeanCachedTokens, 108)
	near(t, "turn 1 prefill p50", t1.ServerPrefillP50Ms, 32)
	near(t, "turn 3 prefill p50", t3.ServerPrefillP50Ms, 3)
	if *l.PromptTokensSent != 700 || *l.PromptTokensCached != 374 {
		t.Fatalf("sent %v cached %v, want 700 and 374", *l.PromptTokensSent, *l.PromptTokensCached)
	}
	near(t, "hit rate", l.PromptCacheHitRate, 374.0/700)
	near(t, "level prefill p50", l.ServerPrefillP50Ms, 6)
}

// TestPromptCacheNullWhereNotReported: a server that gives no cached count
// (Ollama) leaves the cached tokens and the hit rate null, never zero; the
// hit rate counts only requests that reported both counts.
func TestPromptCacheNullWhereNotReported(t *testing.T) {
	l := SummarizeLevel([]record.Result{ok(0, 0, 10, 20, 4, 100), ok(0, 0, 10, 20, 4, 50)})
	if *l.PromptTokensSent != 150 || l.PromptTokensCached != nil || l.PromptCacheHitRate != nil || l.Turns != nil {
		t.Fatalf("sent %v cached %v rate %v turns %v", *l.PromptTokensSent, l.PromptTokensCached, l.PromptCacheHitRate, l.Turns)
	}
	mixed := ok(0, 0, 10, 20, 4, 300)
	mixed.CachedPromptTokens = ip(150)
	l = SummarizeLevel([]record.Result{ok(0, 0, 10, 20, 4, 100), mixed})
	near(t, "hit rate over reporting requests", l.PromptCacheHitRate, 0.5)
}

// TestSessionRateCountsSessionStarts: a multi-turn rate level schedules
// only first turns, so the achieved rate is sessions/s.
func TestSessionRateCountsSessionStarts(t *testing.T) {
	var rs []record.Result
	for s := range 4 {
		first := turn(s, 1, float64(s)*500, 10, 5, 100, -1)
		first.ScheduledNS = i64(ms(float64(s) * 500))
		rs = append(rs, first, turn(s, 2, float64(s)*500+100, 10, 5, 150, -1))
	}
	l := SummarizeLevel(rs)
	near(t, "achieved sessions/s", l.AchievedRate, 2)
	near(t, "lag p99", l.ScheduleLagP99Ms, 0)
}

// reasoned builds a successful request that reasoned: TTFT (the first
// reasoning token) and TTFA in ms.
func reasoned(ttftMs, ttfaMs float64, out, reasoning int, estimated bool) record.Result {
	r := ok(0, 0, ttftMs, ttfaMs+100, out, 20)
	r.TTFRNS = i64(ms(ttftMs))
	if ttfaMs > 0 {
		r.TTFANS = i64(ms(ttfaMs))
	}
	r.ReasoningTokens, r.ReasoningTokensEstimated = ip(reasoning), estimated
	return r
}

func TestReasoningSummary(t *testing.T) {
	tests := []struct {
		name                 string
		rs                   []record.Result
		ttfa50               float64
		reasoning, answer    int
		estimated            bool
		warnEstimate, warnNo bool
	}{
		{"server counts", []record.Result{reasoned(10, 200, 100, 80, false), reasoned(20, 300, 100, 90, false)},
			250, 170, 30, false, false, false},
		{"estimated", []record.Result{reasoned(10, 200, 100, 80, true), reasoned(20, 300, 100, 90, false)},
			250, 170, 30, true, true, false},
		{"answer never began", []record.Result{reasoned(10, 200, 100, 80, false), reasoned(20, 0, 100, 100, false)},
			200, 180, 20, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := SummarizeLevel(tt.rs)
			near(t, "TTFT p50", l.TTFTP50Ms, 15) // never null: reasoning tokens count
			near(t, "TTFR p50", l.TTFRP50Ms, 15)
			near(t, "TTFA p50", l.TTFAP50Ms, tt.ttfa50)
			if *l.ReasoningTokens != tt.reasoning || *l.AnswerTokens != tt.answer || l.ReasoningTokensEstimated != tt.estimated {
				t.Fatalf("reasoning %d answer %d estimated %v", *l.ReasoningTokens, *l.AnswerTokens, l.ReasoningTokensEstimated)
			}
			w := strings.Join(l.Warnings, "\n")
			if strings.Contains(w, "estimated from the streamed chunks") != tt.warnEstimate || strings.Contains(w, "ended inside their reasoning") != tt.warnNo {
				t.Errorf("warnings %q", l.Warnings)
			}
		})
	}
	plain := SummarizeLevel([]record.Result{ok(0, 0, 10, 20, 4, 10)})
	if plain.TTFRP50Ms != nil || plain.TTFAP50Ms != nil || plain.ReasoningTokens != nil {
		t.Fatalf("a level without reasoning has reasoning fields: %+v", plain)
	}
}

// TestCacheWarningNamesOllamaOnlyForOllama: requests meant to share a
// prefix with no cached count reported get a warning; it blames Ollama's
// prompt_eval_count only where the run's server is Ollama.
func TestCacheWarningNamesOllamaOnlyForOllama(t *testing.T) {
	for _, tc := range []struct {
		backend string
		ollama  bool
	}{{"ollama", true}, {"vllm", false}, {"", false}} {
		a := &Accumulator{Options: Options{Backend: tc.backend}}
		for i := range 4 {
			p, out := 100, 8
			a.Add(&record.Result{Seq: i, Turn: 1 + i%2, Status: 200, E2ENS: 1e8, PromptTokens: &p, OutputTokens: &out})
		}
		w := strings.Join(a.Level().Warnings, "\n")
		if !strings.Contains(w, "reported no prompt tokens served from its cache") || strings.Contains(w, "Ollama") != tc.ollama {
			t.Errorf("backend %q: warnings %q, want the cache warning naming Ollama: %v", tc.backend, w, tc.ollama)
		}
	}
}
