package backend

import (
	"fmt"
	"strings"
	"time"

	"github.com/servebench/servebench/record"
)

// maxPrealloc caps the chunk slices reserved up front for one request.
const maxPrealloc = 4096

// stream accumulates what one response tells: content-chunk arrival times,
// server token counts and timings. Times are measured from t0, the moment
// the request was written, on the monotonic clock.
//
// Metric definitions (docs/metrics.md): TTFT is the offset of the first chunk
// that carries generated content (non-empty content, text or reasoning);
// E2E is the offset of the last chunk (the end marker), or of the failure.
// Token counts come only from the server (usage, llama.cpp timings, Ollama
// eval_count), never from counting chunks.
type stream struct {
	res *record.Result
	t0  time.Time
	end time.Time // arrival of the end marker; zero until then

	offsets []int64
	// tokens holds per-chunk token counts derived from cumulative
	// completion_tokens (vLLM continuous_usage_stats); it is kept only if
	// every content chunk carried a count (tokensOK).
	tokens   []int
	tokensOK bool
	sawCount bool
	assigned int // completion tokens already attributed to content chunks

	prompt, output int // as reported; -1 when unknown
	// cached is the prompt tokens the server served from its prefix cache
	// (usage.prompt_tokens_details.cached_tokens, llama.cpp
	// timings.cache_n); -1 when it did not say.
	cached       int
	finishReason string
	timings      timings

	// reasoning follows reasoning and answer text (reasoning.go).
	reasoning reasoningTally
	// answer receives the content text when the request asked for it
	// (Request.Answer); nil otherwise.
	answer *strings.Builder

	// maxOutput is the largest output-token count that can be true of
	// this request: max_tokens + 1 (a server may count the end token).
	maxOutput int
	// warnings are the request's Result.Warnings: counts the server sent
	// that cannot be true, one per field.
	warnings []string

	// secrets (the API key and the extra headers' values) are redacted
	// from failure messages (excerpt) and from what finish writes.
	secrets []string
}

// countVal is a token count as a decoder read it (jsonScan.count): v is
// -1 when the chunk has none and countInvalid, with the number's text in
// raw, when it cannot be a count. raw points into the chunk.
type countVal struct {
	v   int64
	raw []byte
}

var noCount = countVal{v: -1}

func (c countVal) present() bool { return c.v != -1 }

// outputCount checks a cumulative output-token count the server sent in
// field: it returns the count, or -1 when the chunk has none or it cannot
// be true of this request (not a whole number from 0 to
// record.MaxTokenCount, or above maxOutput), which a warning then names.
func (st *stream) outputCount(field string, c countVal) int {
	switch {
	case c.v == -1:
		return -1
	case c.v == countInvalid:
		st.warnf(field, "server sent %s %s: not a token count; left null", field, sanitize(c.raw))
		return -1
	case c.v > int64(st.maxOutput):
		st.warnf(field, "server sent %s %d for a request of max_tokens %d (at most %d can be true); left null", field, c.v, st.maxOutput-1, st.maxOutput)
		return -1
	}
	return int(c.v)
}

// promptCount checks a prompt-token count the server sent in field, as
// outputCount does, without the max_tokens bound.
func (st *stream) promptCount(field string, c countVal) int {
	if c.v == countInvalid {
		st.warnf(field, "server sent %s %s: not a token count; left null", field, sanitize(c.raw))
		return -1
	}
	return int(c.v)
}

// warnf adds a warning about field, once per request and field.
func (st *stream) warnf(field, format string, args ...any) {
	for _, w := range st.warnings {
		if strings.HasPrefix(w, "server sent "+field+" ") {
			return
		}
	}
	st.warnings = append(st.warnings, fmt.Sprintf(format, args...))
}

// timings are server-reported durations in nanoseconds; -1 when unknown.
type timings struct {
	promptEval, eval, load, total int64
}

func newStream(res *record.Result, maxTokens int) *stream {
	st := &stream{res: res, prompt: -1, output: -1, cached: -1, tokensOK: true,
		timings: timings{-1, -1, -1, -1}, reasoning: newReasoningTally(), maxOutput: maxTokens + 1}
	n := maxTokens + 2
	if n > maxPrealloc || n < 2 {
		n = maxPrealloc / 16
	}
	st.offsets = make([]int64, 0, n)
	return st
}

// MaxAnswerBytes bounds the answer text kept for a later turn
// (Request.Answer): 1 MiB, hundreds of thousands of tokens, far past any
// real answer, so that a server streaming without end cannot make a
// conversation's history grow past memory. Past it the chunks are still
// timed and counted; their text is not kept, and a warning says so.
const MaxAnswerBytes = 1 << 20

// content records a chunk that arrived at now carrying generated text c
// (c.any() is true); cum is the cumulative completion-token count the chunk
// reported, or -1.
func (st *stream) content(now time.Time, cum int, c chunkText) {
	off := int64(now.Sub(st.t0))
	st.offsets = append(st.offsets, off)
	if st.answer != nil && len(c.content) > 0 {
		if st.answer.Len()+len(c.content) <= MaxAnswerBytes {
			appendJSONString(st.answer, c.content)
		} else {
			st.warnf("answer", "server sent answer text over %d MiB: a later turn resends only its first %d MiB", MaxAnswerBytes>>20, MaxAnswerBytes>>20)
		}
	}
	st.reasoning.add(c, off, st.chunkTokens(cum))
}

// chunkTokens attributes the tokens a cumulative count grew by to the
// chunk that reported it, or returns -1 once counts are unknown.
//
// Per-chunk token counts are kept only while the cumulative count grows
// with the content: every content chunk must raise it by at least one.
// A count that stands still (Ollama's /v1/completions puts
// "completion_tokens": 0 on every chunk and the true count only at the
// end) is not a running count, and would pile all tokens onto the last
// chunk; the request then has no ChunkTokens and ITL counts each chunk
// as one token.
func (st *stream) chunkTokens(cum int) int {
	if !st.tokensOK {
		return -1
	}
	if cum <= st.assigned {
		st.tokensOK = false
		st.tokens = nil
		return -1
	}
	// Tokens reported on chunks without visible text (cum grew, no
	// content) are attributed to this chunk, as assigned lags behind.
	st.sawCount = true
	n := cum - st.assigned
	if st.tokens == nil {
		// Sized as offsets is, so that it does not grow chunk by chunk
		// (reserved only once the server counts per chunk).
		st.tokens = make([]int, 0, cap(st.offsets))
	}
	st.tokens = append(st.tokens, n)
	st.assigned = cum
	return n
}

// finish writes the stream into the Result. f is the failure, nil on a
// stream that ended with its end marker.
func (st *stream) finish(f *failure) {
	res := st.res
	if f == nil && len(st.offsets) == 0 {
		f = failf(record.ReasonEmptyResponse, "stream ended with no generated content")
	}
	last := st.end
	if last.IsZero() {
		last = time.Now()
	}
	res.E2ENS = int64(last.Sub(st.t0))
	if len(st.offsets) > 0 {
		ttft := st.offsets[0]
		res.TTFTNS = &ttft
		res.ChunkOffsetsNS = st.offsets
	}
	st.finishTokens()
	st.finishReasoning()
	res.FinishReason = RedactAll(st.finishReason, st.secrets) // a server string, as the warnings are
	res.Server = st.timings.record()
	for _, w := range st.warnings {
		res.Warnings = append(res.Warnings, RedactAll(w, st.secrets))
	}
	if f != nil {
		res.Reason = f.reason
		res.Error = RedactAll(f.msg, st.secrets)
	}
}

func (st *stream) finishTokens() {
	res := st.res
	res.PromptTokens, res.OutputTokens = countPtr(st.prompt), countPtr(st.output)
	res.CachedPromptTokens = countPtr(st.cached)
	if !st.perChunkTokens() || st.output < st.assigned {
		return
	}
	// Tokens reported after the last content chunk (a final chunk with
	// an empty delta) belong to that chunk.
	if st.output > st.assigned {
		st.tokens[len(st.tokens)-1] += st.output - st.assigned
	}
	res.ChunkTokens = st.tokens
}

// perChunkTokens reports whether every content chunk carried a token
// count.
func (st *stream) perChunkTokens() bool {
	return st.tokensOK && st.sawCount && len(st.tokens) == len(st.offsets)
}

// finishReasoning writes the reasoning fields of a stream that carried
// reasoning, or whose server counted reasoning tokens: the times to the
// first reasoning and first answer token and the reasoning token count,
// marked when it is an estimate.
func (st *stream) finishReasoning() {
	t, res := &st.reasoning, st.res
	if t.reported > 0 && st.output >= 0 && t.reported > st.output {
		// More reasoning than completion tokens cannot be true: the
		// count is dropped, as other impossible counts are, and the
		// split is estimated from the stream where it carried reasoning.
		fate := "left null"
		if t.reasoningChunks > 0 {
			fate = "estimated from the stream instead"
		}
		st.warnf("reasoning_tokens", "server sent reasoning_tokens %d of %d completion tokens (at most %d can be true); %s", t.reported, st.output, st.output, fate)
		t.reported = -1
	}
	tail := 0
	if st.output > st.assigned {
		tail = st.output - st.assigned
	}
	if n, estimated, ok := t.split(st.output, st.perChunkTokens(), tail); ok {
		res.ReasoningTokens, res.ReasoningTokensEstimated = &n, estimated
	}
	if t.reasoningChunks == 0 {
		return
	}
	res.TTFRNS, res.TTFANS = nsPtr(t.firstReasoning), nsPtr(t.firstAnswer)
}

// countPtr is a server count for a Result: nil when unknown (negative).
func countPtr(v int) *int {
	if v < 0 {
		return nil
	}
	return &v
}

func (t timings) record() *record.ServerTimings {
	if t == (timings{-1, -1, -1, -1}) {
		return nil
	}
	st := &record.ServerTimings{}
	st.PromptEvalNS = nsPtr(t.promptEval)
	st.EvalNS = nsPtr(t.eval)
	st.LoadNS = nsPtr(t.load)
	st.TotalNS = nsPtr(t.total)
	return st
}

func nsPtr(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}
