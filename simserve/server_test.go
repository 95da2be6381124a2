package simserve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// TestNewErrors: bad options and servers that cannot exist fail with the
// error a caller can tell apart (the CLI turns each into one line).
func TestNewErrors(t *testing.T) {
	spec := simservetest.Spec("")
	cases := []struct {
		name string
		opts simserve.Options
		want error
	}{
		{"unknown personality", simserve.Options{As: "vllmm", Spec: spec}, simserve.ErrBadOptions},
		{"unknown GPU", simserve.Options{As: backend.VLLM, Spec: sim.Spec{GPU: "RTX 9999", Model: "qwen2.5-7b"}}, sim.ErrUnknownGPU},
		{"unknown model", simserve.Options{As: backend.VLLM, Spec: sim.Spec{GPU: "H100 80GB", Model: "no-such-model-9b"}}, sim.ErrUnknownModel},
		{"does not fit", simserve.Options{As: backend.VLLM, Spec: sim.Spec{GPU: "RTX 4090", Model: "qwen2.5-72b"}}, sim.ErrDoesNotFit},
		{"fault fraction above 1", simserve.Options{As: backend.VLLM, Spec: spec, Faults: simserve.Faults{CutStream: 1.5}}, simserve.ErrBadOptions},
		{"faults adding up above 1", simserve.Options{As: backend.VLLM, Spec: spec, Faults: simserve.Faults{TooManyRequests: 0.6, Stall: 0.6}}, simserve.ErrBadOptions},
		{"slow first token without a delay", simserve.Options{As: backend.VLLM, Spec: spec, Faults: simserve.Faults{SlowFirstToken: 0.5}}, simserve.ErrBadOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := simserve.New(tc.opts)
			if srv != nil {
				srv.Close()
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// do sends a request and returns the response's status and body.
func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRefusals: what a real server refuses before generating, the
// simulated one refuses too, in its server's error shape.
func TestRefusals(t *testing.T) {
	spec := simservetest.Spec("")
	spec.Server.MaxModelLen = 64
	_, vllm := simservetest.Start(t, simserve.Options{As: backend.VLLM, Spec: spec})
	_, sglang := simservetest.Start(t, simserve.Options{As: backend.SGLang, Spec: spec})
	_, tgi := simservetest.Start(t, simserve.Options{As: backend.TGI, Spec: spec})
	_, llama := simservetest.Start(t, simserve.Options{As: backend.LlamaCpp})
	_, ollama := simservetest.Start(t, simserve.Options{As: backend.Ollama})
	long := strings.Repeat("word ", 5000) // more than a slot's 4096 cells
	const huge = "9223372036854775807"    // prompt + huge wraps below max_model_len
	cases := []struct {
		name, url, body string
		status          int
		has             string
	}{
		{"vLLM: another model", vllm + "/v1/chat/completions", `{"model":"other","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`, 404, `"object":"error"`},
		{"vLLM: longer than max_model_len", vllm + "/v1/completions", `{"model":"` + testModel + `","prompt":"hi","max_tokens":100}`, 400, "maximum context length is 64"},
		{"vLLM: max_tokens near 2^63", vllm + "/v1/completions", `{"model":"` + testModel + `","prompt":"hi","max_tokens":` + huge + `}`, 400, "maximum context length is 64"},
		{"SGLang: max_tokens near 2^63", sglang + "/v1/chat/completions", `{"model":"` + testModel + `","messages":[{"role":"user","content":"hi"}],"max_tokens":` + huge + `}`, 400, "maximum context length is 64"},
		{"TGI: max_new_tokens near 2^63", tgi + "/generate_stream", `{"inputs":"hi","parameters":{"max_new_tokens":` + huge + `}}`, 400, "maximum context length is 64"},
		{"vLLM: an image for a text model", vllm + "/v1/chat/completions", `{"model":"` + testModel + `","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}],"max_tokens":4}`, 400, "not a multimodal model"},
		{"vLLM: not JSON", vllm + "/v1/chat/completions", `{"model":`, 400, "not the JSON expected"},
		{"llama.cpp: prompt past the slot", llama + "/v1/completions", `{"prompt":"` + long + `","max_tokens":4}`, 400, "exceed_context_size_error"},
		{"Ollama: another model", ollama + "/api/chat", `{"model":"other","messages":[{"role":"user","content":"hi"}]}`, 404, `"error":"model \"other\" not found`},
		{"no such route", vllm + "/api/chat", `{}`, 404, "no such route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(t, http.MethodPost, tc.url, tc.body)
			if status != tc.status || !strings.Contains(body, tc.has) {
				t.Errorf("HTTP %d %s; want %d with %q", status, body, tc.status, tc.has)
			}
		})
	}
}

// TestNonStreaming: stream false gets one document with the whole text
// and the usage.
func TestNonStreaming(t *testing.T) {
	_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM})
	status, body := do(t, http.MethodPost, url+"/v1/chat/completions", `{"model":"`+testModel+`","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
	var r struct {
		Object  string
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != 200 {
		t.Fatalf("HTTP %d %s: %v", status, body, err)
	}
	if r.Object != "chat.completion" || len(r.Choices) != 1 || len(strings.Fields(r.Choices[0].Message.Content)) != 5 || r.Usage.CompletionTokens != 5 {
		t.Errorf("answer %s", body)
	}
}

// chatText streams a chat request and returns the generated text.
func chatText(t *testing.T, url, extra string) string {
	t.Helper()
	b := post(t, url+"/v1/chat/completions", `{"model":"`+testModel+`","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":12`+extra+`}`)
	var text strings.Builder
	for _, c := range parseStream(t, "stream", b, false).chunks {
		for _, ch := range c.(map[string]any)["choices"].([]any) {
			if d, ok := ch.(map[string]any)["delta"].(map[string]any); ok {
				s, _ := d["content"].(string)
				text.WriteString(s)
			}
		}
	}
	return text.String()
}

// TestSeed: the output text follows the server's --seed and the
// request's seed, not the order of requests.
func TestSeed(t *testing.T) {
	_, a := simservetest.Start(t, simserve.Options{As: backend.VLLM, Seed: 1})
	_, b := simservetest.Start(t, simserve.Options{As: backend.VLLM, Seed: 1})
	_, c := simservetest.Start(t, simserve.Options{As: backend.VLLM, Seed: 2})
	chatText(t, b, `,"seed":99`) // b has served one more request before
	ta, tb, tc := chatText(t, a, `,"seed":5`), chatText(t, b, `,"seed":5`), chatText(t, c, `,"seed":5`)
	if ta == "" || ta != tb {
		t.Errorf("same seeds, different texts: %q and %q", ta, tb)
	}
	if ta == tc {
		t.Errorf("server seeds 1 and 2 gave the same text %q", ta)
	}
}

// metric reads one sample's value from /metrics.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(get(t, url+"/metrics")), "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") || (strings.Contains(name, "{") && strings.HasPrefix(line, name)) {
			var v float64
			f := strings.Fields(line)
			if err := json.Unmarshal([]byte(f[len(f)-1]), &v); err == nil {
				return v
			}
		}
	}
	t.Fatalf("%s not in /metrics", name)
	return 0
}

// TestClientGoneCancels: a client that goes away mid-stream cancels its
// request in the engine, as vLLM aborts one: its KV cache frees at once
// and the request queued behind it starts right away, long before the
// first would have ended.
func TestClientGoneCancels(t *testing.T) {
	spec := simservetest.Spec("")
	spec.Server.MaxNumSeqs = 1
	_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM, Spec: spec})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	body := `{"model":"` + testModel + `","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":20000}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for range 4 { // the stream is under way
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// a second request queues behind the first (max_num_seqs 1)
	second := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		post(t, url+"/v1/chat/completions", `{"model":"`+testModel+`","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`)
		second <- time.Since(start)
	}()
	waitFor(t, func() bool { return metric(t, url, "vllm:num_requests_waiting") == 1 })
	if kv := metric(t, url, "vllm:kv_cache_usage_perc"); kv <= 0 {
		t.Errorf("KV usage %v while a request runs", kv)
	}
	cancel()
	resp.Body.Close()
	select {
	case d := <-second:
		// 20000 tokens would take the first request minutes
		if d > 20*time.Second {
			t.Errorf("the queued request took %v", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the queued request did not start after the first one's client left")
	}
	waitFor(t, func() bool { return metric(t, url, "vllm:num_requests_running") == 0 })
	if n := metric(t, url, `vllm:request_success_total{engine="0",finished_reason="abort"`); n != 1 {
		t.Errorf("aborted requests %v, want 1", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeShutsDown: Serve answers until its context ends, then lets the
// streams in flight finish within the grace period and returns.
func TestServeShutsDown(t *testing.T) {
	srv, err := simserve.New(simserve.Options{As: backend.Ollama, Spec: simservetest.Spec("")})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 5*time.Second) }()
	url := "http://" + ln.Addr().String()
	if status, body := do(t, http.MethodGet, url+"/", ""); status != 200 || body != "Ollama is running" {
		t.Fatalf("GET /: %d %q", status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if s := srv.Summary(); s.Requests != 0 {
		t.Errorf("summary %+v: no generation request was sent", s)
	}
}

// TestRealTimeFollowsTheEngine: the live server keeps the engine's
// schedule. Virtual time is the wall time since the server started, so
// a late wake-up delays the tokens due then but the delay does not add
// up: a long request ends when the engine says, plus at most the last
// token's lateness, never before.
func TestRealTimeFollowsTheEngine(t *testing.T) {
	spec := sim.Spec{GPU: "RTX 4090", Model: testModel} // ~6 ms a decode step
	srv, url := simservetest.Start(t, simserve.Options{As: backend.VLLM, Spec: spec})
	e, err := sim.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	const out = 300
	var firstAt, lastAt time.Duration
	prompt := 1 + 5 + 3 // "hi" in the chat template
	if _, err := e.Submit(sim.Request{PromptTokens: prompt, OutputTokens: out}, 0, func(ev sim.Event) {
		switch {
		case ev.Kind == sim.EventToken && firstAt == 0:
			firstAt = ev.At
		case ev.Kind == sim.EventFinished:
			lastAt = ev.At
		}
	}); err != nil {
		t.Fatal(err)
	}
	e.Drain()
	start := time.Now()
	b := post(t, url+"/v1/chat/completions", `{"model":"`+testModel+`","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":300}`)
	e2e := time.Since(start)
	if n := strings.Count(string(b), `"delta":{"content":"`); n != out {
		t.Fatalf("%d content chunks, want %d", n, out)
	}
	// a busy machine delays the last token by up to maxLag, and a longer
	// stall pauses the server (Summary.Paused); a clock running slow by a
	// quarter would not pass
	paused := srv.Summary().Paused
	if lo, hi := lastAt-time.Millisecond, lastAt*5/4+500*time.Millisecond+paused; e2e < lo || e2e > hi {
		t.Errorf("the request took %v; the engine says %v (first token at %v), paused %v: want within [%v, %v]", e2e, lastAt, firstAt, paused, lo, hi)
	}
}
