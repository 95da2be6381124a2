package simserve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

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
