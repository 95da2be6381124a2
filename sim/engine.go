package sim

import (
	"fmt"
	"math"
	"time"
)

// Request is one request as the server sees it.
type Request struct {
	// PromptTokens is the prompt length in tokens (chat template
	// included), without the images' tokens.
	PromptTokens int
	// OutputTokens is how many tokens the server generates (max_tokens
	// with ignore_eos).
	OutputTokens int
	// Images is the number of images; each adds ModelCost.ImageTokens to
	// the prompt and runs the vision encoder once.
	Images int
	// PrefixGroup, when nonzero, says that this request's first
	// SharedPrefixTokens tokens equal those of every other request of the
	// same group (a shared system prompt), which prefix caching reuses.
	PrefixGroup        int
	SharedPrefixTokens int
	// Conversation, when nonzero, names the conversation the request is
	// a turn of, and its first HistoryTokens tokens are that
	// conversation so far (the earlier turns' messages and answers). A
	// server with prefix caching still holds them from the previous
	// turn unless they were evicted meanwhile (vLLM's and SGLang's
	// prefix cache, llama.cpp's and Ollama's slot cache), so the turn
	// computes only the rest of its prompt.
	Conversation  int
	HistoryTokens int
}

// Handle names a submitted request.
type Handle int32

// EventKind says what happened to a request.
type EventKind uint8

// Event kinds, in the order a request can see them.
const (
	// EventQueued: the request reached the server's queue (after
	// Params.RequestLatency).
	EventQueued EventKind = iota + 1
	// EventToken: Tokens tokens reached the client; the first such event
	// is the first token (TTFT).
	EventToken
	// EventPreempted: the server freed the request's KV cache; it will
	// recompute its prompt and output so far (vLLM, SGLang).
	EventPreempted
	// EventFinished: the request generated its last token and left.
	EventFinished
	// EventRejected: the server refused the request (it can never fit:
	// longer than the context or the whole KV cache); Reason says why.
	EventRejected
	// EventScheduled: the scheduler admitted the request (vLLM, SGLang:
	// it joined the running batch; llama.cpp, Ollama: it took a slot).
	// The time from EventQueued to the first EventScheduled is its queue
	// time; a preempted request is scheduled again when it resumes.
	EventScheduled
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventQueued:
		return "queued"
	case EventToken:
		return "token"
	case EventPreempted:
		return "preempted"
	case EventFinished:
		return "finished"
	case EventRejected:
		return "rejected"
	case EventScheduled:
		return "scheduled"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one thing that happened to a request, at virtual time At.
type Event struct {
	Kind   EventKind
	Handle Handle
	At     time.Duration
	// Tokens is the number of tokens of an EventToken chunk.
	Tokens int
	// Generated is the tokens generated so far.
	Generated int
	// Reason explains an EventRejected.
	Reason string
	// Cached is, for an EventScheduled, the prompt tokens the server
	// found in its cache (a shared prefix, a conversation's history)
	// and did not compute.
	Cached int
}

// Listener receives one request's events, in time order, from the
// goroutine that calls AdvanceTo.
type Listener func(Event)

// reqState is where a request is.
type reqState uint8

const (
	statePending reqState = iota // submitted, not yet at the scheduler
	stateWaiting
	stateRunning
	stateDone
)

// req is the engine's state of one request.
type req struct {
	on        Listener
	arrive    time.Duration
	prompt    int // prompt + image tokens
	output    int
	images    int
	group     int
	groupToks int
	// conv and histToks are Request.Conversation and HistoryTokens.
	conv, histToks int
	state          reqState
	// generated is the tokens sampled so far; computed the tokens whose
	// KV is in the cache (prompt + generated − 1 once decoding).
	generated, computed int
	// blocks is the private KV blocks held (vLLM, SGLang); shared the
	// group prefix blocks in use; cachedKey names the free-queue segment
	// of its blocks after a preemption.
	blocks, shared int
	// encoded says whether the images went through the encoder.
	encoded bool
	slot    int
}

// numTokens is the tokens the request's KV must cover before it can sample
// its next token.
func (r *req) numTokens() int { return r.prompt + r.generated }

// Stats is the engine's state and counters.
type Stats struct {
	// Now is the virtual time.
	Now time.Duration
	// Running and Waiting are the requests being served and queued.
	Running, Waiting int
	// KVUsage is the fraction of the KV cache in use (vLLM's
	// kv_cache_usage_perc: 1 − free blocks / blocks); for slot servers the
	// cells of busy slots over all cells.
	KVUsage float64
	// PeakKVUsage, PeakRunning and PeakWaiting are maxima since the last
	// ResetPeaks.
	PeakKVUsage              float64
	PeakRunning, PeakWaiting int
	// Preemptions counts preemptions since New (vLLM's
	// num_preemptions counter).
	Preemptions int
	// Steps counts engine steps; Generated the tokens sampled.
	Steps     int
	Generated int64
	// Cancelled counts requests withdrawn by Cancel; Stuck those ended
	// because the scheduler could make no progress (StuckReason).
	Cancelled, Stuck int
}

// scheduler is one server family's scheduling policy.
type scheduler interface {
	// enqueue takes a request that reached the server.
	enqueue(h Handle)
	// plan decides the next step and returns its duration in seconds,
	// false when there is nothing to do.
	plan() (float64, bool)
	// finish applies the planned step at the engine's current time.
	finish()
	// counts returns the running and waiting requests and the KV usage.
	counts() (running, waiting int, kv float64)
	// cancel removes a waiting or running request and frees what it
	// holds; the engine marks it done.
	cancel(h Handle)
}

// Engine simulates one server on one GPU in virtual time. It is driven
// from outside: Submit requests, then AdvanceTo the times NextEvent gives.
// It is not safe for concurrent use.
type Engine struct {
	cfg      Config
	cost     *costModel
	sched    scheduler
	reqs     []req
	arrivals handleHeap
	now      time.Duration
	stepping bool
	stepEnd  time.Duration
	stats    Stats
	front    frontQueue
}

// New returns an engine for cfg, idle at virtual time 0.
func New(cfg Config) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, cost: newCostModel(&cfg), front: frontQueue{cost: cfg.Params.FrontEnd}}
	e.arrivals.reqs = &e.reqs
	if batched(cfg.Backend) {
		e.sched = newBatchScheduler(e)
	} else {
		e.sched = newSlotScheduler(e)
	}
	return e, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Now is the virtual time.
func (e *Engine) Now() time.Duration { return e.now }

// Submit sends r at virtual time at (not before Now); on receives its
// events (nil: none). It returns the request's handle, or an error for a
// request that is malformed (no output tokens, negative lengths).
func (e *Engine) Submit(r Request, at time.Duration, on Listener) (Handle, error) {
	if at < e.now {
		return 0, fmt.Errorf("%w: submit at %v before the engine's time %v", ErrBadInput, at, e.now)
	}
	if r.PromptTokens < 1 || r.OutputTokens < 1 || r.Images < 0 || r.SharedPrefixTokens < 0 || r.SharedPrefixTokens > r.PromptTokens {
		return 0, fmt.Errorf("%w: request needs a prompt and output of at least one token (prompt %d, output %d, images %d, shared prefix %d)",
			ErrBadInput, r.PromptTokens, r.OutputTokens, r.Images, r.SharedPrefixTokens)
	}
	if len(e.reqs) >= math.MaxInt32 {
		return 0, fmt.Errorf("%w: too many requests", ErrBadInput)
	}
	h := Handle(len(e.reqs))
	e.reqs = append(e.reqs, req{
		on: on, arrive: at + e.cfg.Params.RequestLatency + e.front.admit(at, r.PromptTokens),
		prompt: r.PromptTokens + r.Images*e.cfg.Model.ImageTokens, output: r.OutputTokens, images: r.Images,
		group: r.PrefixGroup, groupToks: r.SharedPrefixTokens, slot: -1,
		conv: r.Conversation, histToks: min(max(r.HistoryTokens, 0), r.PromptTokens),
	})
	e.arrivals.push(h)
	return h, nil
}

// NextEvent is the virtual time of the engine's next internal event (a
// step ending or a request reaching the server), and false when it has
// nothing left to do.
func (e *Engine) NextEvent() (time.Duration, bool) {
	t, ok := time.Duration(math.MaxInt64), false
	if e.stepping {
		t, ok = e.stepEnd, true
	}
	if h, has := e.arrivals.peek(); has && e.reqs[h].arrive < t {
		t, ok = e.reqs[h].arrive, true
	}
	return t, ok
}

// AdvanceTo runs the engine until virtual time t, delivering every event
// up to and including t; afterwards Now is t (or stays, if t is earlier).
func (e *Engine) AdvanceTo(t time.Duration) {
	for {
		next, ok := e.NextEvent()
		if !ok || next > t {
			break
		}
		e.now = next
		if e.stepping && e.stepEnd == next {
			e.stepping = false
			e.sched.finish()
		}
		for {
			h, has := e.arrivals.peek()
			if !has || e.reqs[h].arrive > e.now {
				break
			}
			e.arrivals.pop()
			r := &e.reqs[h]
			r.state = stateWaiting
			e.emit(h, Event{Kind: EventQueued})
			e.sched.enqueue(h)
		}
		e.startStep()
		e.observe()
	}
	if t > e.now {
		e.now = t
	}
}

// startStep plans the next step when none is running.
func (e *Engine) startStep() {
	if e.stepping {
		return
	}
	if sec, ok := e.sched.plan(); ok {
		e.stepping = true
		e.stepEnd = e.now + dur(sec)
		e.stats.Steps++
		return
	}
	e.rejectStuck()
}

// StuckReason is the Reason of the EventRejected a request gets when the
// scheduler can plan no step while it holds requests: nothing would ever
// change again (no step frees KV cache), so rather than leave them in
// flight forever the engine ends them, visibly. A real server would have
// preempted or aborted something; this is a limit of the simulated
// scheduler (seen with SGLang's chunked prefill beside prefix-cache
// groups on tiny KV pools), never a prediction.
const StuckReason = "the simulated scheduler cannot make progress (no step fits its KV cache): a simulator limit, not a prediction"

// rejectStuck ends every request the scheduler holds when it planned no
// step although it holds some.
func (e *Engine) rejectStuck() {
	if run, wait, _ := e.sched.counts(); run+wait == 0 {
		return
	}
	for h := range e.reqs {
		if st := e.reqs[h].state; st == stateWaiting || st == stateRunning {
			e.sched.cancel(Handle(h))
			e.stats.Stuck++
			e.reject(Handle(h), StuckReason)
		}
	}
}

// Cancel withdraws request h at the engine's current time, as a server
// aborts a request whose client went away (vLLM's abort_requests, llama.cpp's
// cancel task, Ollama's closed request context): a request not yet at the
// server never arrives, a queued one leaves the queue, a running one frees
// its KV cache or slot at once (a step already under way finishes, without
// it). Its listener receives no further events. Cancel reports whether h
// was still in flight (false for an unknown handle or a request that
// finished or was rejected).
func (e *Engine) Cancel(h Handle) bool {
	if h < 0 || int(h) >= len(e.reqs) {
		return false
	}
	r := &e.reqs[h]
	switch r.state {
	case stateDone:
		return false
	case statePending:
		e.arrivals.remove(h)
	default:
		e.sched.cancel(h)
	}
	r.state, r.on = stateDone, nil
	e.stats.Cancelled++
	e.startStep()
	e.observe()
	return true
}

// Drain runs the engine until it has nothing left to do and returns the
// virtual time then.
func (e *Engine) Drain() time.Duration {
	for {
		t, ok := e.NextEvent()
		if !ok {
			return e.now
		}
		e.AdvanceTo(t)
	}
}

// Stats returns the engine's state and counters.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.Now = e.now
	s.Running, s.Waiting, s.KVUsage = e.sched.counts()
	return s
}

// ResetPeaks starts new maxima from the current state (a new level).
func (e *Engine) ResetPeaks() {
	run, wait, kv := e.sched.counts()
	e.stats.PeakRunning, e.stats.PeakWaiting, e.stats.PeakKVUsage = run, wait, kv
}

// observe updates the maxima.
func (e *Engine) observe() {
	run, wait, kv := e.sched.counts()
	e.stats.PeakRunning = max(e.stats.PeakRunning, run)
	e.stats.PeakWaiting = max(e.stats.PeakWaiting, wait)
	e.stats.PeakKVUsage = max(e.stats.PeakKVUsage, kv)
}

// emit delivers ev to h's listener at the current time.
func (e *Engine) emit(h Handle, ev Event) {
	r := &e.reqs[h]
	if r.on == nil {
		return
	}
	ev.Handle, ev.At, ev.Generated = h, e.now, r.generated
	r.on(ev)
}

// sampled records that h sampled a token at the end of the current step
// and reports whether it is done.
func (e *Engine) sampled(h Handle) bool {
	r := &e.reqs[h]
	r.generated++
	e.stats.Generated++
	e.front.chunk(e.now)
	e.emit(h, Event{Kind: EventToken, Tokens: 1})
	if r.generated < r.output {
		return false
	}
	r.state = stateDone
	e.emit(h, Event{Kind: EventFinished})
	r.on = nil // the listener is done: let it be collected
	return true
}

// reject refuses h for good.
func (e *Engine) reject(h Handle, why string) {
	e.reqs[h].state = stateDone
	e.emit(h, Event{Kind: EventRejected, Reason: why})
	e.reqs[h].on = nil
}

// handleHeap is a min-heap of handles by arrival time, then handle.
type handleHeap struct {
	reqs *[]req
	h    []Handle
}

func (q *handleHeap) less(a, b Handle) bool {
	ra, rb := (*q.reqs)[a].arrive, (*q.reqs)[b].arrive
	return ra < rb || (ra == rb && a < b)
}

func (q *handleHeap) push(x Handle) {
	q.h = append(q.h, x)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *handleHeap) peek() (Handle, bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return q.h[0], true
}

func (q *handleHeap) pop() Handle {
	top := q.h[0]
	q.removeAt(0)
	return top
}

// remove takes x out of the heap, wherever it is.
func (q *handleHeap) remove(x Handle) {
	for i, h := range q.h {
		if h == x {
			q.removeAt(i)
			return
		}
	}
}

// removeAt deletes the element at i and restores the heap order.
func (q *handleHeap) removeAt(i int) {
	n := len(q.h) - 1
	moved := q.h[n]
	q.h = q.h[:n]
	if i == n {
		return
	}
	q.h[i] = moved
	for i > 0 { // up
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
	for { // down
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(q.h[l], q.h[m]) {
			m = l
		}
		if r < n && q.less(q.h[r], q.h[m]) {
			m = r
		}
		if m == i {
			return
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
}
