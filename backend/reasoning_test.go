package backend

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

// TestReplayReasoningStreams replays the reasoning fixtures and checks the
// three first-token times (any, reasoning, answer), the reasoning split and
// the prompt cache counts.
func TestReplayReasoningStreams(t *testing.T) {
	tests := []struct {
		name, file string
		kind       Kind
		api        API
		// chunk indices (into ChunkOffsetsNS) of the first reasoning and
		// first answer chunk; -1: none.
		firstReasoning, firstAnswer int
		out, reasoning              *int
		estimated                   bool
		prompt, cached              *int
	}{
		{
			// Per-chunk counts from continuous usage: 4 reasoning tokens
			// (the </think> token went to the answer's first chunk).
			name: "vllm reasoning_content", file: "testdata/vllm-reasoning-stream.sse", kind: VLLM,
			firstReasoning: 0, firstAnswer: 5, out: ip(8), reasoning: ip(4), estimated: true, prompt: ip(14),
		},
		{
			// SGLang counts reasoning tokens itself (usage.reasoning_tokens).
			name: "sglang reasoning_tokens", file: "testdata/sglang-stream.sse", kind: SGLang,
			firstReasoning: 0, firstAnswer: 1, out: ip(6), reasoning: ip(3), prompt: ip(20),
		},
		{
			// No per-chunk counts: 6 × 3 reasoning of 4 chunks = 4.5 → 5.
			name: "llama.cpp reasoning_content and cache", file: "testdata/llamacpp-reasoning-stream.sse", kind: LlamaCpp,
			firstReasoning: 0, firstAnswer: 3, out: ip(6), reasoning: ip(5), estimated: true, prompt: ip(120), cached: ip(96),
		},
		{
			name: "ollama thinking field", file: "testdata/ollama-thinking-generate.ndjson", kind: Ollama, api: Generate,
			firstReasoning: 0, firstAnswer: 4, out: ip(9), reasoning: ip(5), estimated: true, prompt: ip(72),
		},
		{
			// <think>, \n, Okay, so, \n, </think> are reasoning; \n\n, Hi, !
			// the answer, which becomes visible at "Hi".
			name: "ollama think tags in content", file: "testdata/ollama-think-tags-chat.ndjson", kind: Ollama,
			firstReasoning: 0, firstAnswer: 7, out: ip(9), reasoning: ip(6), estimated: true, prompt: ip(8),
		},
		{
			// A stream without reasoning gets none of the reasoning fields.
			name: "plain stream", file: "testdata/vllm-continuous-usage.sse", kind: VLLM,
			firstReasoning: -1, firstAnswer: -1, out: ip(5), prompt: ip(12),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := "text/event-stream"
			if tt.kind == Ollama {
				ct = "application/x-ndjson"
			}
			srv, _ := replayServer(t, readTranscript(t, tt.file), ct)
			c, err := New(Config{Kind: tt.kind, API: tt.api, BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: 8}, &res)
			if !res.OK() {
				t.Fatalf("request failed: %s", res.Error)
			}
			if res.TTFTNS == nil || *res.TTFTNS != res.ChunkOffsetsNS[0] || *res.TTFTNS <= 0 {
				t.Fatalf("TTFT %v must be the first chunk of any kind, %d", res.TTFTNS, res.ChunkOffsetsNS[0])
			}
			checkOffset(t, "TTFR", res.TTFRNS, res.ChunkOffsetsNS, tt.firstReasoning)
			checkOffset(t, "TTFA", res.TTFANS, res.ChunkOffsetsNS, tt.firstAnswer)
			if !reflect.DeepEqual(res.OutputTokens, tt.out) || !reflect.DeepEqual(res.ReasoningTokens, tt.reasoning) ||
				res.ReasoningTokensEstimated != tt.estimated {
				t.Errorf("output %v reasoning %v estimated %v; want %v %v %v", deref(res.OutputTokens),
					deref(res.ReasoningTokens), res.ReasoningTokensEstimated, deref(tt.out), deref(tt.reasoning), tt.estimated)
			}
			if !reflect.DeepEqual(res.PromptTokens, tt.prompt) || !reflect.DeepEqual(res.CachedPromptTokens, tt.cached) {
				t.Errorf("prompt %v cached %v; want %v %v", deref(res.PromptTokens), deref(res.CachedPromptTokens), deref(tt.prompt), deref(tt.cached))
			}
		})
	}
}

// checkOffset checks that got is the offset of chunk i (nil for i < 0).
func checkOffset(t *testing.T, name string, got *int64, offsets []int64, i int) {
	t.Helper()
	switch {
	case i < 0 && got != nil:
		t.Errorf("%s = %d, want none", name, *got)
	case i >= 0 && (got == nil || *got != offsets[i]):
		t.Errorf("%s = %v, want chunk %d's offset %d", name, got, i, offsets[i])
	}
}

// TestThinkScanner feeds content chunk by chunk, as raw JSON string
// contents, and checks each chunk's kind.
func TestThinkScanner(t *testing.T) {
	type kind = chunkKind
	r, a, v := kind{reasoning: true}, kind{answer: true}, kind{answer: true, visible: true}
	tests := []struct {
		name       string
		chunks     []string
		want       []kind
		reclassify int // chunk that closes an unopened think; -1 none
	}{
		{"tags whole", []string{"<think>", "hmm", "</think>", "\\n\\n", "Yes"}, []kind{r, r, r, a, v}, -1},
		{"tags split across chunks", []string{"<th", "ink>ok</thi", "nk>Yes"}, []kind{r, r, {reasoning: true, answer: true, visible: true}}, -1},
		{"escaped by Go servers", []string{"\\u003cthink\\u003e", "x", "\\u003c/think\\u003e", "A"}, []kind{r, r, r, v}, -1},
		{"leading white space", []string{"\\n", "<think>", "x", "</think>", "A"}, []kind{a, r, r, r, v}, -1},
		{"no tags: answer", []string{"Hello", " <think> later", "!"}, []kind{v, v, v}, -1},
		{"not a tag", []string{"<b>bold</b>"}, []kind{v}, -1},
		{"close without open (DeepSeek-R1)", []string{"Okay", " so", "</think>", "\\n\\nAnswer"}, []kind{v, v, r, v}, 2},
		{"close then answer in one chunk", []string{"hm", "</think>Yes"}, []kind{v, {reasoning: true, answer: true, visible: true}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s thinkScanner
			for i, c := range tt.chunks {
				got, re := s.scan([]byte(c))
				if got != tt.want[i] {
					t.Errorf("chunk %d %q: %+v, want %+v", i, c, got, tt.want[i])
				}
				if re != (i == tt.reclassify) {
					t.Errorf("chunk %d %q: reclassify %v", i, c, re)
				}
			}
		})
	}
}

// TestReasoningTallyReclassifies checks that a </think> without <think>
// turns the content before it into reasoning: counts, times and tokens.
func TestReasoningTallyReclassifies(t *testing.T) {
	tl := newReasoningTally()
	for i, c := range []string{"Okay", " so", "</think>", "\\n\\n", "Yes"} {
		tl.add(chunkText{content: []byte(c)}, int64(10*(i+1)), 1)
	}
	if tl.firstReasoning != 10 || tl.firstAnswer != 50 || tl.reasoningChunks != 3 || tl.answerChunks != 2 {
		t.Fatalf("tally %+v", tl)
	}
	n, est, ok := tl.split(5, true, 0)
	if n != 3 || !est || !ok {
		t.Fatalf("split %d %v %v, want 3 estimated", n, est, ok)
	}
}

func TestReasoningSplitPrefersServerCount(t *testing.T) {
	tl := newReasoningTally()
	tl.add(chunkText{reasoning: true}, 1, -1)
	tl.add(chunkText{content: []byte("A")}, 2, -1)
	tl.reported = 7
	if n, est, ok := tl.split(20, false, 0); n != 7 || est || !ok {
		t.Fatalf("split %d %v %v, want the server's 7", n, est, ok)
	}
	// A zero the server sends by default while reasoning was streamed is
	// no count (SGLang's usage.reasoning_tokens defaults to 0).
	tl.reported = 0
	if n, est, _ := tl.split(20, false, 0); n != 10 || !est {
		t.Fatalf("split %d %v, want the estimate 10", n, est)
	}
	none := newReasoningTally()
	none.add(chunkText{content: []byte("A")}, 1, -1)
	none.reported = 0
	if n, est, ok := none.split(20, false, 0); n != 0 || est || !ok {
		t.Fatalf("no reasoning, reported 0: %d %v %v", n, est, ok)
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`plain`, "plain"},
		{`a\nb\t\"q\"\\`, "a\nb\t\"q\"\\"},
		{`\u003cthink\u003e`, "<think>"},
		{`caf\u00e9 \ud83d\ude00`, "café 😀"},
		{`bad \ud83d alone`, "bad \uFFFD alone"},
		{`ü raw`, "ü raw"},
	}
	for _, tt := range tests {
		var b strings.Builder
		appendJSONString(&b, []byte(tt.raw))
		if b.String() != tt.want {
			t.Errorf("%q → %q, want %q", tt.raw, b.String(), tt.want)
		}
	}
}

// TestAnswerText checks that a request asking for its answer gets the
// content exactly as streamed (escapes decoded), reasoning fields left
// out, and that one not asking gets nothing copied.
func TestAnswerText(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"testdata/vllm-reasoning-stream.sse", "\n\nParis."},
		{"testdata/ollama-think-tags-chat.ndjson", "<think>\nOkay so\n</think>\n\nHi!"},
		{"testdata/ollama-chat-testbed.ndjson", "rHu%"},
	} {
		kind, ct := VLLM, "text/event-stream"
		if strings.HasSuffix(tt.file, ".ndjson") {
			kind, ct = Ollama, "application/x-ndjson"
		}
		srv, _ := replayServer(t, readTranscript(t, tt.file), ct)
		c, _ := New(Config{Kind: kind, BaseURL: srv.URL, Model: "m"})
		answer := &strings.Builder{}
		answer.WriteString("left from a previous request")
		var res record.Result
		c.Do(t.Context(), &Request{Prompt: "p", MaxTokens: 8, Answer: answer}, &res)
		if !res.OK() || answer.String() != tt.want {
			t.Errorf("%s: answer %q (%s), want %q", tt.file, answer.String(), res.Error, tt.want)
		}
	}
}

// TestReasoningChunkAllocations pins the per-chunk path at zero
// allocations for reasoning chunks and think tags too.
func TestReasoningChunkAllocations(t *testing.T) {
	st := newStream(&record.Result{}, 1<<20)
	st.offsets = make([]int64, 0, 1<<16)
	now := time.Now()
	for _, tt := range []struct {
		name string
		dec  decoder
		data string
	}{
		{"openai reasoning", &openAIDecoder{}, vllmReasoningChunk},
		{"openai answer", &openAIDecoder{}, `{"choices":[{"index":0,"delta":{"content":"\u003c/think\u003eYes"}}]}`},
		{"ollama thinking", &ollamaDecoder{}, `{"model":"m","created_at":"2025-08-16T21:50:45.146950362Z","response":"","thinking":" user","done":false}`},
		{"ollama think tag", &ollamaDecoder{}, `{"model":"m","created_at":"2026-12-01T09:00:00.1Z","message":{"role":"assistant","content":"\u003cthink\u003e"},"done":false}`},
	} {
		data := []byte(tt.data)
		allocs := testing.AllocsPerRun(1000, func() { _, _ = tt.dec.chunk(data, now, st) })
		if allocs != 0 {
			t.Errorf("%s: %v allocations per chunk, want 0", tt.name, allocs)
		}
	}
}
