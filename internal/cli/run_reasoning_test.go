package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Reasoning streams: the testbed's model cannot reason, so a loopback
// server streams them, in the formats of backend/testdata's reasoning
// fixtures (vllm-reasoning-stream.sse: reasoning_content deltas with
// vLLM's continuous usage; ollama-think-tags-chat.ndjson: <think> tags in
// Ollama's content, escaped as Go's encoding/json writes them). Each
// stream sends reasoningChunks reasoning tokens gap apart, then
// answerChunks answer tokens: the first answer token comes at least
// reasoningChunks × gap after the first token of any kind.
const (
	reasoningChunks = 5
	answerChunks    = 3
	reasoningGap    = 12 * time.Millisecond
)

// reasoningServer answers /v1/chat/completions (vLLM shape) and /api/chat
// (Ollama shape) with reasoning streams; anything else is 404.
func reasoningServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			vllmReasoningStream(w)
		case r.Method == http.MethodPost && r.URL.Path == "/api/chat":
			ollamaThinkStream(w)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func vllmReasoningStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	n := 0
	chunk := func(delta string) {
		n++
		fmt.Fprintf(w, `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1752563089,"model":"m","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":14,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", delta, 14+n, n)
		w.(http.Flusher).Flush()
	}
	for i := range reasoningChunks {
		chunk(fmt.Sprintf(`{"reasoning_content":"step %d"}`, i))
		time.Sleep(reasoningGap)
	}
	for i := range answerChunks {
		chunk(fmt.Sprintf(`{"content":"word%d "}`, i))
	}
	fmt.Fprintf(w, `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1752563089,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":14,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", 14+n, n)
	fmt.Fprintf(w, `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1752563089,"model":"m","choices":[],"usage":{"prompt_tokens":14,"total_tokens":%d,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", 14+n, n)
}

func ollamaThinkStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	// line writes content, already in JSON string form (escapes as sent).
	line := func(content string) {
		fmt.Fprintf(w, `{"model":"m","created_at":"2026-12-01T09:00:00.1Z","message":{"role":"assistant","content":"%s"},"done":false}`+"\n", content)
		w.(http.Flusher).Flush()
	}
	// <think> and </think> are tokens of their own, as in
	// ollama-think-tags-chat.ndjson; the answer starts after </think>.
	line(`\u003cthink\u003e`)
	for i := range reasoningChunks - 2 {
		time.Sleep(reasoningGap)
		line(fmt.Sprintf("step %d", i))
	}
	time.Sleep(reasoningGap)
	line(`\u003c/think\u003e`)
	time.Sleep(reasoningGap)
	for i := range answerChunks {
		line(fmt.Sprintf("word%d ", i))
	}
	fmt.Fprintf(w, `{"model":"m","created_at":"2026-12-01T09:00:00.2Z","message":{"role":"assistant","content":""},"done_reason":"length","done":true,"total_duration":95000000,"load_duration":5000000,"prompt_eval_count":8,"prompt_eval_duration":4000000,"eval_count":%d,"eval_duration":85000000}`+"\n", reasoningChunks+answerChunks)
}

// TestRunReasoningStreams runs servebench against reasoning streams of
// both shapes: TTFT is the first token of any kind (a reasoning token,
// never null), TTFR equals it, TTFA comes at least the reasoning's
// duration later, the token split is 5 reasoning and 3 answer tokens,
// marked as an estimate (neither server splits its count), and the table,
// Markdown and HTML reports show the reasoning columns.
func TestRunReasoningStreams(t *testing.T) {
	srv := reasoningServer(t)
	for _, tt := range []struct{ backend, url string }{
		{"vllm", srv.URL},
		{"ollama", srv.URL},
	} {
		t.Run(tt.backend, func(t *testing.T) {
			dir := t.TempDir()
			report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
			_, stderr, err := cliRun(context.Background(), "run", "--backend", tt.backend, "--url", tt.url, "--model", "m",
				"--concurrency", "2", "--requests", "6", "--warmup", "0", "--prompt-tokens", "0",
				"--max-tokens", fmt.Sprint(reasoningChunks+answerChunks), "--metrics-url", "none", "--gpu", "none",
				"--out", report, "--records", recs, "--quiet")
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			l := readDoc(t, report).Runs[0].Levels[0]
			if l.Errors != 0 || l.TTFTP50Ms == nil || l.TTFRP50Ms == nil || l.TTFAP50Ms == nil {
				t.Fatalf("level %+v", l)
			}
			t.Logf("%s: TTFT p50 %.1f ms, TTFR p50 %.1f ms, TTFA p50 %.1f ms; reasoning %d, answer %d tokens (estimated %v)",
				tt.backend, *l.TTFTP50Ms, *l.TTFRP50Ms, *l.TTFAP50Ms, *l.ReasoningTokens, *l.AnswerTokens, l.ReasoningTokensEstimated)
			if *l.TTFRP50Ms != *l.TTFTP50Ms || *l.TTFTP50Ms <= 0 {
				t.Errorf("TTFT p50 %v ms, TTFR p50 %v ms: the first token is a reasoning token", *l.TTFTP50Ms, *l.TTFRP50Ms)
			}
			if min := float64(reasoningChunks-1) * float64(reasoningGap) / 1e6; *l.TTFAP50Ms-*l.TTFTP50Ms < min {
				t.Errorf("TTFA p50 %.1f ms is not %.0f ms after TTFT p50 %.1f ms", *l.TTFAP50Ms, min, *l.TTFTP50Ms)
			}
			if *l.ReasoningTokens != 6*reasoningChunks || *l.AnswerTokens != 6*answerChunks || !l.ReasoningTokensEstimated {
				t.Errorf("reasoning %d answer %d estimated %v", *l.ReasoningTokens, *l.AnswerTokens, l.ReasoningTokensEstimated)
			}
			checkRebuild(t, report, readRecords(t, recs))
			for format, want := range map[string][]string{
				"table":    {"TTFR p50 ms", "TTFA p50 ms", "reasoning tok", "≈30", "estimated from the streamed chunks"},
				"markdown": {"| TTFA p50 ms |", "≈30"},
				"html":     {"<th>TTFA p50 ms</th>", "≈30"},
			} {
				var out, errb bytes.Buffer
				// --wide: the reasoning figures are not the compact table's.
				if err := Run(context.Background(), []string{"report", report, "--format", format, "--wide"}, &out, &errb); err != nil {
					t.Fatalf("report --format %s: %v %s", format, err, errb.String())
				}
				for _, w := range want {
					if !strings.Contains(out.String(), w) {
						t.Errorf("report --format %s lacks %q", format, w)
					}
				}
			}
		})
	}
}
