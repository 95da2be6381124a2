package sim

import (
	"context"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

// newTestVirtual is a Virtual on a vLLM engine for qwen2.5-7b on an RTX
// 4090, its requests shaped as 16-token prompts.
func newTestVirtual(t *testing.T) (*Virtual, error) {
	t.Helper()
	cfg, err := Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shape := func(req *backend.Request, _ *record.Result) Request {
		return Request{PromptTokens: 16, OutputTokens: req.MaxTokens}
	}
	return NewVirtual(e, VirtualOptions{Seed: 1, Shape: shape}), nil
}

// TestAfterFuncWhileIdle: load's grace timer is set by a goroutine that
// holds no token (context.AfterFunc's, on Ctrl-C) and may come when every
// goroutine of the sweep already waits and the engine has nothing left to
// do (requests it will never finish). The timer must still fire, or the
// cancelled sweep never ends.
func TestAfterFuncWhileIdle(t *testing.T) {
	s, err := newTestVirtual(t)
	if err != nil {
		t.Fatal(err)
	}
	s.Busy(-1) // the sweep's last goroutine waits: nothing can happen
	fired := make(chan struct{})
	s.AfterFunc(time.Second, func() { close(fired) })
	select {
	case <-fired:
	case <-time.After(30 * time.Second):
		t.Fatal("AfterFunc set while the simulation was idle never fired")
	}
	if got := s.Now().Sub(VirtualBase); got != time.Second {
		t.Errorf("fired at virtual %v, want 1s", got)
	}
}

// TestPanicReleasesTheLock: a panic inside the simulation (here the token
// count going below zero, as a broken caller makes it) leaves the mutex
// free, so that deferred cleanups which take it run and the panic ends the
// process instead of leaving it asleep. The chunk offsets of a request
// asking for an absurd max_tokens are not preallocated to it.
func TestPanicReleasesTheLock(t *testing.T) {
	s, err := newTestVirtual(t)
	if err != nil {
		t.Fatal(err)
	}
	s.Busy(-1) // the test gives its token up: the next Sleep goes below zero
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic below zero tokens")
			}
		}()
		s.Sleep(context.Background(), time.Second)
	}()
	if !s.mu.TryLock() {
		t.Fatal("the mutex is still held after the panic")
	}
	s.mu.Unlock()

	s2, err := newTestVirtual(t)
	if err != nil {
		t.Fatal(err)
	}
	s2.Busy(+1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := &record.Result{Seq: 1}
	s2.Client().Do(ctx, &backend.Request{Prompt: "hello", MaxTokens: 1 << 62}, res)
	if c := cap(res.ChunkOffsetsNS); c > maxPreallocChunks {
		t.Fatalf("preallocated %d chunk offsets", c)
	}
}
