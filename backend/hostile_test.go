package backend

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

// These tests hold the client against servers that misbehave in ways a
// real server cannot be made to on demand: redirects, keys echoed in
// encoded forms, counts that cannot be true, compressed or HTML answers,
// SSE written with other line ends, and a /tokenize that never ends.

// landingServer is where a hostile server redirects to; it counts the
// requests that reach it and the Authorization headers they carry.
type landingServer struct {
	*httptest.Server
	requests, withKey atomic.Int64
}

func newLandingServer(t *testing.T) *landingServer {
	l := &landingServer{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			l.withKey.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(l.Close)
	return l
}

// TestRedirectsAreNeverFollowed: a 3xx to another port of the same host
// (where net/http would keep the Authorization header) is counted as
// ReasonRedirect with its Location, and nothing reaches the other server:
// not the generation request, not a probe, not /tokenize.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	land := newLandingServer(t)
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, land.URL+r.URL.Path, status)
			}))
			defer srv.Close()
			cfg := Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", APIKey: testKey}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
			if res.Reason != record.ReasonRedirect || res.Status != status || !strings.Contains(res.Error, "redirect to "+land.URL+"/v1/chat/completions") {
				t.Errorf("Do: Reason=%q Status=%d Error=%q; want redirect naming the Location", res.Reason, res.Status, res.Error)
			}
			if _, err := c.Tokenize(t.Context(), "one two"); err == nil || !strings.Contains(err.Error(), "redirect to "+land.URL) {
				t.Errorf("Tokenize: err = %v, want the redirect named", err)
			}
			id := Probe(t.Context(), cfg)
			if len(id.Warnings) == 0 || !strings.Contains(strings.Join(id.Warnings, " "), "redirect to "+land.URL) {
				t.Errorf("Probe warnings %q, want the redirect named", id.Warnings)
			}
		})
	}
	if n := land.requests.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect target (%d with the API key), want none", n, land.withKey.Load())
	}
}

// TestRedirectWithoutLocation: a 3xx without Location is a redirect too,
// not an http_4xx.
func TestRedirectWithoutLocation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonRedirect || !strings.Contains(res.Error, "HTTP 302 redirect without a Location header") {
		t.Errorf("Reason=%q Error=%q; want redirect without a Location", res.Reason, res.Error)
	}
}

// TestEncodedKeyIsRedacted: a server that echoes the API key in an
// encoded form (JSON \u escapes, percent-encoding, HTML references,
// base64, two layers deep, or split across the excerpt's cut) has no form
// of it reach the record's error.
func TestEncodedKeyIsRedacted(t *testing.T) {
	uEsc := func(s string) string { // every byte as \u00XX, upper-case hex
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\u%04X`, c)
		}
		return b.String()
	}
	pct := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "%%%02x", c)
		}
		return b.String()
	}
	html := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "&#%d;", c)
		}
		return b.String()
	}
	half := len(testKey) / 2
	forms := []struct {
		name, echoed string
	}{
		{"json \\u escapes", uEsc(testKey)},
		{"json \\u escapes of half", testKey[:half] + uEsc(testKey[half:])},
		{"json \\/ escape", strings.Replace(testKey, "-", `\/`, 1)}, // a key with "/" in it would be sent so
		{"percent-encoded", pct(testKey)},
		{"percent-encoded inside json escapes", uEsc(pct(testKey))},
		{"html references", html(testKey)},
		{"base64 basic auth", base64.StdEncoding.EncodeToString([]byte("user:" + testKey))},
		{"base64url", base64.URLEncoding.EncodeToString([]byte("xy" + testKey))},
	}
	if !strings.Contains(testKey, "-") {
		t.Fatal("testKey must hold a '-' for the \\/ case")
	}
	keyWithSlash := strings.Replace(testKey, "-", "/", 1)
	cases := []struct {
		name string
		kind Kind
		body func(echoed string) (status int, body string)
	}{
		{"sse error chunk", VLLM, func(e string) (int, string) {
			return 200, "data: {\"error\":{\"message\":\"bad key " + e + "\"}}\n\n"
		}},
		{"ndjson error line", Ollama, func(e string) (int, string) { return 200, "{\"error\":\"bad key " + e + "\"}\n" }},
		{"401 body", VLLM, func(e string) (int, string) { return 401, "rejected " + e }},
		{"401 body at the excerpt's cut", VLLM, func(e string) (int, string) { return 401, strings.Repeat("x", maxExcerpt-10) + e }},
		{"malformed chunk", VLLM, func(e string) (int, string) { return 200, "data: {oops " + e + "\n\n" }},
	}
	for _, form := range forms {
		for _, tc := range cases {
			t.Run(form.name+"/"+tc.name, func(t *testing.T) {
				key := testKey
				if strings.Contains(form.name, `\/`) {
					key = keyWithSlash
				}
				status, body := tc.body(form.echoed)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(status)
					fmt.Fprint(w, body)
				}))
				defer srv.Close()
				c, _ := New(Config{Kind: tc.kind, BaseURL: srv.URL, Model: "m", APIKey: key})
				var res record.Result
				c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
				if res.OK() {
					t.Fatalf("request succeeded: %+v", res)
				}
				for _, leak := range []string{key, form.echoed[:min(len(form.echoed), 12)], key[:6]} {
					if strings.Contains(res.Error, leak) {
						t.Errorf("Error %q holds %q", res.Error, leak)
					}
				}
				if dec, err := url.PathUnescape(res.Error); err == nil && strings.Contains(dec, key[:8]) {
					t.Errorf("Error %q decodes to part of the key", res.Error)
				}
			})
		}
	}
}

func TestRedact(t *testing.T) {
	key := "sk-ABCdef123456"
	tests := []struct{ in, want string }{
		{"plain " + key + " end", "plain [redacted] end"},
		{`esc \u0073\u006B-ABCdef123456 end`, "esc [redacted] end"},
		{`mixed \u0073K-ABC`, `mixed \u0073K-ABC`}, // not the key (case)
		{"pct %73%6b%2DABCdef123456!", "pct [redacted]!"},
		{"twice " + key + " and " + key, "twice [redacted] and [redacted]"},
		{"partial sk-ABCdef12345 only", "partial sk-ABCdef12345 only"},
		{"b64 " + base64.StdEncoding.EncodeToString([]byte(key)), "b64 [redacted]"},
		{"none", "none"},
	}
	for _, tt := range tests {
		got := redact(tt.in, key)
		if strings.HasPrefix(tt.want, "b64 ") {
			if strings.Contains(got, base64.StdEncoding.EncodeToString([]byte(key))[:12]) || !strings.Contains(got, redacted) {
				t.Errorf("redact(%q) = %q", tt.in, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := redact("x", ""); got != "x" {
		t.Errorf("no key: %q", got)
	}
}

// TestImplausibleCounts: a count that cannot be true (above max_tokens +
// 1, above 2^31 − 1, negative, a fraction) is left null with a warning in
// the record; whole numbers written as floats are taken.
func TestImplausibleCounts(t *testing.T) {
	sse := func(usage string) string {
		return "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n" +
			"data: {\"choices\":[],\"usage\":" + usage + "}\n\ndata: [DONE]\n\n"
	}
	ndjson := func(counts string) string {
		return "{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"done_reason\":\"length\"," + counts + "}\n"
	}
	cases := []struct {
		name        string
		kind        Kind
		body        string
		prompt, out *int
		warn        string // in Warnings; "" for none
	}{
		{"max int64 completion", VLLM, sse(`{"prompt_tokens":5,"completion_tokens":9223372036854775807}`), ip(5), nil, "completion_tokens 9223372036854775807: not a token count"},
		{"above max_tokens + 1", VLLM, sse(`{"prompt_tokens":5,"completion_tokens":10}`), ip(5), nil, "completion_tokens 10 for a request of max_tokens 8"},
		{"max_tokens + 1 is taken", VLLM, sse(`{"prompt_tokens":5,"completion_tokens":9}`), ip(5), ip(9), ""},
		{"above 2^31 prompt", VLLM, sse(`{"prompt_tokens":4294967296,"completion_tokens":8}`), nil, ip(8), "prompt_tokens 4294967296: not a token count"},
		{"fraction", VLLM, sse(`{"prompt_tokens":5,"completion_tokens":2.7}`), ip(5), nil, "completion_tokens 2.7: not a token count"},
		{"negative", VLLM, sse(`{"prompt_tokens":-5,"completion_tokens":8}`), nil, ip(8), "prompt_tokens -5: not a token count"},
		{"whole float", VLLM, sse(`{"prompt_tokens":5.0,"completion_tokens":8e0}`), ip(5), ip(8), ""},
		{"huge float", VLLM, sse(`{"prompt_tokens":5,"completion_tokens":1e300}`), ip(5), nil, "completion_tokens 1e300"},
		{"llama.cpp predicted_n", LlamaCpp, sse(`null,"timings":{"prompt_n":5,"predicted_n":99999999999}`), ip(5), nil, "timings.predicted_n 99999999999"},
		{"ollama eval_count", Ollama, ndjson(`"prompt_eval_count":5,"eval_count":9223372036854775807`), ip(5), nil, "eval_count 9223372036854775807"},
		{"ollama prompt fraction", Ollama, ndjson(`"prompt_eval_count":5.5,"eval_count":8`), nil, ip(8), "prompt_eval_count 5.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct := "text/event-stream"
			if tc.kind == Ollama {
				ct = "application/x-ndjson"
			}
			srv, _ := replayServer(t, []byte(tc.body), ct)
			c, _ := New(Config{Kind: tc.kind, BaseURL: srv.URL, Model: "m"})
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 8}, &res)
			if !res.OK() {
				t.Fatalf("Reason=%q Error=%q: a count that cannot be true must not fail the request", res.Reason, res.Error)
			}
			if fmt.Sprint(deref(res.PromptTokens), deref(res.OutputTokens)) != fmt.Sprint(deref(tc.prompt), deref(tc.out)) {
				t.Errorf("prompt %v output %v, want %v %v", deref(res.PromptTokens), deref(res.OutputTokens), deref(tc.prompt), deref(tc.out))
			}
			got := strings.Join(res.Warnings, "; ")
			if (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("Warnings %q, want one holding %q", got, tc.warn)
			}
			if res.ChunkTokens != nil {
				for _, k := range res.ChunkTokens {
					if k < 1 || k > 9 {
						t.Errorf("ChunkTokens %v", res.ChunkTokens)
					}
				}
			}
		})
	}
}

// TestNotAStream: a compressed stream or an HTML page answered with 200
// is not_streamed, not a truncated stream.
func TestNotAStream(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprint(zw, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n")
	zw.Close()
	cases := []struct {
		name, contentType, encoding, body, errHas string
	}{
		{"gzip stream", "text/event-stream", "gzip", gz.String(), "Content-Encoding: gzip"},
		{"html page", "text/html; charset=utf-8", "", "<!doctype html><html><body>Sign in</body></html>\n", "HTML page"},
		{"xhtml page", "application/xhtml+xml", "", "<html/>", "HTML page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				if tc.encoding != "" {
					w.Header().Set("Content-Encoding", tc.encoding)
				}
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
			if res.Reason != record.ReasonNotStreamed || !strings.Contains(res.Error, tc.errHas) {
				t.Errorf("Reason=%q Error=%q, want not_streamed naming %q", res.Reason, res.Error, tc.errHas)
			}
		})
	}
}

// TestSSELineEnds: the same stream written with CR, LF or CR LF line ends,
// with comments, event/id/retry fields, a BOM and one chunk split over two
// data lines, reads the same.
func TestSSELineEnds(t *testing.T) {
	lf := "\uFEFF: hello\nretry: 1000\n\nevent: message\nid: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"b\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"c\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"
	for _, eol := range []string{"\n", "\r", "\r\n"} {
		t.Run(fmt.Sprintf("%q", eol), func(t *testing.T) {
			body := strings.ReplaceAll(lf, "\n", eol)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ev := range strings.SplitAfter(body, eol+eol) { // one event per flush
					fmt.Fprint(w, ev)
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			c, _ := New(Config{Kind: SGLang, BaseURL: srv.URL, Model: "m"})
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 3}, &res)
			if !res.OK() || len(res.ChunkOffsetsNS) != 3 || res.OutputTokens == nil || *res.OutputTokens != 3 {
				t.Errorf("Reason=%q Error=%q chunks=%d output=%v", res.Reason, res.Error, len(res.ChunkOffsetsNS), deref(res.OutputTokens))
			}
		})
	}
}

// TestSSEErrorEvent: an SSE event of type "error" is a stream error.
func TestSSEErrorEvent(t *testing.T) {
	srv, _ := replayServer(t, []byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nevent: error\ndata: overloaded\n\n"), "text/event-stream")
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 3}, &res)
	if res.Reason != record.ReasonStreamError || !strings.Contains(res.Error, "overloaded") {
		t.Errorf("Reason=%q Error=%q", res.Reason, res.Error)
	}
}

// TestTokenizeIsBounded: a llama.cpp /tokenize that answers 60 MB of
// tokens for a short text is refused after a bounded read, without
// holding the answer or decoding its tokens; one that never ends stops at
// the timeout; counts that cannot be true of the text are errors.
func TestTokenizeIsBounded(t *testing.T) {
	const answerMB = 60
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/tokenize")
		switch mode {
		case "count":
			fmt.Fprint(w, `{"count":9223372036854775807,"tokens":[]}`)
			return
		case "toomany":
			fmt.Fprintf(w, `{"tokens":[%s1]}`, strings.Repeat("1,", 200))
			return
		}
		fmt.Fprint(w, `{"tokens":[`)
		if mode == "slow" { // a few tokens now and then, never the end
			for r.Context().Err() == nil {
				fmt.Fprint(w, "1,")
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			return
		}
		line := []byte(strings.Repeat("151643,", 1<<14))
		for sent := 0; sent < answerMB<<20; sent += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		fmt.Fprint(w, "1]}")
	}))
	defer srv.Close()
	text := strings.Repeat("word ", 20)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, _ := New(Config{Kind: LlamaCpp, BaseURL: srv.URL, Model: "m", Timeout: time.Minute})
	_, err := c.Tokenize(t.Context(), text)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "answer longer than") {
		t.Errorf("60 MB answer: err = %v, want it refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("reading a %d MB answer allocated %d MiB, want a bounded read", answerMB, alloc>>20)
	}

	slow, _ := New(Config{Kind: LlamaCpp, BaseURL: srv.URL + "/slow", Model: "m", Timeout: 500 * time.Millisecond})
	start := time.Now()
	if _, err := slow.Tokenize(t.Context(), text); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("endless answer: err = %v, want the timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("endless answer took %v with a 500ms timeout", d)
	}

	for _, tc := range []struct {
		kind       Kind
		mode, want string
	}{
		{VLLM, "count", "not a token count"},
		{LlamaCpp, "toomany", "more than"},
	} {
		c, _ := New(Config{Kind: tc.kind, BaseURL: srv.URL + "/" + tc.mode, Model: "m"})
		if n, err := c.Tokenize(t.Context(), "short"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Tokenize = %d, %v; want an error holding %q", tc.mode, n, err, tc.want)
		}
	}
}

// TestEchoedKeyInFinishReason: a stream that answers with the key as its
// finish reason (the one server string a record keeps from a successful
// answer) gets it redacted.
func TestEchoedKeyInFinishReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fin := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\"hi\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"%s\"}]}\n\ndata: [DONE]\n\n", fin)
	}))
	defer srv.Close()
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", API: Completions, APIKey: testKey})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if !res.OK() {
		t.Fatalf("request failed: %+v", res)
	}
	if res.FinishReason != redacted {
		t.Fatalf("finish_reason %q, want %q", res.FinishReason, redacted)
	}
}

// TestReasoningAboveCompletion: usage claiming more reasoning tokens than
// completion tokens is dropped with a warning, and the split is
// estimated from the stream, never above the output.
func TestReasoningAboveCompletion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Yes\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2,\"total_tokens\":6,\"reasoning_tokens\":6}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c, _ := New(Config{Kind: SGLang, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 8}, &res)
	if !res.OK() || res.OutputTokens == nil || *res.OutputTokens != 2 {
		t.Fatalf("request: %+v", res)
	}
	if res.ReasoningTokens != nil && *res.ReasoningTokens > *res.OutputTokens {
		t.Errorf("reasoning %d above output %d", *res.ReasoningTokens, *res.OutputTokens)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "reasoning_tokens 6 of 2 completion tokens") }) {
		t.Errorf("warnings %q lack the impossible reasoning count", res.Warnings)
	}
}

// TestAnswerTextIsBounded: a server that streams an answer longer than
// MaxAnswerBytes (here 3 MiB) to a request that keeps its answer for a
// later turn gets its chunks timed, but only MaxAnswerBytes of text
// kept, with one warning.
func TestAnswerTextIsBounded(t *testing.T) {
	const chunks = 3 << 10 // of 1 KiB each
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		piece := strings.Repeat("x", 1<<10)
		for range chunks {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", piece)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	var answer strings.Builder
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 1 << 20, Answer: &answer}, &res)
	if !res.OK() || len(res.ChunkOffsetsNS) != chunks {
		t.Fatalf("request: ok %v, %d chunks (%s)", res.OK(), len(res.ChunkOffsetsNS), res.Error)
	}
	if answer.Len() > MaxAnswerBytes || answer.Len() < MaxAnswerBytes/2 {
		t.Errorf("kept %d bytes of answer, want at most %d", answer.Len(), MaxAnswerBytes)
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "answer text over") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q: want one about the answer's length", res.Warnings)
	}
}
