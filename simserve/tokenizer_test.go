package simserve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"one word", "hello", 1},
		{"words with their spaces", "hello there world", 3},
		{"a leading space joins the word", " hello", 1},
		{"punctuation is a token", "hello, world", 3},
		{"a second space is a token", "a  b", 3},
		{"long words split every 8 bytes", "abcdefghij", 2},
		{"newlines", "a\nb", 3},
		{"non-ASCII letters", "wörld", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := countTokens(tc.text); got != tc.want {
				t.Errorf("countTokens(%q) = %d, want %d (pieces %q)", tc.text, got, tc.want, tokenPieces(tc.text))
			}
		})
	}
}

// FuzzTokenizer: the pieces of any text put it back together, and the
// three views of it (count, ids, pieces) agree.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "hello there", " a  b\n\tc,d", "abcdefghijklmnop", "wörld ✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := tokenPieces(s)
		if strings.Join(p, "") != s {
			t.Fatalf("pieces %q do not make %q", p, s)
		}
		if n := countTokens(s); n != len(p) || n != len(tokenIDs(s)) {
			t.Fatalf("count %d, %d pieces, %d ids", n, len(p), len(tokenIDs(s)))
		}
	})
}

// FuzzParseRequest: any body is parsed or refused with an error, never a
// panic, and a parsed request has a prompt.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:,"}}]}]}`,
		`{"prompt":["a","b"],"n_predict":3}`,
		`{"inputs":"x","parameters":{"max_new_tokens":2,"details":true,"seed":1}}`,
		`{"model":"m","prompt":"p","images":["AA=="],"options":{"num_predict":-1,"seed":3}}`,
		`{"messages":[]}`, `null`, `[]`, `{"messages":[{"content":7}]}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(string(body)))
		g, err := parseRequest(r, chat, !chat)
		if err != nil {
			return
		}
		if g.prompt < 1 || g.images < 0 {
			t.Fatalf("parsed %+v from %q", g, body)
		}
	})
}
