package backend_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// recordingProxy forwards to target and keeps the last generation
// request's body and headers.
type recordingProxy struct {
	mu     sync.Mutex
	body   map[string]any
	header http.Header
}

func startRecordingProxy(t *testing.T, target string) (*recordingProxy, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !strings.Contains(r.URL.Path, "tokenize") {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			p.mu.Lock()
			p.body, p.header = m, r.Header.Clone()
			p.mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// TestBodyReachesSimServe sends one request through each adapter's body
// writer to `sim serve` of its family, through a proxy that keeps what
// arrived: the user's temperature, top_p, top_k, seed, stop, extra body
// and header reach the server, which answers normally; servebench's own
// fields stay.
func TestBodyReachesSimServe(t *testing.T) {
	temp, topP, topK, seed := 0.7, 0.9, 40, int64(99)
	extra, err := backend.ParseExtraBody(`{"chat_template_kwargs": {"enable_thinking": false}, "options": {"num_ctx": 2048}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind backend.Kind
		api  backend.API
		// path of the sampling fields: "" top level, "options" Ollama's.
		in string
	}{
		{backend.VLLM, backend.Chat, ""}, {backend.VLLM, backend.Completions, ""},
		{backend.LlamaCpp, backend.Chat, ""}, {backend.SGLang, backend.Chat, ""},
		{backend.TGI, backend.Chat, ""}, {backend.OpenAI, backend.Chat, ""},
		{backend.Ollama, backend.Chat, "options"}, {backend.Ollama, backend.Generate, "options"},
	} {
		t.Run(string(tc.kind)+"/"+string(tc.api), func(t *testing.T) {
			_, target := simservetest.Start(t, simserve.Options{As: backend.Kind(tc.kind)})
			proxy, url := startRecordingProxy(t, target)
			c, err := backend.New(backend.Config{Kind: tc.kind, BaseURL: url, Model: simModel, API: tc.api,
				Sampling:  backend.Sampling{Temperature: &temp, TopP: &topP, TopK: &topK, Seed: &seed, Stop: []string{"\n\n"}},
				ExtraBody: extra, Headers: []backend.Header{{Name: "X-Tenant", Value: "tenant-secret-1234"}}})
			if err != nil {
				t.Fatal(err)
			}
			var res record.Result
			c.Do(context.Background(), &backend.Request{Prompt: simPrompt, MaxTokens: 4, Seed: 1}, &res)
			if !res.OK() {
				t.Fatalf("request failed: %s", res.Error)
			}
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			if got := proxy.header.Get("X-Tenant"); got != "tenant-secret-1234" {
				t.Errorf("X-Tenant header arrived as %q", got)
			}
			s := proxy.body
			if tc.in != "" {
				s = proxy.body[tc.in].(map[string]any)
				if s["num_ctx"] != 2048.0 || s["num_predict"] != 4.0 {
					t.Errorf("options %v: want the extra num_ctx beside servebench's num_predict", s)
				}
			}
			if s["temperature"] != temp || s["top_p"] != topP || s["top_k"] != float64(topK) || s["seed"] != float64(seed) {
				t.Errorf("sampling fields %v", s)
			}
			if stop, _ := s["stop"].([]any); len(stop) != 1 || stop[0] != "\n\n" {
				t.Errorf("stop %v", s["stop"])
			}
			if kw, _ := proxy.body["chat_template_kwargs"].(map[string]any); kw["enable_thinking"] != false {
				t.Errorf("extra body lost: %v", proxy.body)
			}
			if proxy.body["stream"] != true || proxy.body["model"] != simModel {
				t.Errorf("servebench's own fields changed: %v", proxy.body)
			}
		})
	}
}

func TestIgnoreEOSModes(t *testing.T) {
	for _, tc := range []struct {
		kind backend.Kind
		mode backend.IgnoreEOS
		want any // ignore_eos as sent; nil: absent
	}{
		{backend.VLLM, backend.IgnoreEOSAuto, true}, {backend.VLLM, backend.IgnoreEOSOff, nil},
		{backend.SGLang, backend.IgnoreEOSAuto, true}, {backend.SGLang, backend.IgnoreEOSOff, nil},
		{backend.LlamaCpp, backend.IgnoreEOSOff, nil}, {backend.TGI, backend.IgnoreEOSAuto, nil},
		{backend.TGI, backend.IgnoreEOSOn, true}, {backend.OpenAI, backend.IgnoreEOSOn, true},
	} {
		t.Run(string(tc.kind)+"/"+string(tc.mode), func(t *testing.T) {
			_, target := simservetest.Start(t, simserve.Options{As: backend.Kind(tc.kind)})
			proxy, url := startRecordingProxy(t, target)
			c, err := backend.New(backend.Config{Kind: tc.kind, BaseURL: url, Model: simModel, Sampling: backend.Sampling{IgnoreEOS: tc.mode}})
			if err != nil {
				t.Fatal(err)
			}
			var res record.Result
			c.Do(context.Background(), &backend.Request{Prompt: simPrompt, MaxTokens: 3}, &res)
			proxy.mu.Lock()
			defer proxy.mu.Unlock()
			if got := proxy.body["ignore_eos"]; got != tc.want {
				t.Errorf("ignore_eos %v, want %v", got, tc.want)
			}
			if tc.mode == backend.IgnoreEOSOff && proxy.body["min_tokens"] != nil {
				t.Errorf("min_tokens sent with --ignore-eos off")
			}
			if w := strings.Join(c.Warnings(), " "); tc.mode == backend.IgnoreEOSOff && !strings.Contains(w, "may stop at EOS") {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

func TestParseExtraBody(t *testing.T) {
	file := filepath.Join(t.TempDir(), "extra.json")
	if err := os.WriteFile(file, []byte(`{"repetition_penalty": 1.1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, parseErr, conflict string
	}{
		{`{"chat_template_kwargs": {"enable_thinking": false}}`, "", ""},
		{"@" + file, "", ""},
		{`[1, 2]`, "want one JSON object", ""},
		{`{"a": 1} {"b": 2}`, "want one JSON object", ""},
		{`null`, "want one JSON object", ""},
		{`{"max_tokens": 10}`, "", `sets "max_tokens", which servebench sets from --max-tokens`},
		{`{"temperature": 1}`, "", "--temperature"},
		{`{"stream": false}`, "", "always streams"},
		{`{"options": {"num_predict": 3}}`, "", `"options.num_predict"`},
		{`{"options": 3}`, "", `"options" must be an object`},
	} {
		eb, err := backend.ParseExtraBody(tc.in)
		if tc.parseErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.parseErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		err = eb.Conflicts()
		if (tc.conflict == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.conflict) {
			t.Errorf("%s: conflicts %v, want %q", tc.in, err, tc.conflict)
		}
	}
}

func TestParseHeader(t *testing.T) {
	for in, want := range map[string]string{
		"X-Tenant: abc": "", "X-Empty:": "", "Bad Name: x": "valid header name", "no colon": "valid header name",
		"Authorization: Bearer x": "--api-key", "content-type: x": "set by servebench",
	} {
		h, err := backend.ParseHeader(in)
		if want == "" && (err != nil || h.Name == "") || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %+v, %v; want %q", in, h, err, want)
		}
	}
}

// TestHeaderValueRedacted: a server that echoes the request's headers
// in its error (a fault a real server does not produce, a proxy might)
// leaves the header's value out of the record.
func TestHeaderValueRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error": "bad tenant `+r.Header.Get("X-Tenant")+`"}`)
	}))
	defer srv.Close()
	c, err := backend.New(backend.Config{Kind: backend.VLLM, BaseURL: srv.URL, Model: "m", Headers: []backend.Header{{Name: "X-Tenant", Value: "tenant-secret-1234"}}})
	if err != nil {
		t.Fatal(err)
	}
	var res record.Result
	c.Do(context.Background(), &backend.Request{Prompt: "x", MaxTokens: 1}, &res)
	if res.OK() || strings.Contains(res.Error, "tenant-secret") || !strings.Contains(res.Error, "[redacted]") {
		t.Fatalf("error %q: want the header value redacted", res.Error)
	}
}
