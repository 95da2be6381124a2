package backend

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

// readTranscript reads a testdata/ stream as it is, byte for byte (SSE
// fixtures name their source in their own ":" comment lines, NDJSON ones in
// testdata/SOURCES.md).
func readTranscript(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replayServer serves body as a streamed response to any POST, flushing after
// each event (blank-line separated for SSE, each line for NDJSON), and
// remembers the last request path.
func replayServer(t testing.TB, body []byte, contentType string) (*httptest.Server, *string) {
	t.Helper()
	sep := []byte("\n\n")
	if contentType != "text/event-stream" {
		sep = []byte("\n")
	}
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Header().Set("Content-Type", contentType)
		for _, ev := range bytes.SplitAfter(body, sep) {
			_, _ = w.Write(ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &path
}

func ip(v int) *int { return &v }

func TestReplayTranscripts(t *testing.T) {
	tests := []struct {
		name, file  string
		kind        Kind
		api         API
		wantPath    string
		chunks      int
		prompt, out *int
		chunkTokens []int
		finish      string
		reason      record.Reason
		evalNS      *int64
		maxTokens   int // the request's max_tokens; 0 means 8
	}{
		{
			// Real vLLM 0.9.0 chat stream without usage: output tokens
			// must stay unknown (nil), never be counted from chunks.
			name: "vllm capture", file: "testdata/vllm-0.9.0-chat-stream.sse", kind: VLLM,
			wantPath: "/v1/chat/completions", chunks: 32, finish: "length", maxTokens: 32,
		},
		{
			// Real llama-server b6497 final chunk (content chunks elided by
			// the reporter): tokens and timings are read; with no content
			// chunk the request is recorded as an empty response.
			name: "llama.cpp capture", file: "testdata/llamacpp-b6497-final-chunk.sse", kind: LlamaCpp,
			wantPath: "/v1/chat/completions", prompt: ip(75), out: ip(31),
			reason: record.ReasonEmptyResponse, evalNS: i64(875429000), maxTokens: 32,
		},
		{
			name: "vllm continuous usage fixture", file: "testdata/vllm-continuous-usage.sse", kind: VLLM,
			wantPath: "/v1/chat/completions", chunks: 4, prompt: ip(12), out: ip(5),
			chunkTokens: []int{1, 1, 2, 1}, finish: "length",
		},
		{
			name: "llama.cpp full stream fixture", file: "testdata/llamacpp-stream.sse", kind: LlamaCpp,
			wantPath: "/v1/chat/completions", chunks: 3, prompt: ip(9), out: ip(3), finish: "length",
			evalNS: i64(84750000),
		},
		{
			name: "sglang fixture", file: "testdata/sglang-stream.sse", kind: SGLang, api: Completions,
			wantPath: "/v1/completions", chunks: 3, prompt: ip(20), out: ip(6), finish: "length",
		},
		{
			name: "tgi snapshot fixture", file: "testdata/tgi-stream.sse", kind: TGI,
			wantPath: "/v1/chat/completions", chunks: 2, prompt: ip(39), out: ip(3), finish: "stop",
		},
		{
			// Ollama's /v1/completions puts "completion_tokens": 0 on every
			// content chunk: not a running count, so no per-chunk counts
			// (they once came out as [0 0 0 0 0 0 0 8]).
			name: "ollama completions testbed capture", file: "testdata/ollama-0.6.5-completions-testbed.sse", kind: OpenAI, api: Completions,
			wantPath: "/v1/completions", chunks: 8, prompt: ip(17), out: ip(8), finish: "length",
		},
		{
			name: "ollama chat testbed capture", file: "testdata/ollama-chat-testbed.ndjson", kind: Ollama,
			wantPath: "/api/chat", chunks: 4, prompt: ip(6), out: ip(4), finish: "length",
		},
		{
			name: "ollama generate testbed capture", file: "testdata/ollama-generate-testbed.ndjson", kind: Ollama, api: Generate,
			wantPath: "/api/generate", chunks: 4, prompt: ip(6), out: ip(4), finish: "length",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := "text/event-stream"
			if tt.kind == Ollama {
				ct = "application/x-ndjson"
			}
			srv, path := replayServer(t, readTranscript(t, tt.file), ct)
			c, err := New(Config{Kind: tt.kind, API: tt.api, BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			maxTokens := tt.maxTokens
			if maxTokens == 0 {
				maxTokens = 8
			}
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: maxTokens}, &res)
			if *path != tt.wantPath {
				t.Errorf("path = %q, want %q", *path, tt.wantPath)
			}
			if res.Reason != tt.reason {
				t.Fatalf("Reason = %q (%s), want %q", res.Reason, res.Error, tt.reason)
			}
			if len(res.ChunkOffsetsNS) != tt.chunks {
				t.Errorf("content chunks = %d, want %d", len(res.ChunkOffsetsNS), tt.chunks)
			}
			if tt.chunks > 0 {
				if res.TTFTNS == nil || *res.TTFTNS != res.ChunkOffsetsNS[0] || *res.TTFTNS > res.E2ENS {
					t.Errorf("TTFT %v, first chunk %d, E2E %d", res.TTFTNS, res.ChunkOffsetsNS[0], res.E2ENS)
				}
			} else if res.TTFTNS != nil {
				t.Errorf("TTFT = %d with no content chunk", *res.TTFTNS)
			}
			if !reflect.DeepEqual(res.PromptTokens, tt.prompt) || !reflect.DeepEqual(res.OutputTokens, tt.out) {
				t.Errorf("tokens prompt=%v output=%v, want %v %v", deref(res.PromptTokens), deref(res.OutputTokens), deref(tt.prompt), deref(tt.out))
			}
			if !reflect.DeepEqual(res.ChunkTokens, tt.chunkTokens) {
				t.Errorf("ChunkTokens = %v, want %v", res.ChunkTokens, tt.chunkTokens)
			}
			if res.FinishReason != tt.finish {
				t.Errorf("FinishReason = %q, want %q", res.FinishReason, tt.finish)
			}
			if tt.evalNS != nil && (res.Server == nil || res.Server.EvalNS == nil || *res.Server.EvalNS != *tt.evalNS) {
				t.Errorf("Server = %+v, want EvalNS %d", res.Server, *tt.evalNS)
			}
			if res.Status != 200 || res.ExpectedOutputTokens != maxTokens || res.Warnings != nil {
				t.Errorf("Status %d Expected %d Warnings %q", res.Status, res.ExpectedOutputTokens, res.Warnings)
			}
		})
	}
}

// TestReplayServerTimings checks the Ollama timings against the capture's
// final line decoded independently with encoding/json.
func TestReplayServerTimings(t *testing.T) {
	body := readTranscript(t, "testdata/ollama-chat-testbed.ndjson")
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var last struct {
		PromptEvalDuration int64 `json:"prompt_eval_duration"`
		EvalDuration       int64 `json:"eval_duration"`
		LoadDuration       int64 `json:"load_duration"`
		TotalDuration      int64 `json:"total_duration"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	srv, _ := replayServer(t, body, "application/x-ndjson")
	c, _ := New(Config{Kind: Ollama, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: 4}, &res)
	if res.Server == nil {
		t.Fatal("no server timings")
	}
	got := [4]*int64{res.Server.PromptEvalNS, res.Server.EvalNS, res.Server.LoadNS, res.Server.TotalNS}
	want := [4]int64{last.PromptEvalDuration, last.EvalDuration, last.LoadDuration, last.TotalDuration}
	for i := range got {
		if got[i] == nil || *got[i] != want[i] || want[i] <= 0 {
			t.Errorf("timing %d = %v, want %d", i, got[i], want[i])
		}
	}
}

func i64(v int64) *int64 { return &v }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestStartNS checks that Do stamps the write moment against RunStart.
func TestStartNS(t *testing.T) {
	srv, _ := replayServer(t, readTranscript(t, "testdata/tgi-stream.sse"), "text/event-stream")
	c, _ := New(Config{Kind: TGI, BaseURL: srv.URL, Model: "m"})
	runStart := time.Now().Add(-time.Second)
	res := record.Result{Seq: 7, StartNS: -1}
	c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: 3, RunStart: runStart}, &res)
	if res.StartNS < int64(time.Second) || res.StartNS > int64(2*time.Second) || res.Seq != 7 {
		t.Errorf("StartNS = %v (Seq %d), want just over 1s after RunStart", time.Duration(res.StartNS), res.Seq)
	}
	res.StartNS = -1
	c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: 3}, &res)
	if res.StartNS != -1 {
		t.Errorf("StartNS changed to %d without RunStart", res.StartNS)
	}
}
