package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// TestCancel withdraws requests wherever they are — not yet arrived,
// queued, running, in the middle of a step — and checks that each stops
// receiving events, that what it held is freed, and that the others go on.
func TestCancel(t *testing.T) {
	t.Run("pending never arrives", func(t *testing.T) {
		e := mustNew(t, testConfig(backend.VLLM))
		var tr trace
		h := submit(t, e, Request{PromptTokens: 10, OutputTokens: 5}, 10*time.Millisecond, &tr)
		if !e.Cancel(h) {
			t.Fatal("Cancel of a pending request returned false")
		}
		if _, ok := e.NextEvent(); ok {
			t.Error("the engine still has an event after its only request was withdrawn")
		}
		e.Drain()
		if len(tr.evs) != 0 {
			t.Errorf("events after cancel: %v", tr.evs)
		}
	})

	t.Run("running frees its blocks and stops", func(t *testing.T) {
		e := mustNew(t, testConfig(backend.VLLM))
		var tr trace
		a := submit(t, e, Request{PromptTokens: 160, OutputTokens: 50}, 0, &tr)
		b := submit(t, e, Request{PromptTokens: 160, OutputTokens: 50}, 0, &tr)
		for len(tr.of(a, EventToken)) < 10 {
			next, _ := e.NextEvent()
			e.AdvanceTo(next)
		}
		before := e.Stats()
		if before.Running != 2 {
			t.Fatalf("running = %d, want 2", before.Running)
		}
		if !e.Cancel(a) {
			t.Fatal("Cancel of a running request returned false")
		}
		after := e.Stats()
		if after.Running != 1 || after.Cancelled != 1 || !(after.KVUsage < before.KVUsage) {
			t.Errorf("after cancel: running %d, cancelled %d, KV %.4f (was %.4f)", after.Running, after.Cancelled, after.KVUsage, before.KVUsage)
		}
		tokensA := len(tr.of(a, EventToken))
		e.Drain()
		if n := len(tr.of(a, EventToken)); n != tokensA || len(tr.of(a, EventFinished)) != 0 {
			t.Errorf("cancelled request got %d more tokens or a finish", n-tokensA)
		}
		if n := len(tr.of(b, EventToken)); n != 50 {
			t.Errorf("the other request got %d tokens, want 50", n)
		}
		if s := e.Stats(); s.KVUsage != 0 || s.Running != 0 {
			t.Errorf("after drain: %+v", s)
		}
		if e.Cancel(a) || e.Cancel(b) || e.Cancel(99) || e.Cancel(-1) {
			t.Error("Cancel of a done or unknown request returned true")
		}
	})

	t.Run("mid-step: the step ends without it", func(t *testing.T) {
		e := mustNew(t, testConfig(backend.VLLM))
		var tr trace
		a := submit(t, e, Request{PromptTokens: 100, OutputTokens: 5}, 0, &tr)
		e.AdvanceTo(0) // arrival: the prefill step starts
		if _, ok := e.NextEvent(); !ok || !e.stepping {
			t.Fatal("no step under way")
		}
		e.Cancel(a)
		e.Drain()
		if len(tr.of(a, EventToken)) != 0 {
			t.Error("the cancelled request sampled at the end of its step")
		}
		if s := e.Stats(); s.KVUsage != 0 || s.Generated != 0 {
			t.Errorf("after drain: %+v", s)
		}
	})

	t.Run("queued leaves the queue", func(t *testing.T) {
		c := testConfig(backend.VLLM)
		c.Server.MaxNumSeqs = 1
		e := mustNew(t, c)
		var tr trace
		a := submit(t, e, Request{PromptTokens: 10, OutputTokens: 20}, 0, &tr)
		b := submit(t, e, Request{PromptTokens: 10, OutputTokens: 20}, 0, &tr)
		c2 := submit(t, e, Request{PromptTokens: 10, OutputTokens: 20}, 0, &tr)
		e.AdvanceTo(time.Millisecond)
		if s := e.Stats(); s.Waiting != 2 {
			t.Fatalf("waiting = %d, want 2", s.Waiting)
		}
		e.Cancel(b)
		if s := e.Stats(); s.Waiting != 1 {
			t.Errorf("waiting after cancel = %d, want 1", s.Waiting)
		}
		e.Drain()
		if len(tr.of(b, EventScheduled)) != 0 || len(tr.of(b, EventToken)) != 0 {
			t.Error("the cancelled queued request was scheduled")
		}
		if len(tr.of(a, EventFinished)) != 1 || len(tr.of(c2, EventFinished)) != 1 {
			t.Error("the others did not finish")
		}
	})

	t.Run("slot frees for the deferred task at once", func(t *testing.T) {
		c := testConfig(backend.LlamaCpp)
		c.Server.Slots = 1
		e := mustNew(t, c)
		var tr trace
		a := submit(t, e, Request{PromptTokens: 10, OutputTokens: 1000}, 0, &tr)
		b := submit(t, e, Request{PromptTokens: 10, OutputTokens: 5}, 0, &tr)
		e.AdvanceTo(20 * time.Millisecond)
		if len(tr.of(b, EventScheduled)) != 0 {
			t.Fatal("b was scheduled while the only slot was busy")
		}
		e.Cancel(a)
		sched := tr.of(b, EventScheduled)
		if len(sched) != 1 || sched[0].At != 20*time.Millisecond {
			t.Fatalf("b scheduled %v, want once at the cancel (20ms)", sched)
		}
		e.Drain()
		if n := len(tr.of(b, EventToken)); n != 5 {
			t.Errorf("b got %d tokens, want 5", n)
		}
		if s := e.Stats(); s.KVUsage != 0 || s.Running != 0 {
			t.Errorf("after drain: %+v", s)
		}
	})
}

// TestScheduledEvent: a request that queues behind a busy slot is
// scheduled when the slot frees, after its EventQueued, before its first
// token.
func TestScheduledEvent(t *testing.T) {
	c := testConfig(backend.Ollama)
	c.Server.Slots = 1
	e := mustNew(t, c)
	var tr trace
	a := submit(t, e, Request{PromptTokens: 10, OutputTokens: 4}, 0, &tr)
	b := submit(t, e, Request{PromptTokens: 10, OutputTokens: 4}, 0, &tr)
	e.Drain()
	finA := tr.of(a, EventFinished)[0].At
	sb := tr.of(b, EventScheduled)
	if len(sb) != 1 || sb[0].At != finA {
		t.Fatalf("b scheduled at %v, want once when a finished (%v)", sb, finA)
	}
	if q := tr.of(b, EventQueued)[0].At; q > sb[0].At || sb[0].At > tr.of(b, EventToken)[0].At {
		t.Errorf("queued %v, scheduled %v, first token %v: out of order", q, sb[0].At, tr.of(b, EventToken)[0].At)
	}
}

// TestListenerReleased: the engine drops a request's listener once the
// request is over, so a long-running server does not keep every finished
// request's state alive.
func TestListenerReleased(t *testing.T) {
	e := mustNew(t, testConfig(backend.VLLM))
	var tr trace
	h := submit(t, e, Request{PromptTokens: 10, OutputTokens: 2}, 0, &tr)
	e.Drain()
	if e.reqs[h].on != nil {
		t.Error("listener kept after the request finished")
	}
}

// TestResolvedModel: a Spec names the preset and weight format its model
// name implies, or the one --quant forces; an unknown name is
// ErrUnknownModel.
func TestResolvedModel(t *testing.T) {
	cases := []struct {
		name, model, quant string
		wantPreset, wantQ  string
	}{
		{"HF name with format", "Qwen/Qwen2.5-7B-Instruct-AWQ", "", "qwen2.5-7b", "awq"},
		{"Ollama tag", "qwen2.5:7b-instruct", "", "qwen2.5-7b", "q4_k_m"},
		{"preset and --quant", "qwen2.5-7b", "q8_0", "qwen2.5-7b", "q8_0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, q, err := Spec{Model: tc.model, Quant: tc.quant}.ResolvedModel()
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != tc.wantPreset || q != tc.wantQ || m.Layers == 0 {
				t.Errorf("got %q (%d layers) in %q, want %q in %q", m.Name, m.Layers, q, tc.wantPreset, tc.wantQ)
			}
		})
	}
	if _, _, err := (Spec{Model: "no-such-model-9b"}).ResolvedModel(); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model: %v, want ErrUnknownModel", err)
	}
}
