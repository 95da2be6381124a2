package safetext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain", "vllm-fp8kv · Qwen2.5 7B", "vllm-fp8kv · Qwen2.5 7B"},
		{"escape sequence", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"NUL", "a\x00b", `a\x00b`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`},
		{"bidi override", "model\u202egpj.exe", `model\u202egpj.exe`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"line breaks and tabs", "a\nb\r\nc\td", "a b  c d"},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"emoji with joiner kept", "👩\u200d💻", "👩\u200d💻"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.want {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	in := "last lines:\n  \x1b[31merror\r\n\tmodel\u202e"
	want := "last lines:\n  \\x1b[31merror\\x0d\n\tmodel\\u202e"
	if got := Lines(in); got != want {
		t.Errorf("Lines(%q) = %q, want %q", in, got, want)
	}
}

func TestJSONEscapesRawHazards(t *testing.T) {
	v := map[string]string{"label": "run\u202e1\u009b\x7f\x1b", "plain": "ok"}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(b)
	for _, r := range string(out) {
		if Hazard(r) {
			t.Fatalf("raw %U left in %s", r, out)
		}
	}
	for _, want := range []string{`\u202e`, `\u009b`, `\u007f`, `\u001b`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s lacks %s", out, want)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped JSON is not valid: %v\n%s", err, out)
	}
	if back["label"] != v["label"] {
		t.Errorf("decoded %q, want %q", back["label"], v["label"])
	}
	if clean := []byte(`{"a":"b"}`); &JSON(clean)[0] != &clean[0] {
		t.Error("JSON copied a buffer without hazards")
	}
}

// FuzzLine: Line's output is valid UTF-8 on one line without a hazard,
// and text without hazards is unchanged.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "abc", "a\x1b[31mred", "\u202e", "\xff\xfe", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if Hazard(r) || r == '\n' || r == '\r' {
				t.Fatalf("Line(%q) = %q keeps %U", s, out, r)
			}
		}
		if clean(s) && out != s {
			t.Fatalf("Line changed clean text %q to %q", s, out)
		}
	})
}

// FuzzJSON: for any string, JSON of its encoding decodes to the same
// string and holds no raw hazard.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "a\u202eb", "\x7f", "\u0085", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		out := JSON(b)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%s) = %s: %v", b, out, err)
		}
		var want string
		_ = json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("decoded %q, want %q", back, want)
		}
		for _, r := range string(out) {
			if Hazard(r) {
				t.Fatalf("raw %U in %s", r, out)
			}
		}
	})
}
