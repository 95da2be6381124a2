package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

const testKey = "sk-test-secret-9f3a"

// faultServer is a loopback OpenAI-compatible server that misbehaves on
// demand: the user prompt names the behaviour. It does what a real server
// cannot be made to do on cue (cut a stream, answer 429, stall).
func faultServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		serveFault(w, r, body.Messages[0].Content)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func serveFault(w http.ResponseWriter, r *http.Request, mode string) {
	chunk := func(i int) {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"},\"finish_reason\":null}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	switch mode {
	case "500":
		// The body echoes the key to prove it never reaches a record.
		http.Error(w, "internal error "+r.Header.Get("Authorization")+strings.Repeat(" padding", 60), 500)
		return
	case "429":
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return
	case "404":
		http.Error(w, `{"error":"model not found"}`, 404)
		return
	case "json":
		// A server (or proxy) that ignores stream: true answers with one
		// chat.completion document, pretty-printed as some proxies do.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "{\n  \"object\": \"chat.completion\",\n  \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \"hi\"}, \"finish_reason\": \"length\"}],\n  \"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 8}\n}\n")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := 0; i < 3; i++ {
		chunk(i)
	}
	switch mode {
	case "ok":
		for i := 3; i < 8; i++ {
			chunk(i)
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":8}}\n\ndata: [DONE]\n\n")
	case "cut":
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	case "nodone":
		// the response ends cleanly but without [DONE]
	case "stall":
		<-r.Context().Done()
	case "malformed":
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"\n\ndata: [DONE]\n\n")
	case "streamerr":
		fmt.Fprint(w, "data: {\"error\":{\"message\":\"CUDA out of memory\",\"code\":500}}\n\n")
	case "streamerr-object":
		fmt.Fprint(w, "data: {\"object\":\"error\",\"message\":\"engine dead\",\"type\":\"InternalServerError\",\"code\":500}\n\n")
	}
}

func TestFaultsFailAlone(t *testing.T) {
	srv := faultServer(t)
	// Only "stall" is meant to time out; the others get a timeout a loaded
	// CI machine cannot reach, so a slow start is never misread as a fault.
	cfg := Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", APIKey: testKey, Timeout: 30 * time.Second}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough for the stalled stream's headers and first chunks to
	// arrive on a loaded machine, so the timeout strikes mid-stream.
	const stallTimeout = 2 * time.Second
	cfg.Timeout = stallTimeout
	stallClient, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		reason record.Reason
		errHas string
		status int
	}{
		"ok":               {record.ReasonNone, "", 200},
		"500":              {record.ReasonHTTP5xx, "HTTP 500: internal error Bearer [redacted]", 500},
		"429":              {record.ReasonHTTP429, "rate limited", 429},
		"404":              {record.ReasonHTTP4xx, "model not found", 404},
		"cut":              {record.ReasonTruncated, "truncated stream", 200},
		"nodone":           {record.ReasonTruncated, "truncated stream", 200},
		"stall":            {record.ReasonTimeout, "timeout", 200},
		"malformed":        {record.ReasonMalformed, "malformed chunk", 200},
		"streamerr":        {record.ReasonStreamError, "CUDA out of memory", 200},
		"streamerr-object": {record.ReasonStreamError, "engine dead", 200},
		"json":             {record.ReasonNotStreamed, "not streamed", 200},
	}
	var modes []string
	for m := range want {
		for range 4 { // several of each, all at once
			modes = append(modes, m)
		}
	}
	results := make([]record.Result, len(modes))
	var wg sync.WaitGroup
	for i, m := range modes {
		cl := c
		if m == "stall" {
			cl = stallClient
		}
		wg.Go(func() { cl.Do(t.Context(), &Request{Prompt: m, MaxTokens: 8}, &results[i]) })
	}
	wg.Wait()
	for i, m := range modes {
		res, w := &results[i], want[m]
		if res.Reason != w.reason || !strings.Contains(res.Error, w.errHas) || res.Status != w.status {
			t.Errorf("%s: Reason=%q Status=%d Error=%q; want %q %d containing %q", m, res.Reason, res.Status, res.Error, w.reason, w.status, w.errHas)
		}
		if strings.Contains(res.Error, testKey) {
			t.Errorf("%s: API key leaked into Error", m)
		}
		if len(res.Error) > maxExcerpt+64 {
			t.Errorf("%s: Error is %d bytes, want a short excerpt", m, len(res.Error))
		}
		if m == "ok" && (res.OutputTokens == nil || *res.OutputTokens != 8 || len(res.ChunkOffsetsNS) != 8) {
			t.Errorf("ok: output %v chunks %d", deref(res.OutputTokens), len(res.ChunkOffsetsNS))
		}
		// The timeout runs from the call; E2E from the write, so it is at
		// most the timeout (less the connection setup).
		if m == "stall" && (res.E2ENS <= 0 || res.E2ENS > int64(stallTimeout+time.Second)) {
			t.Errorf("stall: E2E %v, want about the %v timeout", time.Duration(res.E2ENS), stallTimeout)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, _ := New(Config{Kind: Ollama, BaseURL: "http://" + addr, Model: "m", APIKey: testKey})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonConnection || res.Status != 0 || !strings.Contains(res.Error, "refused") {
		t.Errorf("Reason=%q Status=%d Error=%q, want connection refused", res.Reason, res.Status, res.Error)
	}
}

func TestConnectionReset(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.(*net.TCPConn).SetLinger(0) // close with RST, before any response
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			conn.Close()
		}
	}()
	c, _ := New(Config{Kind: VLLM, BaseURL: "http://" + ln.Addr().String(), Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonConnection {
		t.Errorf("Reason=%q Error=%q, want connection", res.Reason, res.Error)
	}
}

func TestCancelIsRecorded(t *testing.T) {
	srv := faultServer(t)
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", APIKey: testKey})
	ctx, cancel := context.WithCancel(t.Context())
	// Late enough for the 3 chunks to arrive on a loaded machine.
	time.AfterFunc(1500*time.Millisecond, cancel)
	var res record.Result
	c.Do(ctx, &Request{Prompt: "stall", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonCanceled || len(res.ChunkOffsetsNS) != 3 || res.TTFTNS == nil {
		t.Errorf("Reason=%q chunks=%d TTFT=%v, want canceled after 3 chunks", res.Reason, len(res.ChunkOffsetsNS), res.TTFTNS)
	}
}

func TestEmptyStream(t *testing.T) {
	srv, _ := replayServer(t, []byte("data: [DONE]\n\n"), "text/event-stream")
	c, _ := New(Config{Kind: SGLang, BaseURL: srv.URL, Model: "m"})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonEmptyResponse || res.TTFTNS != nil {
		t.Errorf("Reason=%q TTFT=%v, want empty_response", res.Reason, res.TTFTNS)
	}
}

// TestKeepAlive checks that sequential streams reuse one connection: the
// end marker is followed by a drain of the response, so the default client
// does not dial per request (which would add connection setup to TTFT).
func TestKeepAlive(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveFault(w, r, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	for range 20 {
		var res record.Result
		c.Do(t.Context(), &Request{Prompt: "ok", MaxTokens: 8}, &res)
		if !res.OK() {
			t.Fatal(res.Error)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 20 sequential requests, want 1", n)
	}
}

// TestClockStartsAtWrite checks that connection setup is not measured:
// with a dial that takes 300 ms, TTFT and E2E stay well below it, and
// StartNS (from RunStart, taken at the call) includes it.
func TestClockStartsAtWrite(t *testing.T) {
	srv := faultServer(t)
	const dialDelay = 300 * time.Millisecond
	d := &net.Dialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dialDelay)
		return d.DialContext(ctx, network, addr)
	}}}
	defer hc.CloseIdleConnections()
	c, err := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", APIKey: testKey, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "ok", MaxTokens: 8, RunStart: time.Now()}, &res)
	if !res.OK() || res.TTFTNS == nil {
		t.Fatalf("Reason=%q Error=%q", res.Reason, res.Error)
	}
	if *res.TTFTNS >= int64(dialDelay/2) || res.E2ENS >= int64(dialDelay/2) {
		t.Errorf("TTFT %v, E2E %v include the %v dial", time.Duration(*res.TTFTNS), time.Duration(res.E2ENS), dialDelay)
	}
	if res.StartNS < int64(dialDelay) {
		t.Errorf("StartNS %v, want after the %v dial", time.Duration(res.StartNS), dialDelay)
	}
}

// TestKeyCutAtExcerptEdge: a key echoed where the error excerpt is cut
// leaks not even in part.
func TestKeyCutAtExcerptEdge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, strings.Repeat("x", maxExcerpt-16)+r.Header.Get("Authorization")+" rejected")
	}))
	defer srv.Close()
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", APIKey: testKey})
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
	if res.Reason != record.ReasonHTTP4xx || strings.Contains(res.Error, testKey[:8]) {
		t.Errorf("Reason=%q Error=%q: want http_4xx without any part of the key", res.Reason, res.Error)
	}
}

// TestHeaderSecretCutAtExcerptEdge: an extra header's value (--header,
// a secret like the API key) that the server echoes where the error
// excerpt is cut leaks not even in part, in a status error's body and in
// a stream's malformed chunk.
func TestHeaderSecretCutAtExcerptEdge(t *testing.T) {
	const secret = "hdr-9f3c1a7e5b2d4c6a8e0f"
	for _, tc := range []struct {
		name   string
		status int
		body   string // %s is the header's value, placed across the cut
		reason record.Reason
	}{
		{"status body", http.StatusForbidden, strings.Repeat("x", maxExcerpt-10) + "%s denied", record.ReasonHTTP4xx},
		{"malformed chunk", http.StatusOK, "data: " + strings.Repeat("x", maxExcerpt-8) + "%s\n\ndata: [DONE]\n\n", record.ReasonMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, tc.body, r.Header.Get("X-Gateway-Token"))
			}))
			defer srv.Close()
			c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", Headers: []Header{{Name: "X-Gateway-Token", Value: secret}}})
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
			if res.Reason != tc.reason || strings.Contains(res.Error, secret[:6]) {
				t.Errorf("Reason=%q Error=%q: want %s without any part of the header's value", res.Reason, res.Error, tc.reason)
			}
		})
	}
}

// TestChunkKeyCutAtExcerptEdge: a key the server echoes in a stream chunk
// where the error excerpt is cut leaks not even in part (malformed chunk,
// error chunk, cut last line; SSE and NDJSON).
func TestChunkKeyCutAtExcerptEdge(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name   string
		kind   Kind
		body   string // %s is the key, placed across the excerpt's cut
		reason record.Reason
	}{
		{"openai malformed", VLLM, "data: " + pad(maxExcerpt-8) + "%s\n\ndata: [DONE]\n\n", record.ReasonMalformed},
		{"openai error chunk", VLLM, "data: {\"error\":\"" + pad(maxExcerpt-9) + "%s\"}\n\n", record.ReasonStreamError},
		{"openai last line cut", VLLM, "data: " + pad(maxExcerpt-8) + "%s", record.ReasonTruncated},
		{"ollama malformed", Ollama, pad(maxExcerpt-8) + "%s\n", record.ReasonMalformed},
		{"ollama error chunk", Ollama, "{\"error\":\"" + pad(maxExcerpt-9) + "%s\"}\n", record.ReasonStreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, tc.body, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			}))
			defer srv.Close()
			c, _ := New(Config{Kind: tc.kind, BaseURL: srv.URL, Model: "m", APIKey: testKey})
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "x", MaxTokens: 4}, &res)
			if res.Reason != tc.reason || strings.Contains(res.Error, testKey[:6]) {
				t.Errorf("Reason=%q Error=%q: want %s without any part of the key", res.Reason, res.Error, tc.reason)
			}
		})
	}
}

// TestConnectionPerRequest: with Connection PerRequest every request opens
// its own connection and its clock starts at the call, so a 300 ms dial is
// inside TTFT and E2E (vLLM's benchmark client's convention); with the
// default KeepAlive one connection serves all and the dial is outside.
func TestConnectionPerRequest(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveFault(w, r, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const dialDelay = 300 * time.Millisecond
	d := &net.Dialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dialDelay)
		return d.DialContext(ctx, network, addr)
	}}}
	defer hc.CloseIdleConnections()
	for _, mode := range []Connection{PerRequest, KeepAlive} {
		conns.Store(0)
		c, err := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", HTTPClient: hc, Connection: mode})
		if err != nil {
			t.Fatal(err)
		}
		const n = 4
		var withDial int
		for range n {
			var res record.Result
			c.Do(t.Context(), &Request{Prompt: "ok", MaxTokens: 8}, &res)
			if !res.OK() || res.TTFTNS == nil {
				t.Fatalf("%s: Reason=%q Error=%q", mode, res.Reason, res.Error)
			}
			if *res.TTFTNS >= int64(dialDelay) && res.E2ENS >= int64(dialDelay) {
				withDial++
			}
		}
		got := conns.Load()
		switch mode {
		case PerRequest:
			if got != n || withDial != n {
				t.Errorf("per-request: %d connections, %d of %d TTFTs include the dial; want %d and all", got, withDial, n, n)
			}
		case KeepAlive:
			if got > 1 || withDial != 0 { // the first dial may be before this mode's requests
				t.Errorf("keep-alive: %d connections, %d TTFTs include the dial; want 1 and none", got, withDial)
			}
		}
	}
	if _, err := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", Connection: "pooled"}); err == nil || !strings.Contains(err.Error(), "Config.Connection") {
		t.Errorf("unknown mode: err = %v", err)
	}
}
