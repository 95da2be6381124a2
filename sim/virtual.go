package sim

// Virtual is the engine behind load's Client and Clock, in virtual time:
// the one way requests reach the engine, for `servebench run --backend
// sim` (package simrun shapes its HTTP requests) and for the engine-only
// levels that fitting and planning simulate (RunLevel). The load methods
// (pool, batch, rate with its arrival laws, warm-up, sessions, users) are
// defined once, in package load; a Virtual runs load.Sweep itself,
// unchanged, on its virtual clock (Virtual implements load.Clock and
// load.Tracker) with a simulated client (Virtual.Client implements
// backend.Client). Virtual time moves only when every goroutine of the
// sweep waits — on the clock (the rate pacer's Sleep, a think time, the
// grace timer), on the engine (a request's Do) or on another goroutine of
// the sweep, which load reports through load.Tracker's token count. When
// the count reaches zero the goroutine that gave up the last token
// advances the simulation, inline:
//
//  1. it wakes the next request that ended at the present instant (in
//     sequence order, one at a time, so the Sink sees Results in a fixed
//     order and pool workers take their next items in a fixed order);
//  2. else it fires the next timer due now (Sleep, AfterFunc, timeout);
//  3. else it hands the engine every request written at this instant, in
//     sequence order, and advances the engine to its next event or the
//     next timer, whichever is first.
//
// So a run is a function of its inputs and seed: goroutine scheduling
// decides nothing. Each request is written a seeded, exponentially drawn
// delay after load sends it (DefaultJitter's mean, derived from the
// request's sequence number and the seed), so that closed-loop clients do
// not move in lock-step; the delay is before the request's clock starts.

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
)

// VirtualOptions configure a Virtual.
type VirtualOptions struct {
	// Seed draws the clients' send delays.
	Seed int64
	// Jitter is the mean send delay (0: DefaultJitter; negative: none).
	Jitter time.Duration
	// Timeout fails a request not finished this long after it was
	// written (run's --timeout; 0: none), as a real client's would.
	Timeout time.Duration
	// Shape is the engine request a client's request asks for: its
	// prompt tokens (counted with the tokenizer, or the workload's fixed
	// length), output tokens, images, and the prefix and conversation it
	// shares with others for the caches. It is called once per request,
	// outside the Virtual's lock.
	Shape func(req *backend.Request, res *record.Result) Request
	// Base is the clock time of the engine's time zero (zero:
	// VirtualBase): a fresh server that carries on a sweep's timeline
	// where the server before it stopped, so that its records follow the
	// earlier ones while its engine starts from nothing.
	Base time.Time
}

// Virtual is one simulated server and the virtual clock a sweep shares
// with it. Its Clock, Client and Observer are the Virtual itself; all of
// its state is guarded by one mutex.
type Virtual struct {
	mu     sync.Mutex
	eng    *Engine
	opt    VirtualOptions
	jitter float64 // mean seconds
	base   time.Time
	// tokens counts the goroutines that may act (load.Tracker); the
	// goroutine that creates the Virtual holds the first.
	tokens int
	// pending are requests written at the present instant, not yet
	// handed to the engine; ended are requests that ended, not yet
	// woken.
	pending []*call
	ended   []*call
	timers  timerHeap
	nextID  uint64
	// preAtStart is the engine's preemption counter at LevelStart.
	preAtStart int
}

// VirtualBase is the clock time of the engine's time zero: a fixed
// instant, so that records do not depend on when the prediction ran (they
// hold only differences of it).
var VirtualBase = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// NewVirtual returns a Virtual on engine e, from e's present time (a
// sweep's levels may run on one engine one after another). The calling
// goroutine holds the Virtual's first token: it is the goroutine that
// then runs the sweep (calibration probes included). opt.Shape must be
// set.
func NewVirtual(e *Engine, opt VirtualOptions) *Virtual {
	s := &Virtual{eng: e, opt: opt, base: VirtualBase, tokens: 1}
	if !opt.Base.IsZero() {
		s.base = opt.Base
	}
	switch {
	case opt.Jitter == 0:
		s.jitter = DefaultJitter.Seconds()
	case opt.Jitter > 0:
		s.jitter = opt.Jitter.Seconds()
	}
	return s
}

// Config is the engine's configuration.
func (s *Virtual) Config() Config { return s.eng.Config() }

// Stats is the engine's state now.
func (s *Virtual) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng.Stats()
}

// Now is the virtual time (load.Clock).
func (s *Virtual) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base.Add(s.eng.Now())
}

// Busy adds delta tokens (load.Tracker); at zero the simulation advances.
func (s *Virtual) Busy(delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busyLocked(delta)
}

// maxPreallocChunks bounds the chunk offsets preallocated for a
// request: its max_tokens is an upper bound that may be far above what
// it generates, and the slice grows past this as any slice does.
const maxPreallocChunks = 4096

// locked runs f holding s.mu, released even when f panics (the engine
// advances inside busyLocked): a panic must end the process, and a
// deferred cleanup elsewhere that takes s.mu would otherwise wait on it
// forever, leaving the process alive and deaf.
func (s *Virtual) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *Virtual) busyLocked(delta int) {
	s.tokens += delta
	if s.tokens < 0 {
		panic(fmt.Sprintf("simrun: token count %d below zero", s.tokens))
	}
	if s.tokens == 0 {
		s.advance()
	}
}

// Sleep waits d of virtual time (load.Clock).
func (s *Virtual) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	ch := make(chan struct{})
	var t *timer
	s.locked(func() {
		t = s.addTimer(d, func() { close(ch) })
		s.busyLocked(-1)
	})
	select {
	case <-ch:
		return true // the timer handed this goroutine a token
	case <-ctx.Done():
	}
	s.mu.Lock()
	if !t.fired {
		t.dead = true
		s.tokens++
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	<-ch
	return false
}

// AfterFunc calls f on its own goroutine after d of virtual time
// (load.Clock). Its caller need not hold a token (load sets its grace
// timer from context.AfterFunc's goroutine): when no goroutine may act,
// none would advance the simulation to the timer, so AfterFunc does.
func (s *Virtual) AfterFunc(d time.Duration, f func()) func() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.addTimer(d, func() {
		go func() {
			f()
			s.Busy(-1)
		}()
	})
	if s.tokens == 0 {
		s.advance()
	}
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if t.fired || t.dead {
			return false
		}
		t.dead = true
		return true
	}
}

// Client is the simulated server as a backend.Client.
func (s *Virtual) Client() backend.Client { return client{s} }

type client struct{ s *Virtual }

// Tokenize is unsupported, as on Ollama or SGLang: the workload Builder
// then sets prompt lengths from a few probe requests (the Calibrated
// mode) rather than by a binary search of tokenizer calls per prompt,
// which would cost more than simulating the request. Do counts each
// prompt with VirtualOptions.Shape (simrun's: sim serve's tokenizer), so
// the records' prompt tokens are the lengths that mode reached.
func (client) Tokenize(context.Context, string) (int, error) { return 0, backend.ErrUnsupported }

// Warnings are none: the simulated server honours every parameter.
func (client) Warnings() []string { return nil }

// Do writes req at the present virtual instant plus the client's send
// delay and returns when the engine finished it (or it timed out, or ctx
// ended), with res filled as a real adapter fills it.
func (c client) Do(ctx context.Context, req *backend.Request, res *record.Result) {
	c.s.do(ctx, req, res)
}

// callState is where a call is.
type callState uint8

const (
	callPending callState = iota // written, not yet handed to the engine
	callRunning                  // in the engine
	callEnded                    // ended, not yet woken
	callWoken                    // woken, or given up by its caller
)

type call struct {
	seq int
	res *record.Result
	// offs are the chunk offsets so far, res.ChunkOffsetsNS when do
	// returns: kept here, beside the rest of the call, so that a token
	// event does not touch the Result too.
	offs    []int64
	answer  *strings.Builder // the request's Answer, nil when not wanted
	req     Request
	writeAt time.Duration
	handle  Handle
	state   callState
	wake    chan struct{}
	timeout *timer
}

func (s *Virtual) do(ctx context.Context, req *backend.Request, res *record.Result) {
	c := &call{seq: res.Seq, res: res, answer: req.Answer, wake: make(chan struct{}), req: s.opt.Shape(req, res),
		offs: make([]int64, 0, min(max(req.MaxTokens, 0), maxPreallocChunks))}
	defer func() { res.ChunkOffsetsNS = c.offs }()
	s.locked(func() {
		now := s.eng.Now()
		c.writeAt = now + s.delay(res.Seq, res.Warmup)
		if !req.RunStart.IsZero() {
			res.StartNS = int64(s.base.Add(c.writeAt).Sub(req.RunStart))
		}
		s.pending = append(s.pending, c)
		s.busyLocked(-1)
	})
	select {
	case <-c.wake:
		return
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.state {
	case callWoken:
		return
	case callEnded:
		s.ended = slices.DeleteFunc(s.ended, func(x *call) bool { return x == c })
	case callPending:
		s.pending = slices.DeleteFunc(s.pending, func(x *call) bool { return x == c })
		s.fail(c, record.ReasonCanceled, "canceled: "+context.Cause(ctx).Error())
	case callRunning:
		s.eng.Cancel(c.handle)
		s.fail(c, record.ReasonCanceled, "canceled: "+context.Cause(ctx).Error())
	}
	c.state = callWoken
	if c.timeout != nil {
		c.timeout.dead = true
	}
	s.tokens++
}

// delay is request seq's send delay: exponential of mean s.jitter, drawn
// from a generator keyed by the seed and seq (a warm-up and a counted
// request never share one), so it does not depend on the order requests
// are sent in.
func (s *Virtual) delay(seq int, warmup bool) time.Duration {
	if s.jitter == 0 {
		return 0
	}
	k := uint64(s.opt.Seed)*0x9e3779b97f4a7c15 ^ uint64(seq)
	if warmup {
		k ^= 0x5bd1e9955bd1e995
	}
	u := float64(splitmix64(k)>>11) / (1 << 53) // [0, 1)
	return time.Duration(-math.Log1p(-u) * s.jitter * 1e9)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// fail ends c with an error at the present instant. A request not yet
// written (its send delay not over: cancelled meanwhile) took no time:
// E2ENS 0, never negative.
func (s *Virtual) fail(c *call, reason record.Reason, msg string) {
	c.res.E2ENS = int64(max(s.eng.Now()-c.writeAt, 0))
	c.res.Reason, c.res.Error = reason, msg
}

// event records one engine event of c (called by the engine, s.mu held).
func (s *Virtual) event(c *call, ev Event) {
	r := c.res
	off := int64(ev.At - c.writeAt)
	switch ev.Kind {
	case EventScheduled:
		if r.CachedPromptTokens == nil {
			// the prompt tokens served from the cache, as a server's
			// usage reports them (vLLM prompt_tokens_details, llama.cpp
			// timings.cache_n), at the request's first admission
			cached := ev.Cached
			r.CachedPromptTokens = &cached
		}
	case EventToken:
		if len(c.offs) == 0 && r.TTFTNS == nil {
			ttft := off // its own variable: taking off's address would put every event's on the heap
			r.TTFTNS = &ttft
		}
		c.offs = append(c.offs, off)
	case EventFinished:
		r.E2ENS = off
		r.Status = 200
		r.FinishReason = "length"
		out := ev.Generated
		prompt := c.req.PromptTokens + c.req.Images*s.eng.Config().Model.ImageTokens
		r.OutputTokens, r.PromptTokens = &out, &prompt
		if c.answer != nil {
			c.answer.Reset()
			WriteOutputText(c.answer, uint64(s.opt.Seed)^uint64(c.seq)*0x9e3779b97f4a7c15, out)
		}
		s.end(c)
	case EventRejected:
		r.E2ENS = off
		r.Status = 400
		r.Reason, r.Error = record.ReasonHTTP4xx, "HTTP 400: "+ev.Reason
		c.offs = nil
		s.end(c)
	}
}

func (s *Virtual) end(c *call) {
	c.state = callEnded
	if c.timeout != nil {
		c.timeout.dead = true
	}
	s.ended = append(s.ended, c)
}

// advance moves the simulation on while no goroutine of the sweep may act
// (s.mu held, s.tokens == 0): see the package doc for the order.
func (s *Virtual) advance() {
	for s.tokens == 0 {
		if len(s.ended) > 0 {
			i := 0
			for j, c := range s.ended {
				if c.seq < s.ended[i].seq {
					i = j
				}
			}
			c := s.ended[i]
			s.ended = slices.Delete(s.ended, i, i+1)
			c.state = callWoken
			s.tokens++
			close(c.wake)
			return
		}
		if s.dropDeadTimers(); len(s.ended) > 0 {
			continue // requests that timed out now
		}
		now := s.eng.Now()
		if len(s.timers) > 0 && s.timers[0].at <= now {
			t := heap.Pop(&s.timers).(*timer)
			t.fired = true
			s.tokens++
			t.fire()
			continue
		}
		s.submitPending()
		next, ok := s.eng.NextEvent()
		if len(s.timers) > 0 && (!ok || s.timers[0].at < next) {
			next, ok = s.timers[0].at, true
		}
		if !ok {
			return // nothing can happen until a goroutine acts (a context ended)
		}
		s.eng.AdvanceTo(next)
	}
}

// submitPending hands the requests written at this instant to the engine,
// in sequence order.
func (s *Virtual) submitPending() {
	if len(s.pending) == 0 {
		return
	}
	slices.SortStableFunc(s.pending, func(a, b *call) int { return a.seq - b.seq })
	for _, c := range s.pending {
		h, err := s.eng.Submit(c.req, c.writeAt, func(ev Event) { s.event(c, ev) })
		if err != nil {
			c.res.Status = 400
			s.fail(c, record.ReasonInvalidRequest, "HTTP 400: "+err.Error())
			s.end(c)
			continue
		}
		c.handle, c.state = h, callRunning
		if s.opt.Timeout > 0 {
			c.timeout = s.addTimerAt(c.writeAt+s.opt.Timeout, func() {
				if c.state != callRunning {
					return
				}
				s.eng.Cancel(c.handle)
				s.fail(c, record.ReasonTimeout, fmt.Sprintf("timeout: no end after %v", s.opt.Timeout))
				s.end(c)
			})
			c.timeout.internal = true
		}
	}
	s.pending = s.pending[:0]
}

// timer is a Sleep, an AfterFunc or a request's timeout, due at virtual
// time at. fire runs with s.mu held; for the first two it hands a token
// to a goroutine (advance counts it), a timeout's (internal) runs inline.
type timer struct {
	at       time.Duration
	id       uint64
	fire     func()
	fired    bool
	dead     bool
	internal bool
}

func (s *Virtual) addTimer(d time.Duration, fire func()) *timer {
	return s.addTimerAt(s.eng.Now()+d, fire)
}

func (s *Virtual) addTimerAt(at time.Duration, fire func()) *timer {
	s.nextID++
	t := &timer{at: at, id: s.nextID, fire: fire}
	heap.Push(&s.timers, t)
	return t
}

// dropDeadTimers pops stopped timers and finished requests' timeouts off
// the top of the heap; internal timers that fire hand out no token, so
// advance takes one back for them.
func (s *Virtual) dropDeadTimers() {
	for len(s.timers) > 0 {
		t := s.timers[0]
		switch {
		case t.dead:
			heap.Pop(&s.timers)
		case t.internal && t.at <= s.eng.Now():
			heap.Pop(&s.timers)
			t.fired = true
			t.fire()
		default:
			return
		}
	}
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].id < h[j].id
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// Observer is the simulated server's telemetry as a load.Observer: what a
// real server's metrics would give over each level (peak KV-cache usage
// and preemptions for vLLM and SGLang, peak requests running and waiting
// for all but Ollama, as RunLevel reports them).
func (s *Virtual) Observer() load.Observer { return observer{s} }

type observer struct{ s *Virtual }

// LevelStart starts new peaks.
func (o observer) LevelStart(context.Context, load.Level) {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eng.ResetPeaks()
	s.preAtStart = s.eng.Stats().Preemptions
}

// LevelEnd reports the level's peaks.
func (o observer) LevelEnd(context.Context, load.Level) *record.Observations {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.eng.Stats()
	var obs record.Observations
	f := s.eng.Config().Backend
	if batched(f) {
		obs.PeakKVCacheUsage = ptr(math.Round(st.PeakKVUsage*1000) / 1000)
		obs.Preemptions = ptr(float64(st.Preemptions - s.preAtStart))
	}
	if f != backend.Ollama {
		obs.PeakRequestsRunning = ptr(float64(st.PeakRunning))
		obs.PeakRequestsWaiting = ptr(float64(st.PeakWaiting))
	}
	return &obs
}

func ptr[T any](v T) *T { return &v }
