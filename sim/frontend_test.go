package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// TestFrontEndQueue: requests sent together are tokenized one after
// another, each reaching the scheduler one request's front-end time after
// the one before it; a request sent while a step's tokens are being
// streamed waits for their chunks; llama.cpp and a zero front end add
// nothing.
func TestFrontEndQueue(t *testing.T) {
	const prompt = 1000
	fe := FrontEnd{PerRequest: 100 * time.Microsecond, PerPromptToken: time.Microsecond, PerChunk: 10 * time.Microsecond}
	service := fe.PerRequest + prompt*fe.PerPromptToken // 1.1 ms
	queued := func(f backend.Kind, fe FrontEnd, n int) []time.Duration {
		t.Helper()
		c := testConfig(f)
		c.Params.RequestLatency = 5 * time.Millisecond
		c.Params.FrontEnd = fe
		e := mustNew(t, c)
		tr := &trace{}
		var hs []Handle
		for range n {
			hs = append(hs, submit(t, e, Request{PromptTokens: prompt, OutputTokens: 4}, 0, tr))
		}
		e.AdvanceTo(time.Second)
		var out []time.Duration
		for _, h := range hs {
			ev := tr.of(h, EventQueued)
			if len(ev) != 1 {
				t.Fatalf("request %d: %d queued events", h, len(ev))
			}
			out = append(out, ev[0].At)
		}
		return out
	}
	got := queued(backend.VLLM, fe, 4)
	for i, at := range got {
		if want := 5*time.Millisecond + time.Duration(i)*service; at != want {
			t.Errorf("vLLM request %d reached the scheduler at %v, want %v", i, at, want)
		}
	}
	for _, f := range []backend.Kind{backend.VLLM, backend.LlamaCpp} {
		for i, at := range queued(f, FrontEnd{}, 3) {
			if at != 5*time.Millisecond {
				t.Errorf("%s without a front end: request %d at %v, want 5ms", f, i, at)
			}
		}
	}

	// chunks: a stream of 8 sequences; a request sent as a step ends
	// waits for the 8 chunks that step streams
	c := testConfig(backend.VLLM)
	c.Params.FrontEnd = FrontEnd{PerChunk: 100 * time.Microsecond}
	e := mustNew(t, c)
	tr := &trace{}
	for range 8 {
		submit(t, e, Request{PromptTokens: 16, OutputTokens: 50}, 0, tr)
	}
	var end time.Duration
	for range 3 { // prefill, then two decode steps
		next, ok := e.NextEvent()
		if !ok {
			t.Fatal("engine idle")
		}
		e.AdvanceTo(next)
		end = next
	}
	h := submit(t, e, Request{PromptTokens: 16, OutputTokens: 4}, end, tr)
	e.AdvanceTo(end + 10*time.Millisecond)
	ev := tr.of(h, EventQueued)
	if len(ev) != 1 || ev[0].At != end+800*time.Microsecond {
		t.Errorf("request sent as a step of 8 tokens ended (%v): queued %v, want 8 chunks (0.8 ms) later", end, ev)
	}
}

// TestFrontEndValidate: a negative front-end cost is refused by name.
func TestFrontEndValidate(t *testing.T) {
	p := vllmDefaults
	p.PerChunk = -1
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "front_end_chunk_ns") {
		t.Errorf("negative chunk cost: err %v, want one naming front_end_chunk_ns", err)
	}
}
