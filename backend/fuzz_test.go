package backend

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/servebench/servebench/record"
)

// seedTranscripts adds the published streams and the fixtures of testdata/
// to a fuzz corpus.
func seedTranscripts(f *testing.F, files ...string) {
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// parseAll runs the per-chunk loop over a whole stream held in memory.
func parseAll(data []byte, fr framing, dec decoder) (*record.Result, error) {
	res := &record.Result{}
	st := newStream(res, 16)
	st.t0 = time.Now()
	lr := newLineReader(bytes.NewReader(data))
	defer lr.release()
	err := readStream(lr, fr, dec, st)
	f, _ := err.(*failure)
	st.finish(f)
	return res, err
}

// checkResult holds invariants every parse must keep, whatever the input.
func checkResult(t *testing.T, res *record.Result) {
	if res.ChunkTokens != nil && len(res.ChunkTokens) != len(res.ChunkOffsetsNS) {
		t.Fatalf("ChunkTokens %d != chunks %d", len(res.ChunkTokens), len(res.ChunkOffsetsNS))
	}
	if (res.TTFTNS == nil) != (len(res.ChunkOffsetsNS) == 0) {
		t.Fatalf("TTFT %v with %d chunks", res.TTFTNS, len(res.ChunkOffsetsNS))
	}
	if res.OK() != (res.Reason == record.ReasonNone) {
		t.Fatalf("Reason %q with Error %q", res.Reason, res.Error)
	}
	for _, v := range []*int64{res.TTFRNS, res.TTFANS} {
		if v != nil && (res.TTFTNS == nil || *v < *res.TTFTNS) {
			t.Fatalf("first reasoning/answer token %d before TTFT %v", *v, res.TTFTNS)
		}
	}
	if res.ReasoningTokens != nil && *res.ReasoningTokens < 0 {
		t.Fatalf("reasoning tokens %d", *res.ReasoningTokens)
	}
}

// FuzzAnswerText checks the answer text a multi-turn workload sends back
// against encoding/json's decoding of the same JSON string.
func FuzzAnswerText(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb\"c`, `\u003cthink\u003e`, `\ud83d\ude00 \ud83d`, `é`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &want) != nil {
			return // not the contents of a valid JSON string
		}
		var b strings.Builder
		appendJSONString(&b, raw)
		if b.String() != want && utf8.ValidString(want) && utf8.Valid(raw) {
			t.Fatalf("%q decodes to %q, encoding/json says %q", raw, b.String(), want)
		}
	})
}

func FuzzSSE(f *testing.F) {
	seedTranscripts(f, "testdata/vllm-0.9.0-chat-stream.sse", "testdata/llamacpp-b6497-final-chunk.sse",
		"testdata/vllm-continuous-usage.sse", "testdata/llamacpp-stream.sse", "testdata/sglang-stream.sse", "testdata/tgi-stream.sse",
		"testdata/vllm-reasoning-stream.sse", "testdata/llamacpp-reasoning-stream.sse")
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\"}}]}\r\n\r\ndata:[DONE]"))
	f.Add([]byte(": keep-alive\nevent: x\ndata: {\"error\":null,\"usage\":{\"completion_tokens\":1e3}}\n"))
	f.Add([]byte("data: {\"choices\":[[[[[[[[[[[[]]]]]]]]]]]]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, _ := parseAll(data, sseFrame{}, &openAIDecoder{})
		checkResult(t, res)
	})
}

func FuzzNDJSON(f *testing.F) {
	seedTranscripts(f, "testdata/ollama-chat-testbed.ndjson", "testdata/ollama-generate-testbed.ndjson",
		"testdata/ollama-thinking-generate.ndjson", "testdata/ollama-think-tags-chat.ndjson")
	f.Add([]byte("{\"error\":\"model 'x' not found\"}\n"))
	f.Add([]byte("{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"eval_count\":-3}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, _ := parseAll(data, ndjsonFrame{}, &ollamaDecoder{})
		checkResult(t, res)
	})
}

// FuzzJSONScan checks the hand-rolled chunk scanner against encoding/json:
// it must never accept a chunk that is not valid JSON, and must read the
// same usage counts encoding/json reads.
func FuzzJSONScan(f *testing.F) {
	f.Add([]byte(vllmChunk))
	f.Add([]byte(`{"usage":{"prompt_tokens":01}}`))
	f.Add([]byte(`{"choices":[{"text":"\ud83d"}],"usage":null} x`))
	f.Add([]byte(`{"a":"\u12"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d openAIDecoder
		err := d.decode(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("scanner accepted invalid JSON %q", data)
		}
		var ref struct {
			Usage *struct {
				Completion *json.Number `json:"completion_tokens"`
			} `json:"usage"`
		}
		// encoding/json also matches keys case-insensitively and through
		// escapes; servers send neither, so such inputs are not compared.
		if bytes.ContainsAny(data, "\\ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return
		}
		if json.Unmarshal(data, &ref) != nil || ref.Usage == nil || ref.Usage.Completion == nil {
			return
		}
		if n, err := ref.Usage.Completion.Int64(); err == nil && n >= 0 && d.c.completion != n {
			t.Fatalf("completion_tokens %d, encoding/json says %d (%q)", d.c.completion, n, data)
		}
	})
}
