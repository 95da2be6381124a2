package backend

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

// vllmChunk is a content chunk in the shape vLLM sends with
// continuous_usage_stats (see testdata/vllm-continuous-usage.sse).
const vllmChunk = `{"id":"chatcmpl-6f1d","object":"chat.completion.chunk","created":1752563089,"model":"m","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":32,"total_tokens":40,"completion_tokens":8}}`

// vllmReasoningChunk is a reasoning chunk of a vLLM stream with a reasoning
// parser and continuous usage (see testdata/vllm-reasoning-stream.sse).
const vllmReasoningChunk = `{"id":"chatcmpl-6f1d","object":"chat.completion.chunk","created":1752563089,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":" token"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":32,"total_tokens":40,"completion_tokens":8}}`

// ollamaThinkTagChunk is an Ollama line carrying a think tag in its
// content, escaped as Ollama sends it (testdata/ollama-think-tags-chat.ndjson).
const ollamaThinkTagChunk = `{"model":"deepseek-r1:1.5b","created_at":"2026-12-01T09:00:00.100000000Z","message":{"role":"assistant","content":"\u003cthink\u003e"},"done":false}`

// BenchmarkReasoningChunk measures decoding reasoning chunks on the hot
// path: a reasoning field (vLLM) and a think tag in content (Ollama).
func BenchmarkReasoningChunk(b *testing.B) {
	b.Run("vllm-reasoning-field", func(b *testing.B) { benchChunk(b, &openAIDecoder{}, vllmReasoningChunk) })
	b.Run("ollama-think-tag", func(b *testing.B) { benchChunk(b, &ollamaDecoder{}, ollamaThinkTagChunk) })
}

// benchChunk decodes data with dec again and again, as the chunks of
// 128-token streams.
func benchChunk(b *testing.B, dec decoder, chunk string) {
	st := newStream(&record.Result{}, 128)
	data := []byte(chunk)
	now := time.Now()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if i%128 == 0 {
			st.offsets, st.tokens, st.assigned = st.offsets[:0], st.tokens[:0], 0
		}
		if _, f := dec.chunk(data, now, st); f != nil {
			b.Fatal(f)
		}
	}
}

// BenchmarkOpenAIChunk measures decoding one SSE chunk on the hot path.
func BenchmarkOpenAIChunk(b *testing.B) { benchChunk(b, &openAIDecoder{}, vllmChunk) }

// BenchmarkSSEStream measures the whole per-chunk loop (line reading,
// framing, decoding, stamping) over an in-memory 128-chunk stream.
func BenchmarkSSEStream(b *testing.B) {
	var buf bytes.Buffer
	for i := 1; i <= 128; i++ {
		buf.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":32,"completion_tokens":` + strconv.Itoa(i) + "}}\n\n")
	}
	buf.WriteString("data: [DONE]\n\n")
	stream := buf.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	r := bytes.NewReader(stream)
	for b.Loop() {
		r.Reset(stream)
		lr := newLineReader(io.Reader(r))
		st := newStream(&record.Result{}, 128)
		st.t0 = time.Now()
		if err := readStream(lr, &sseFrame{}, &openAIDecoder{}, st); err != nil {
			b.Fatal(err)
		}
		lr.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*128), "ns/chunk")
}

// TestHotPathAllocations pins the per-chunk loop at zero allocations once
// the chunk slices are sized, so a change that allocates per chunk fails.
func TestHotPathAllocations(t *testing.T) {
	st := newStream(&record.Result{}, 1<<20)
	st.offsets = make([]int64, 0, 1<<16)
	st.tokens = make([]int, 0, 1<<16)
	now := time.Now()
	tests := []struct {
		name string
		dec  decoder
		data string
	}{
		{"openai", &openAIDecoder{}, vllmChunk},
		{"ollama", &ollamaDecoder{}, `{"model":"tiny","created_at":"2026-11-29T18:08:34.66Z","message":{"role":"assistant","content":"r"},"done":false}`},
	}
	for _, tt := range tests {
		data := []byte(tt.data)
		cum := 8
		allocs := testing.AllocsPerRun(1000, func() {
			_, _ = tt.dec.chunk(data, now, st)
			st.assigned = cum - 1 // keep the cumulative count consistent
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per chunk, want 0", tt.name, allocs)
		}
	}
}

// BenchmarkDoLoopback measures whole requests through the real client
// against a loopback server answering 1-token streams (the requests/s
// figure of the harness benchmark, without a separate process; see bench/).
func BenchmarkDoLoopback(b *testing.B) {
	body := []byte(`data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}],"usage":{"prompt_tokens":8,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		rq := &Request{Prompt: "p", MaxTokens: 1}
		var res record.Result
		for pb.Next() {
			c.Do(context.Background(), rq, &res)
			if !res.OK() {
				b.Error(res.Error)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// sseStream is an in-memory vLLM-shaped stream of n content chunks with
// cumulative usage on each (as the harness server sends), then [DONE].
func sseStream(n int) []byte {
	var buf bytes.Buffer
	for i := 1; i <= n; i++ {
		buf.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764400000,"model":"bench","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":8,"total_tokens":` + strconv.Itoa(8+i) + `,"completion_tokens":` + strconv.Itoa(i) + "}}\n\n")
	}
	buf.WriteString("data: [DONE]\n\n")
	return buf.Bytes()
}

// TestStreamLoopAllocationsPerChunk pins the whole per-chunk loop (line
// reading, SSE framing, decoding, stamping, per-chunk token counts) at
// zero allocations per chunk: a stream of 1,000 chunks must allocate no
// more than one of 10 under the same max_tokens, so anything that
// allocates per chunk, or grows a slice as chunks arrive, fails. The line
// buffer is made once, outside the pool: under -race sync.Pool drops a
// quarter of what it is given back, at random, so a pooled buffer would add
// a per-stream allocation to either count by chance (CI saw 9 against 8).
func TestStreamLoopAllocationsPerChunk(t *testing.T) {
	const maxTokens = 1000
	allocs := func(n int) float64 {
		data := sseStream(n)
		r := bytes.NewReader(data)
		br := bufio.NewReaderSize(r, 4<<10)
		return testing.AllocsPerRun(20, func() {
			r.Reset(data)
			br.Reset(r)
			lr := &lineReader{br: br}
			st := newStream(&record.Result{}, maxTokens)
			st.t0 = time.Now()
			if err := readStream(lr, &sseFrame{}, &openAIDecoder{}, st); err != nil {
				t.Fatal(err)
			}
			if len(st.offsets) != n || len(st.tokens) != n {
				t.Fatalf("%d chunks: %d offsets, %d token counts", n, len(st.offsets), len(st.tokens))
			}
		})
	}
	short, long := allocs(10), allocs(1000)
	if long > short {
		t.Errorf("a 1000-chunk stream allocates %v times, a 10-chunk one %v: %.4f allocations per chunk, want 0",
			long, short, (long-short)/990)
	}
}

// TestSmallUint checks the fast path of token counts against
// strconv.ParseInt, and that it leaves to ParseInt what it cannot read.
func TestSmallUint(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"0", true}, {"7", true}, {"0042", true}, {"123456789012345678", true},
		{"1234567890123456789", false}, {"", false}, {"-1", false}, {"1.5", false}, {"1e3", false}, {"12a", false},
	} {
		v, ok := smallUint([]byte(tt.in))
		if ok != tt.ok {
			t.Errorf("smallUint(%q) ok=%v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if want, _ := strconv.ParseInt(tt.in, 10, 64); ok && v != want {
			t.Errorf("smallUint(%q) = %d, want %d", tt.in, v, want)
		}
	}
}
