package simserve

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/servebench/servebench/sim"
)

// The streaming formats. Each writes its server's chunks field for field,
// in its server's key order, from the source or the capture named in the
// comment and held to the fixture by shape_test.go. Chunks are built by
// appending to a byte slice: with thousands of streams the simulator must
// not spend its CPU on reflection. Every string written raw is ASCII
// without quotes or backslashes (ids, output words, versions); the model
// name is JSON-encoded once (Server.quotedName).

const sseContentType = "text/event-stream; charset=utf-8"

// usage is a request's token counts as the OpenAI usage object holds them.
func (g *gen) usage() (prompt, completion, total int) {
	return g.prompt, g.generated, g.prompt + g.generated
}

// appendInt appends n in decimal.
func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendFloat appends v the shortest way that reads back exactly.
func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

// vllmUsage appends vLLM's UsageInfo (protocol.py: prompt_tokens,
// total_tokens, completion_tokens, in that order).
func vllmUsage(b []byte, prompt, completion int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, prompt)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, prompt+completion)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, completion)
	return append(b, '}')
}

// openAIHead appends the fields every chunk of vLLM's and SGLang's
// streams starts with, up to the choices' opening bracket.
func openAIHead(b []byte, g *gen, idPrefix, object string) []byte {
	b = append(b, `data: {"id":"`...)
	b = append(b, idPrefix...)
	b = append(b, g.idText...)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.s.quotedName...)
	return append(b, `,"choices":[`...)
}

// vllmFormat is vLLM's OpenAI server (and the generic OpenAI
// personality): vllm/entrypoints/openai/serving_chat.py
// chat_completion_stream_generator and serving_completion.py, as in
// backend/testdata/vllm-continuous-usage.sse and
// vllm-0.9.0-chat-stream.sse: a role chunk at the first output, one
// chunk per token (the last with finish_reason and stop_reason), with
// continuous_usage_stats the cumulative usage on every chunk, then a
// usage chunk with "choices":[] when include_usage asks, then [DONE].
type vllmFormat struct{ completion bool }

func (vllmFormat) contentType() string { return sseContentType }

func (f vllmFormat) head(b []byte, g *gen) []byte {
	if f.completion {
		return openAIHead(b, g, "cmpl-", "text_completion")
	}
	return openAIHead(b, g, "chatcmpl-", "chat.completion.chunk")
}

// tail closes a chunk: the usage when continuous usage is asked.
func (f vllmFormat) tail(b []byte, g *gen) []byte {
	b = append(b, ']')
	if g.req.includeUsage && g.req.continuousUsage {
		b = append(b, `,"usage":`...)
		b = vllmUsage(b, g.prompt, g.generated)
	}
	return append(b, "}\n\n"...)
}

func (f vllmFormat) token(b []byte, g *gen, text string, last bool) []byte {
	if !f.completion && g.generated == 1 {
		b = f.head(b, g)
		b = append(b, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
		gen := g.generated
		g.generated = 0 // the role chunk's usage counts no output yet
		b = f.tail(b, g)
		g.generated = gen
	}
	b = f.head(b, g)
	if f.completion {
		b = append(b, `{"index":0,"text":"`...)
	} else {
		b = append(b, `{"index":0,"delta":{"content":"`...)
	}
	b = append(b, text...)
	if !f.completion {
		b = append(b, '"', '}')
	} else {
		b = append(b, '"')
	}
	if last {
		b = append(b, `,"logprobs":null,"finish_reason":"length","stop_reason":null}`...)
	} else if f.completion {
		b = append(b, `,"logprobs":null,"finish_reason":null,"stop_reason":null}`...)
	} else {
		b = append(b, `,"logprobs":null,"finish_reason":null}`...)
	}
	return f.tail(b, g)
}

func (f vllmFormat) finish(b []byte, g *gen) []byte {
	if g.req.includeUsage {
		b = f.head(b, g)
		b = append(b, `],"usage":`...)
		b = vllmUsage(b, g.prompt, g.generated)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (f vllmFormat) whole(g *gen) any { return openAIWhole(g, f.completion, "chatcmpl-", "cmpl-") }

// openAIWhole is the non-streaming answer of an OpenAI-compatible server
// (vLLM's ChatCompletionResponse and CompletionResponse).
func openAIWhole(g *gen, completion bool, chatPrefix, cmplPrefix string) any {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type choice struct {
		Index        int      `json:"index"`
		Message      *message `json:"message,omitempty"`
		Text         *string  `json:"text,omitempty"`
		Logprobs     any      `json:"logprobs"`
		FinishReason string   `json:"finish_reason"`
		StopReason   any      `json:"stop_reason"`
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		TotalTokens      int `json:"total_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	type response struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   usage    `json:"usage"`
	}
	text := g.outputText()
	r := response{ID: chatPrefix + g.idText, Object: "chat.completion", Created: g.created, Model: g.s.name,
		Choices: []choice{{Message: &message{Role: "assistant", Content: text}, FinishReason: "length"}},
		Usage:   usage{g.prompt, g.prompt + g.generated, g.generated}}
	if completion {
		r.ID, r.Object = cmplPrefix+g.idText, "text_completion"
		r.Choices[0].Message, r.Choices[0].Text = nil, &text
	}
	return r
}

// sglangFormat is SGLang's: python/sglang/srt/entrypoints/openai/
// serving_chat.py _generate_chat_stream, as in
// backend/testdata/sglang-stream.sse: pydantic dumps every field
// (nulls included) — a role chunk, content chunks, a finish chunk with
// an empty delta, then the usage chunk and [DONE].
type sglangFormat struct{ completion bool }

func (sglangFormat) contentType() string { return sseContentType }

func (f sglangFormat) head(b []byte, g *gen) []byte {
	if f.completion {
		return openAIHead(b, g, "", "text_completion")
	}
	return openAIHead(b, g, "", "chat.completion.chunk")
}

func (f sglangFormat) token(b []byte, g *gen, text string, last bool) []byte {
	if f.completion {
		b = f.head(b, g)
		b = append(b, `{"index":0,"text":"`...)
		b = append(b, text...)
		if last {
			b = append(b, `","logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}`+"\n\n"...)
		} else {
			b = append(b, `","logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`+"\n\n"...)
		}
		return b
	}
	if g.generated == 1 {
		b = f.head(b, g)
		b = append(b, `{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`+"\n\n"...)
	}
	b = f.head(b, g)
	b = append(b, `{"index":0,"delta":{"role":null,"content":"`...)
	b = append(b, text...)
	b = append(b, `","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`+"\n\n"...)
	if last {
		b = f.head(b, g)
		b = append(b, `{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}`+"\n\n"...)
	}
	return b
}

func (f sglangFormat) finish(b []byte, g *gen) []byte {
	if g.req.includeUsage {
		p, c, t := g.usage()
		b = f.head(b, g)
		b = append(b, `],"usage":{"prompt_tokens":`...)
		b = appendInt(b, p)
		b = append(b, `,"total_tokens":`...)
		b = appendInt(b, t)
		b = append(b, `,"completion_tokens":`...)
		b = appendInt(b, c)
		b = append(b, `,"prompt_tokens_details":null,"reasoning_tokens":0}}`+"\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (f sglangFormat) whole(g *gen) any { return openAIWhole(g, f.completion, "", "") }

// llamaFormat is llama-server's OpenAI-compatible stream:
// server_task_result_cmpl_partial::to_json_oaicompat_chat and
// server_task_result_cmpl_final::to_json_oaicompat_chat_stream, as in
// backend/testdata/llamacpp-stream.sse: no role chunk, one chunk per
// token, then a final chunk with an empty delta, finish_reason, usage and
// the timings, then [DONE].
type llamaFormat struct{ completion bool }

func (llamaFormat) contentType() string { return sseContentType }

// llamaTail appends the fields after the choices.
func llamaTail(b []byte, g *gen, object string) []byte {
	b = append(b, `],"created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"id":"chatcmpl-`...)
	b = append(b, g.idText...)
	b = append(b, `","model":`...)
	b = append(b, g.s.quotedName...)
	b = append(b, `,"system_fingerprint":"`...)
	b = append(b, llamaBuildInfo...)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	return append(b, '"')
}

func (f llamaFormat) token(b []byte, g *gen, text string, _ bool) []byte {
	b = append(b, `data: {"choices":[`...)
	if f.completion {
		b = append(b, `{"text":"`...)
		b = append(b, text...)
		b = append(b, `","index":0,"logprobs":null,"finish_reason":null}`...)
		b = llamaTail(b, g, "text_completion")
	} else {
		b = append(b, `{"finish_reason":null,"index":0,"delta":{"content":"`...)
		b = append(b, text...)
		b = append(b, `"}}`...)
		b = llamaTail(b, g, "chat.completion.chunk")
	}
	return append(b, "}\n\n"...)
}

func (f llamaFormat) finish(b []byte, g *gen) []byte {
	b = append(b, `data: {"choices":[`...)
	if f.completion {
		b = append(b, `{"text":"","index":0,"logprobs":null,"finish_reason":"length"}`...)
		b = llamaTail(b, g, "text_completion")
	} else {
		b = append(b, `{"finish_reason":"length","index":0,"delta":{}}`...)
		b = llamaTail(b, g, "chat.completion.chunk")
	}
	p, c, t := g.usage()
	b = append(b, `,"usage":{"completion_tokens":`...)
	b = appendInt(b, c)
	b = append(b, `,"prompt_tokens":`...)
	b = appendInt(b, p)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, t)
	b = append(b, `},"timings":`...)
	b = g.llamaTimings(b)
	return append(b, "}\n\ndata: [DONE]\n\n"...)
}

func (f llamaFormat) whole(g *gen) any { return openAIWhole(g, f.completion, "chatcmpl-", "cmpl-") }

// llamaTimings appends llama.cpp's result_timings (server.cpp
// result_timings::to_json): prompt_ms from the slot taking the request to
// its first token (t_start_process_prompt), predicted_ms from the first
// token to the last (t_start_generation), predicted_n every generated
// token.
func (g *gen) llamaTimings(b []byte) []byte {
	promptMS := ms(g.firstAt - g.schedAt)
	predMS := ms(g.lastAt - g.firstAt)
	b = append(b, `{"prompt_n":`...)
	b = appendInt(b, g.prompt)
	b = append(b, `,"prompt_ms":`...)
	b = appendFloat(b, promptMS)
	b = append(b, `,"prompt_per_token_ms":`...)
	b = appendFloat(b, perToken(promptMS, g.prompt))
	b = append(b, `,"prompt_per_second":`...)
	b = appendFloat(b, perSecond(promptMS, g.prompt))
	b = append(b, `,"predicted_n":`...)
	b = appendInt(b, g.generated)
	b = append(b, `,"predicted_ms":`...)
	b = appendFloat(b, predMS)
	b = append(b, `,"predicted_per_token_ms":`...)
	b = appendFloat(b, perToken(predMS, g.generated))
	b = append(b, `,"predicted_per_second":`...)
	b = appendFloat(b, perSecond(predMS, g.generated))
	return append(b, '}')
}

// ms is a duration in milliseconds, to the microsecond as llama.cpp
// prints them.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func perToken(ms float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return ms / float64(n)
}

func perSecond(ms float64, n int) float64 {
	if ms <= 0 {
		return 0
	}
	return 1e3 * float64(n) / ms
}

// tgiFormat is TGI's OpenAI route (router/src/server.rs chat_completions,
// as in backend/testdata/tgi-stream.sse): every chunk carries the role and
// the null fields, the last token its finish_reason, then a usage chunk
// with "choices":[] and [DONE]. Framing is axum's "data:" with no space.
type tgiFormat struct{ completion bool }

func (tgiFormat) contentType() string { return sseContentType }

// tgiFingerprint is TGI's system_fingerprint: version and docker label
// ("native" outside the image).
const tgiFingerprint = tgiVersion + "-native"

func tgiTail(b []byte, g *gen, object string) []byte {
	b = append(b, `],"created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"id":"","model":`...)
	b = append(b, g.s.quotedName...)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","service_tier":null,"system_fingerprint":"`...)
	b = append(b, tgiFingerprint...)
	return append(b, '"')
}

func (f tgiFormat) token(b []byte, g *gen, text string, last bool) []byte {
	finish := `null`
	if last {
		finish = `"length"`
	}
	b = append(b, `data:{"choices":[`...)
	if f.completion {
		b = append(b, `{"finish_reason":`...)
		b = append(b, finish...)
		b = append(b, `,"index":0,"logprobs":null,"text":"`...)
		b = append(b, text...)
		b = append(b, `"}`...)
		b = tgiTail(b, g, "text_completion")
	} else {
		b = append(b, `{"delta":{"content":"`...)
		b = append(b, text...)
		b = append(b, `","function_call":null,"refusal":null,"role":"assistant","tool_calls":null},"finish_reason":`...)
		b = append(b, finish...)
		b = append(b, `,"index":0,"logprobs":null}`...)
		b = tgiTail(b, g, "chat.completion.chunk")
	}
	return append(b, `,"usage":null}`+"\n\n"...)
}

func (f tgiFormat) finish(b []byte, g *gen) []byte {
	if g.req.includeUsage {
		object := "chat.completion.chunk"
		if f.completion {
			object = "text_completion"
		}
		p, c, t := g.usage()
		b = append(b, `data:{"choices":[`...)
		b = tgiTail(b, g, object)
		b = append(b, `,"usage":{"completion_tokens":`...)
		b = appendInt(b, c)
		b = append(b, `,"completion_tokens_details":null,"prompt_tokens":`...)
		b = appendInt(b, p)
		b = append(b, `,"prompt_tokens_details":null,"total_tokens":`...)
		b = appendInt(b, t)
		b = append(b, "}}\n\n"...)
	}
	return append(b, "data:[DONE]\n\n"...)
}

func (f tgiFormat) whole(g *gen) any { return openAIWhole(g, f.completion, "", "") }

// tgiGenerateFormat is TGI's /generate_stream (router/src/server.rs
// generate_stream_internal; backend/testdata/tgi-2.2.0-generate-stream.sse):
// one event per token, the last with generated_text and, when asked,
// details; no [DONE].
type tgiGenerateFormat struct{}

func (tgiGenerateFormat) contentType() string { return sseContentType }

func (tgiGenerateFormat) token(b []byte, g *gen, text string, last bool) []byte {
	w := g.words[len(g.words)-1]
	b = append(b, `data:{"index":`...)
	b = appendInt(b, g.generated)
	b = append(b, `,"token":{"id":`...)
	b = appendInt(b, sim.OutputTokenID(w))
	b = append(b, `,"text":"`...)
	b = append(b, text...)
	b = append(b, `","logprob":`...)
	b = appendFloat(b, -0.125*float64(1+w%8))
	b = append(b, `,"special":false},"generated_text":`...)
	if !last {
		return append(b, `null,"details":null}`+"\n\n"...)
	}
	b = append(b, '"')
	for _, w := range g.words {
		b = append(b, sim.OutputWords[w]...)
	}
	b = append(b, `","details":`...)
	if !g.req.details {
		return append(b, "null}\n\n"...)
	}
	b = append(b, `{"finish_reason":"length","generated_tokens":`...)
	b = appendInt(b, g.generated)
	b = append(b, `,"seed":`...)
	if g.req.seed != nil {
		b = strconv.AppendInt(b, *g.req.seed, 10)
	} else {
		b = append(b, "null"...)
	}
	return append(b, "}}\n\n"...)
}

func (tgiGenerateFormat) finish(b []byte, _ *gen) []byte { return b }

func (tgiGenerateFormat) whole(g *gen) any {
	return map[string]any{"generated_text": g.outputText()}
}

// ollamaOpenAIFormat is Ollama's /v1 routes (openai/openai.go), as
// captured from the testbed (backend/testdata/ollama-0.6.5-openai-*.sse):
// the role on every chat delta, a last chunk with an empty text and
// finish_reason, then with include_usage a usage chunk ("choices":[]) —
// completions carry a zero usage on every chunk before it — and [DONE].
type ollamaOpenAIFormat struct{ completion bool }

func (ollamaOpenAIFormat) contentType() string { return "text/event-stream" }

func (f ollamaOpenAIFormat) chunk(b []byte, g *gen, text, finish string, usage bool) []byte {
	if f.completion {
		b = append(b, `data: {"id":"cmpl-`...)
		b = appendInt(b, int(g.id%1000))
		b = append(b, `","object":"text_completion","created":`...)
		b = strconv.AppendInt(b, g.created, 10)
		b = append(b, `,"choices":[{"text":"`...)
		b = append(b, text...)
		b = append(b, `","index":0,"finish_reason":`...)
		b = append(b, finish...)
		b = append(b, `}],"model":`...)
		b = append(b, g.s.quotedName...)
		b = append(b, `,"system_fingerprint":"fp_ollama"`...)
		if usage {
			b = append(b, `,"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`...)
		}
		return append(b, "}\n\n"...)
	}
	b = append(b, `data: {"id":"chatcmpl-`...)
	b = appendInt(b, int(g.id%1000))
	b = append(b, `","object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.s.quotedName...)
	b = append(b, `,"system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"`...)
	b = append(b, text...)
	b = append(b, `"},"finish_reason":`...)
	b = append(b, finish...)
	return append(b, "}]}\n\n"...)
}

func (f ollamaOpenAIFormat) token(b []byte, g *gen, text string, _ bool) []byte {
	return f.chunk(b, g, text, "null", g.req.includeUsage)
}

func (f ollamaOpenAIFormat) finish(b []byte, g *gen) []byte {
	b = f.chunk(b, g, "", `"length"`, g.req.includeUsage)
	if g.req.includeUsage {
		p, c, t := g.usage()
		if f.completion {
			b = append(b, `data: {"id":"cmpl-`...)
			b = appendInt(b, int(g.id%1000))
			b = append(b, `","object":"text_completion","created":`...)
			b = strconv.AppendInt(b, g.created, 10)
			b = append(b, `,"choices":[],"model":`...)
			b = append(b, g.s.quotedName...)
			b = append(b, `,"system_fingerprint":"fp_ollama"`...)
		} else {
			b = append(b, `data: {"id":"chatcmpl-`...)
			b = appendInt(b, int(g.id%1000))
			b = append(b, `","object":"chat.completion.chunk","created":`...)
			b = strconv.AppendInt(b, g.created, 10)
			b = append(b, `,"model":`...)
			b = append(b, g.s.quotedName...)
			b = append(b, `,"system_fingerprint":"fp_ollama","choices":[]`...)
		}
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = appendInt(b, p)
		b = append(b, `,"completion_tokens":`...)
		b = appendInt(b, c)
		b = append(b, `,"total_tokens":`...)
		b = appendInt(b, t)
		b = append(b, "}}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (f ollamaOpenAIFormat) whole(g *gen) any {
	return openAIWhole(g, f.completion, "chatcmpl-", "cmpl-")
}

// ollamaFormat is Ollama's native NDJSON (server/routes.go ChatHandler and
// GenerateHandler), as captured from the testbed
// (backend/testdata/ollama-chat-testbed.ndjson,
// ollama-generate-testbed.ndjson): one line per token, then a "done" line
// with done_reason, the counts and the durations in nanoseconds:
// load_duration until the request reached the runner, prompt_eval_duration
// from then to the first token (the runner's startProcessingTime is set
// before it waits for a parallel slot, runner/llamarunner/runner.go),
// eval_duration from the first token to the last, total_duration all of
// it.
type ollamaFormat struct{ generate bool }

func (ollamaFormat) contentType() string { return "application/x-ndjson" }

func (f ollamaFormat) head(b []byte, g *gen, at time.Duration) []byte {
	b = append(b, `{"model":`...)
	b = append(b, g.s.quotedName...)
	b = append(b, `,"created_at":"`...)
	b = g.s.drv.wallAt(at).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"', ',')
}

func (f ollamaFormat) token(b []byte, g *gen, text string, _ bool) []byte {
	b = f.head(b, g, g.prevAt)
	if f.generate {
		b = append(b, `"response":"`...)
		b = append(b, text...)
		return append(b, `","done":false}`+"\n"...)
	}
	b = append(b, `"message":{"role":"assistant","content":"`...)
	b = append(b, text...)
	return append(b, `"},"done":false}`+"\n"...)
}

// durations are Ollama's timings of g in nanoseconds.
func (g *gen) ollamaDurations() (total, load, promptEval, eval int64) {
	arrival := g.arrived
	total = int64(g.s.drv.wallAt(g.lastAt).Sub(arrival))
	load = int64(g.s.drv.wallAt(g.queuedAt).Sub(arrival))
	promptEval = int64(g.firstAt - g.queuedAt)
	eval = int64(g.lastAt - g.firstAt)
	return max(total, 0), max(load, 0), promptEval, eval
}

func (f ollamaFormat) finish(b []byte, g *gen) []byte {
	b = f.head(b, g, g.lastAt)
	if f.generate {
		b = append(b, `"response":"","done":true,"done_reason":"length","context":[`...)
		for i, id := range sim.TokenIDs(g.req.text) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInt(b, id)
		}
		for _, w := range g.words {
			b = append(b, ',')
			b = appendInt(b, sim.OutputTokenID(w))
		}
		b = append(b, ']', ',')
	} else {
		b = append(b, `"message":{"role":"assistant","content":""},"done_reason":"length","done":true,`...)
	}
	b = g.ollamaCounts(b)
	return append(b, "}\n"...)
}

// ollamaCounts appends the done line's durations and counts.
func (g *gen) ollamaCounts(b []byte) []byte {
	total, load, pe, ev := g.ollamaDurations()
	b = append(b, `"total_duration":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"load_duration":`...)
	b = strconv.AppendInt(b, load, 10)
	b = append(b, `,"prompt_eval_count":`...)
	b = appendInt(b, g.prompt)
	b = append(b, `,"prompt_eval_duration":`...)
	b = strconv.AppendInt(b, pe, 10)
	b = append(b, `,"eval_count":`...)
	b = appendInt(b, g.generated)
	b = append(b, `,"eval_duration":`...)
	return strconv.AppendInt(b, ev, 10)
}

func (f ollamaFormat) whole(g *gen) any {
	var b []byte
	b = f.head(b, g, g.lastAt)
	text, _ := json.Marshal(g.outputText())
	if f.generate {
		b = append(b, `"response":`...)
		b = append(b, text...)
		b = append(b, `,"done":true,"done_reason":"length",`...)
	} else {
		b = append(b, `"message":{"role":"assistant","content":`...)
		b = append(b, text...)
		b = append(b, `},"done_reason":"length","done":true,`...)
	}
	b = g.ollamaCounts(b)
	b = append(b, '}')
	return json.RawMessage(b)
}
