package record

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRecordsFileRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	out, ttft := 8, int64(1500)
	vram := 9.25
	h := &Header{Run: Run{Label: "ollama-text", Backend: "ollama", Model: "m", Scenario: "text", MaxTokens: 8},
		Levels: []LevelPlan{{Level: 1, Concurrency: 1, Requests: 2}}, Warmup: 1}
	res := []Result{
		{Run: "ollama-text", Seq: 0, Level: 1, Warmup: true, E2ENS: 5},
		{Run: "ollama-text", Seq: 1, Level: 1, TTFTNS: &ttft, E2ENS: 9000, OutputTokens: &out, ExpectedOutputTokens: 8, Status: 200},
	}
	le := &LevelEnd{Run: "ollama-text", Level: 1, Fields: &Observations{PeakVRAMGiB: &vram}}
	re := &RunEnd{Run: "ollama-text", Complete: true, Warnings: []string{"w"}}
	for _, err := range []error{enc.EncodeHeader(h), enc.Encode(&res[0]), enc.Encode(&res[1]), enc.EncodeLevelEnd(le), enc.EncodeRunEnd(re)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 5 {
		t.Fatalf("%d lines", n)
	}
	f, err := DecodeFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := &File{Headers: []Header{*h}, Results: res, LevelEnds: []LevelEnd{*le}, RunEnds: []RunEnd{*re}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("decoded %+v\nwant %+v", f, want)
	}
	// Decode returns only the requests.
	rs, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil || !reflect.DeepEqual(rs, res) {
		t.Fatalf("Decode = %+v, %v", rs, err)
	}
}

func TestDecodeFileErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		line int
		n    int
	}{
		{"bad json on line 3", "{\"seq\":1,\"start_ns\":0}\n\n{nope\n", 3, 1},
		{"wrong type", "{\"header\": 5}\n", 1, 0},
		{"malformed last line with its newline", "{\"seq\":1,\"start_ns\":0}\n{\"seq\":\n", 2, 1},
		{"chunk tokens claiming billions", "{\"seq\":1,\"start_ns\":0}\n{\"seq\":2,\"start_ns\":0,\"chunk_offsets_ns\":[1,2],\"chunk_tokens\":[0,4000000000]}\n", 2, 1},
		{"negative chunk tokens", "{\"seq\":1,\"start_ns\":0,\"chunk_tokens\":[1,-3]}\n", 1, 0},
		{"line over MaxLineBytes", "{\"seq\":1,\"start_ns\":0}\n{\"error\":\"" + strings.Repeat("x", MaxLineBytes) + "\"}", 2, 1},
		{"empty object", "{\"seq\":0,\"start_ns\":0}\n{}\n", 2, 1},
		{"unrelated object", "{\"name\":\"x\",\"seq\":3}\n", 1, 0},
		{"JSON null", "null\n", 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := DecodeFile(strings.NewReader(c.in))
			var de *DecodeError
			if !errors.As(err, &de) || de.Line != c.line {
				t.Fatalf("err %v, want a DecodeError on line %d", err, c.line)
			}
			if len(f.Results) != c.n {
				t.Fatalf("%d results kept, want %d", len(f.Results), c.n)
			}
		})
	}
}

// TestDecodeFileCutLastLine (item 11): a file whose last line
// is cut short — no newline after it, as a crash or a full disk leaves it
// — yields every complete line, no error, and the cut line in Cut.
func TestDecodeFileCutLastLine(t *testing.T) {
	complete := "{\"header\":{\"run\":{\"label\":\"a\"},\"levels\":[{\"level\":1,\"concurrency\":1}],\"warmup\":0}}\n" +
		"{\"run\":\"a\",\"seq\":0,\"level\":1,\"start_ns\":0,\"e2e_ns\":5}\n" +
		"{\"run\":\"a\",\"seq\":1,\"level\":1,\"start_ns\":1,\"e2e_ns\":6}\n"
	for name, tail := range map[string]string{
		"cut inside a record":     "{\"run\":\"a\",\"seq\":2,\"level\":1,\"sta",
		"cut after one byte":      "{",
		"zeros of a full disk":    "\x00\x00\x00\x00",
		"cut inside a string":     "{\"run\":\"a\",\"error\":\"HTTP 5",
		"cut inside a level_end":  "{\"level_end\":{\"run\":\"a\",\"level\":1,\"fields\":{\"peak_vram_gib\":1.",
		"cut before the run_end}": "{\"run_end\":{\"run\":\"a\",\"complete\":true}",
	} {
		t.Run(name, func(t *testing.T) {
			f, err := DecodeFile(strings.NewReader(complete + tail))
			if err != nil {
				t.Fatalf("err %v: a cut last line must not lose the file", err)
			}
			if len(f.Headers) != 1 || len(f.Results) != 2 {
				t.Fatalf("%d headers, %d results; want 1 and 2", len(f.Headers), len(f.Results))
			}
			if f.Cut == nil || f.Cut.Line != 4 {
				t.Fatalf("Cut = %v, want line 4", f.Cut)
			}
		})
	}
	f, err := DecodeFile(strings.NewReader(complete))
	if err != nil || f.Cut != nil || len(f.Results) != 2 {
		t.Fatalf("complete file: cut %v, err %v, %d results", f.Cut, err, len(f.Results))
	}
}

func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte(`{"header":{"run":{"label":"a"},"levels":[{"level":1,"concurrency":1}],"warmup":0}}` + "\n" + `{"run":"a","seq":0,"level":1,"start_ns":0,"e2e_ns":5,"output_tokens":3}`))
	f.Add([]byte(`{"level_end":{"run":"a","level":1,"fields":{"concurrency":0,"requests":0,"errors":0,"peak_vram_gib":1.5}}}`))
	f.Add([]byte(`{"run_end":{"run":"a","complete":false}}` + "\n\n"))
	f.Add([]byte("{\"seq\":\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := DecodeFile(bytes.NewReader(b))
		if file == nil {
			t.Fatal("nil file")
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Line < 1 {
				t.Fatalf("error %v is not a DecodeError with a line", err)
			}
		}
		if file.Cut != nil && (err != nil || file.Cut.Line < 1 || bytes.HasSuffix(b, []byte("\n"))) {
			t.Fatalf("Cut %v with err %v on input ending %q", file.Cut, err, b[max(0, len(b)-3):])
		}
	})
}
