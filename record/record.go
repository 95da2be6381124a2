// Package record defines the per-request Result, servebench's one flat
// record of what happened to a request, and the records file that carries
// Results as JSON Lines, with a header describing each run (Run: the
// server's identity, settings and capacity, the launch profile) and what
// observers measured per level (Observations). It is the vocabulary the
// engine (load, backend, telemetry) writes; summary turns it into report
// documents.
//
// Everything servebench reports is derived from Results, so a report can be
// re-made from a saved .jsonl file without the server. All durations are
// nanoseconds on the client's monotonic clock, measured from the moment the
// request was written (StartNS is measured from the start of the run).
package record

// Reason classifies why a request failed. The empty Reason means success.
type Reason string

// Failure reasons, counted per level in reports.
const (
	ReasonNone          Reason = ""
	ReasonHTTP4xx       Reason = "http_4xx"
	ReasonHTTP429       Reason = "http_429"
	ReasonHTTP5xx       Reason = "http_5xx"
	ReasonConnection    Reason = "connection"
	ReasonTimeout       Reason = "timeout"
	ReasonTruncated     Reason = "truncated_stream"
	ReasonMalformed     Reason = "malformed_chunk"
	ReasonCanceled      Reason = "canceled"
	ReasonServerExited  Reason = "server_exited"
	ReasonEmptyResponse Reason = "empty_response"
	// ReasonStreamError: the server reported an error inside a 200 stream
	// (an "error" object in an SSE chunk or an Ollama NDJSON line).
	ReasonStreamError Reason = "stream_error"
	// ReasonInvalidRequest: the request cannot be expressed for this server
	// and API (e.g. images on a text-only completions API); nothing was sent.
	ReasonInvalidRequest Reason = "invalid_request"
	// ReasonNotStreamed: a 2xx response held one JSON body instead of an
	// SSE stream (the server, or a proxy before it, ignored stream: true),
	// so there is no time to first token to measure.
	ReasonNotStreamed Reason = "not_streamed"
	// ReasonRedirect: the server answered a 3xx. servebench never follows
	// a redirect from the server under test (a POST would turn into a GET,
	// and the API key would go to wherever it points); Error names the
	// Location.
	ReasonRedirect Reason = "redirect"
)

// MaxTokenCount is the largest token count servebench takes from a server
// or a records file (2^31 − 1). A larger one cannot be a real count; it is
// left null with a warning. Sums of counts held to it cannot wrap an int64
// in fewer than 2^32 terms.
const MaxTokenCount = 1<<31 - 1

// PlausibleOutputTokens reports whether n can be a server's count of the
// output tokens of a request that asked for expected (0: unknown): 0 ≤ n ≤
// MaxTokenCount, and n ≤ expected + 1 when expected is known (one more
// than asked, as a server may count the end-of-sequence token).
func PlausibleOutputTokens(n, expected int) bool {
	if n < 0 || n > MaxTokenCount {
		return false
	}
	return expected <= 0 || n <= expected+1
}

// PlausibleTokens reports whether n can be a token count at all:
// 0 ≤ n ≤ MaxTokenCount.
func PlausibleTokens(n int) bool { return n >= 0 && n <= MaxTokenCount }

// Result is one request's record.
//
// Metric definitions (docs/metrics.md), all on the client:
//   - TTFT: from writing the request until the first chunk that carries
//     generated content.
//   - E2E latency: until the last chunk.
//   - TPOT: (E2E − TTFT) / (OutputTokens − 1), for OutputTokens > 1.
//   - ITL: gaps between content chunks; a chunk may carry several tokens,
//     given by ChunkTokens where the server reports them.
//
// OutputTokens and PromptTokens are as the server reported them (usage,
// llama.cpp timings, Ollama eval_count), never counted from chunks; nil when
// the server did not say. ExpectedOutputTokens is what was asked for.
type Result struct {
	// Run is the label of the run the request belongs to.
	Run string `json:"run,omitempty"`
	// Seq numbers the requests of a run from 0 in send order.
	Seq int `json:"seq"`
	// Level is the concurrency level (pool, batch) or the level index.
	Level int `json:"level"`
	// Repeat is the batch repetition (batch method), else 0.
	Repeat int `json:"repeat"`
	// Warmup marks a request that is not counted.
	Warmup bool `json:"warmup,omitempty"`
	// Class is the request class of a mix (run --mix: the scenario the
	// request was drawn from, e.g. "text" or "image"); empty outside a
	// mix. Levels are summarized per class as well as overall.
	Class string `json:"class,omitempty"`

	// StartNS is when the request was written, from the run's start: its
	// actual send time.
	StartNS int64 `json:"start_ns"`
	// ScheduledNS is when the rate method meant to send it (open loop),
	// from the run's start; nil for pool and batch. StartNS − ScheduledNS
	// is the schedule lag, the time the request waited on the client (a
	// full --max-concurrency cap, a client that could not keep up), and
	// latencies from ScheduledNS include it (coordinated omission: see
	// docs/metrics.md).
	ScheduledNS *int64 `json:"scheduled_ns,omitempty"`
	// TTFTNS is the time to the first content chunk; nil if none came.
	TTFTNS *int64 `json:"ttft_ns,omitempty"`
	// E2ENS is the time to the last chunk (or to the failure).
	E2ENS int64 `json:"e2e_ns"`
	// ChunkOffsetsNS are the arrival times of content chunks, from the
	// moment the request was written (not from the run's start).
	ChunkOffsetsNS []int64 `json:"chunk_offsets_ns,omitempty"`
	// ChunkTokens are per-chunk token counts where the server gives them,
	// parallel to ChunkOffsetsNS; empty when unknown.
	ChunkTokens []int `json:"chunk_tokens,omitempty"`

	PromptTokens         *int `json:"prompt_tokens,omitempty"`
	OutputTokens         *int `json:"output_tokens,omitempty"`
	ExpectedOutputTokens int  `json:"expected_output_tokens"`
	// ExpectedPromptTokens is the prompt length the workload aimed at.
	ExpectedPromptTokens int `json:"expected_prompt_tokens,omitempty"`

	// Server holds the timings the server reported about the request.
	Server *ServerTimings `json:"server,omitempty"`

	// Status is the HTTP status code; 0 when no response came.
	Status int `json:"status"`
	// Reason classifies the failure; empty on success.
	Reason Reason `json:"reason,omitempty"`
	// Error is the failure in words (with a body excerpt for HTTP errors);
	// empty on success.
	Error string `json:"error,omitempty"`
	// FinishReason is the server's stop/done reason ("length", "stop").
	FinishReason string `json:"finish_reason,omitempty"`

	// Warnings are findings about a request that did not fail it: a
	// token count the server sent that cannot be true (not an integer,
	// negative, above MaxTokenCount, or above max_tokens + 1), left null.
	// The level's summary counts them.
	Warnings []string `json:"warnings,omitempty"`
	// Sessions and shared prefixes: which conversation turn
	// the request was and which shared prefix it began with, and what the
	// server said it served from its prefix cache.

	// Session numbers the sessions of a run from 0 (multi-turn
	// workloads); nil for a request outside any session.
	Session *int `json:"session,omitempty"`
	// Turn is the request's turn within its session, from 1; 0 outside
	// sessions.
	Turn int `json:"turn,omitempty"`
	// PrefixGroup is the shared prefix (system prompt) the request began
	// with, from 0; nil when it had none.
	PrefixGroup *int `json:"prefix_group,omitempty"`
	// CachedPromptTokens is how many of PromptTokens the server said it
	// served from its prefix cache (usage.prompt_tokens_details
	// .cached_tokens, llama.cpp timings.cache_n); nil when it did not say.
	CachedPromptTokens *int `json:"cached_prompt_tokens,omitempty"`

	// Reasoning models: set when the stream carried reasoning
	// (a reasoning field, or content inside <think>…</think>) or the
	// server counted reasoning tokens.

	// TTFRNS is the time to the first reasoning token: send → first chunk
	// carrying reasoning.
	TTFRNS *int64 `json:"ttfr_ns,omitempty"`
	// TTFANS is the time to the first answer token: send → first chunk
	// carrying answer text other than white space; nil when the answer
	// never began (the output ended inside the reasoning).
	TTFANS *int64 `json:"ttfa_ns,omitempty"`
	// ReasoningTokens is how many of OutputTokens were reasoning: the
	// server's count (usage.completion_tokens_details.reasoning_tokens),
	// or, where it gives none, an estimate from the streamed chunks
	// (ReasoningTokensEstimated).
	ReasoningTokens *int `json:"reasoning_tokens,omitempty"`
	// ReasoningTokensEstimated marks ReasoningTokens as servebench's
	// estimate: per-chunk token counts by kind where the server gave them,
	// else OutputTokens × the reasoning share of content chunks.
	ReasoningTokensEstimated bool `json:"reasoning_tokens_estimated,omitempty"`

	// PromptText and AnswerText are the request's prompt (its messages
	// joined as completion APIs send them) and the answer's text; they
	// are written only when the user asked (run --records-text), since a
	// dataset's texts are theirs, and empty otherwise.
	PromptText string `json:"prompt_text,omitempty"`
	AnswerText string `json:"answer_text,omitempty"`
}

// ServerTimings are the per-request timings a server reports itself
// (Ollama's *_duration fields, llama.cpp's timings object), in nanoseconds.
// A nil field is one the server did not report.
type ServerTimings struct {
	// PromptEvalNS is the prefill time (Ollama prompt_eval_duration,
	// llama.cpp timings.prompt_ms).
	PromptEvalNS *int64 `json:"prompt_eval_ns,omitempty"`
	// EvalNS is the decode time (Ollama eval_duration, llama.cpp
	// timings.predicted_ms); EvalNS / OutputTokens is the server's TPOT.
	EvalNS *int64 `json:"eval_ns,omitempty"`
	// LoadNS is the model load time (Ollama load_duration).
	LoadNS *int64 `json:"load_ns,omitempty"`
	// TotalNS is the server's whole request time (Ollama total_duration).
	TotalNS *int64 `json:"total_ns,omitempty"`
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Reason == ReasonNone && r.Error == "" }
