package backend

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
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
	lr.crEnds = fr.crEnds()
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
		res, _ := parseAll(data, &sseFrame{}, &openAIDecoder{})
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
		n, err := ref.Usage.Completion.Int64()
		if err != nil {
			return
		}
		want := n
		if n < 0 || n > record.MaxTokenCount {
			want = countInvalid // not a count: left null with a warning
		}
		if d.c.completion.v != want {
			t.Fatalf("completion_tokens %d, encoding/json says %d (%q)", d.c.completion.v, n, data)
		}
	})
}

// FuzzLineReader holds the line reader against a reference split of the
// whole input: LF and CR LF end lines, and so does a lone CR where crEnds
// is set, however the input is cut into reads.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\r\nb\rc\n\r\n"), true, uint8(1))
	f.Add([]byte("data: x\r\r"), true, uint8(3))
	f.Add([]byte("x\ry\n"), false, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, crEnds bool, step uint8) {
		want := referenceLines(data, crEnds)
		lr := newLineReader(&chopReader{b: data, step: int(step%7) + 1})
		lr.crEnds = crEnds
		defer lr.release()
		var got []string
		for {
			line, err := lr.next()
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if err == nil || len(line) > 0 {
				got = append(got, string(line))
			}
			if err == io.EOF {
				break
			}
		}
		if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") || len(got) != len(want) {
			t.Fatalf("lines of %q (crEnds %v, step %d) = %q, want %q", data, crEnds, step%7+1, got, want)
		}
	})
}

// referenceLines splits b as next does: at LF, CR LF, and (crEnds) CR; an
// unterminated last line is a line.
func referenceLines(b []byte, crEnds bool) []string {
	var out []string
	start := 0
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\n':
			out = append(out, strings.TrimSuffix(string(b[start:i]), "\r"))
			start = i + 1
		case b[i] == '\r' && crEnds:
			out = append(out, string(b[start:i]))
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, string(b[start:]))
	}
	return out
}

// chopReader returns b in reads of step bytes.
type chopReader struct {
	b    []byte
	step int
}

func (c *chopReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.b[:min(c.step, len(c.b))])
	c.b = c.b[n:]
	return n, nil
}

// FuzzRedact: whatever the text around it, no key survives redact in the
// forms it undoes.
func FuzzRedact(f *testing.F) {
	f.Add("error: \\u0073k-abc12345 rejected", "sk-abc12345", uint8(0))
	f.Add("%73%6B-abc12345", "sk-abc12345", uint8(1))
	f.Add("x", "sk-abc12345", uint8(2))
	f.Fuzz(func(t *testing.T, text, key string, form uint8) {
		// API keys are printable ASCII (a \u escape stands for a code
		// point, not a byte, so other keys have no such form).
		if len(key) < 6 || strings.ContainsAny(key, "\\%&") || strings.IndexFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			return
		}
		var enc string
		switch form % 4 {
		case 0:
			enc = key
		case 1:
			var b strings.Builder
			for _, c := range []byte(key) {
				fmt.Fprintf(&b, "\\u%04x", c)
			}
			enc = b.String()
		case 2:
			var b strings.Builder
			for _, c := range []byte(key) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			enc = b.String()
		case 3:
			enc = base64.StdEncoding.EncodeToString([]byte(key))
			if len(key) < minBase64Key {
				return
			}
		}
		half := len(text) / 2
		out := redact(text[:half]+enc+text[half:], key)
		if strings.Contains(out, key) || strings.Contains(out, enc) {
			t.Fatalf("redact left the key (form %d) in %q", form%4, out)
		}
	})
}
