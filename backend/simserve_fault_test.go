package backend_test

import (
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// TestFaultsFromSimServe: the adapters classify the faults a simulated
// server injects — in its own server's formats, mid-stream where the
// fault is mid-stream — the way a reliability report needs them.
func TestFaultsFromSimServe(t *testing.T) {
	cases := []struct {
		name    string
		faults  simserve.Faults
		timeout time.Duration
		reason  record.Reason
		status  int
	}{
		{"429", simserve.Faults{TooManyRequests: 1}, time.Minute, record.ReasonHTTP429, 429},
		{"5xx", simserve.Faults{ServerError: 1}, time.Minute, record.ReasonHTTP5xx, 500},
		{"cut after 5 tokens", simserve.Faults{CutStream: 1, CutAfter: 5}, time.Minute, record.ReasonTruncated, 200},
		{"cut before any token", simserve.Faults{CutStream: 1}, time.Minute, record.ReasonTruncated, 200},
		{"stall after 3 tokens", simserve.Faults{Stall: 1, StallAfter: 3}, 1500 * time.Millisecond, record.ReasonTimeout, 200},
	}
	for _, kind := range []backend.Kind{backend.VLLM, backend.LlamaCpp, backend.Ollama} {
		for _, tc := range cases {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				_, url := simservetest.Start(t, simserve.Options{As: backend.Kind(kind), Faults: tc.faults})
				c, err := backend.New(backend.Config{Kind: kind, BaseURL: url, Model: simModel, Timeout: tc.timeout})
				if err != nil {
					t.Fatal(err)
				}
				var r record.Result
				c.Do(t.Context(), &backend.Request{Prompt: simPrompt, MaxTokens: 64}, &r)
				if r.OK() || r.Reason != tc.reason || r.Status != tc.status || r.Error == "" {
					t.Errorf("got reason %q status %d error %q, want %q %d", r.Reason, r.Status, r.Error, tc.reason, tc.status)
				}
			})
		}
	}
}

// TestSlowFirstTokenFromSimServe: a slow first token shows in TTFT, and
// the request still completes.
func TestSlowFirstTokenFromSimServe(t *testing.T) {
	const delay = 400 * time.Millisecond
	_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM,
		Faults: simserve.Faults{SlowFirstToken: 1, FirstTokenDelay: delay}})
	c, err := backend.New(backend.Config{Kind: backend.VLLM, BaseURL: url, Model: simModel, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var r record.Result
	c.Do(t.Context(), &backend.Request{Prompt: simPrompt, MaxTokens: 16}, &r)
	checkSimResult(t, &r, 16, simPromptTokens+simTemplateTokens)
	if r.TTFTNS == nil || time.Duration(*r.TTFTNS) < delay {
		t.Errorf("TTFT %v, want at least the %v hold", r.TTFTNS, delay)
	}
}

// TestFaultDrawsFollowTheSeed: with a fraction of each fault, the same
// seed gives the same faults to the same sequence of requests, and
// another seed another sequence.
func TestFaultDrawsFollowTheSeed(t *testing.T) {
	faults := simserve.Faults{TooManyRequests: 0.3, ServerError: 0.2}
	outcome := func(seed uint64) []record.Reason {
		_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM, Seed: seed, Faults: faults})
		c, err := backend.New(backend.Config{Kind: backend.VLLM, BaseURL: url, Model: simModel, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var out []record.Reason
		for range 24 {
			var r record.Result
			c.Do(t.Context(), &backend.Request{Prompt: simPrompt, MaxTokens: 2}, &r)
			out = append(out, r.Reason)
		}
		return out
	}
	a, b, other := outcome(7), outcome(7), outcome(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 twice: %v and %v", a, b)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 drew the same faults: %v", a)
	}
	counts := map[record.Reason]int{}
	for _, r := range a {
		counts[r]++
	}
	if counts[record.ReasonHTTP429] == 0 || counts[record.ReasonHTTP5xx] == 0 || counts[record.ReasonNone] == 0 {
		t.Errorf("24 draws at 30%% 429 and 20%% 5xx gave %v", counts)
	}
}
