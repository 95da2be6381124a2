// Package load drives a server with the requests of a run: the schedulers
// (pool: closed loop; batch: repeated simultaneous batches; rate: open
// loop), multi-turn sessions under pool and rate with their think times
// (session.go), warm-up, and cancellation with a grace period. It
// measures nothing itself: each request's timings come from
// backend.Client.Do, and each Result goes to a Sink from a single
// goroutine, in the order requests end.
// It reads the time only through the Sweep's Clock (the real one by
// default), so that a fake or virtual clock can drive a sweep (see Clock).
package load

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/workload"
)

// Method is a load method.
type Method string

// Load methods.
const (
	// Pool is a closed loop: Concurrency workers send Requests requests,
	// each worker sending its next request as its last one ends (the
	// multi-backend-sweep.json method), after warm-ups that hold at least
	// the Concurrency requests the workers start together
	// (Method.Warmups).
	Pool Method = "pool"
	// Batch sends Repeats batches of exactly Concurrency simultaneous
	// requests, each batch after the last one finished (the
	// vllm-text-image-example.json method).
	Batch Method = "batch"
	// Rate is an open loop: Requests requests sent at Rate requests/s by a
	// Pacer whether or not earlier ones finished, at most Concurrency in
	// flight.
	Rate Method = "rate"
)

// Methods lists every Method.
var Methods = []Method{Pool, Batch, Rate, Users}

// ParseMethod returns the Method named s.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown method %q (want one of %v)", s, Methods)
}

// DefaultGrace is how long in-flight requests may go on after the sweep's
// context is cancelled.
const DefaultGrace = 10 * time.Second

// Level is one level of a sweep, as the header of the records file plans
// it: Level is the value the level's Results carry in record.Result.Level
// (the concurrency for pool and batch, the level index for rate);
// Concurrency the number of workers (pool), the batch size (batch) or the
// cap on requests in flight (rate); Requests the counted requests (pool,
// rate); Repeats the batches (batch); Rate the requested rate in
// requests/s and Arrival its inter-arrival law (rate).
type Level = record.LevelPlan

// Total is the number of counted requests level l plans under method m.
func (m Method) Total(l Level) int {
	if m == Batch {
		return l.Repeats * l.Concurrency
	}
	return l.Requests
}

// Warmups is the number of uncounted requests level l sends first under
// method m with warmup asked for (Sweep.Warmup): at least the level's
// concurrency C for a pool level of two or more workers without
// sessions, whose C workers all start at once (the first C requests are
// a burst a steady closed loop never sends again, so they are warm-up),
// else warmup. One worker sends no burst: its first request meets the
// server as every later one does.
func (m Method) Warmups(l Level, warmup int) int {
	if m == Pool && l.Sessions == 0 && l.Concurrency > 1 {
		return max(warmup, l.Concurrency)
	}
	return warmup
}

// Source prepares the requests of a run; workload.Builder is one.
type Source interface {
	// Items prepares the n requests numbered seq0 … seq0+n−1.
	Items(ctx context.Context, seq0, n int) ([]workload.Item, error)
}

// WarmupSource is a Source whose warm-up requests are not its counted
// ones: a trace replays each of its rows once, counted, so its warm-ups
// are made apart (workload.TraceSource).
type WarmupSource interface {
	Source
	// WarmupItems prepares the n warm-up requests numbered seq0 …
	// seq0+n−1.
	WarmupItems(ctx context.Context, seq0, n int) ([]workload.Item, error)
}

// Sink receives what a sweep produces. Its methods are called from one
// goroutine, in order: LevelStart, the level's Results as they end (warm-ups
// first, marked Warmup), LevelEnd; then the next level.
type Sink interface {
	LevelStart(l Level)
	Result(r *record.Result)
	LevelEnd(l Level, end *record.LevelEnd)
}

// Collect is a Sink that keeps a sweep's Results and its last level's
// level_end fields in memory, for sweeps whose results are used at once
// (the simulator's engine-only levels, plan --users); run writes records
// to disk instead. It is safe for concurrent use.
type Collect struct {
	mu      sync.Mutex
	Results []record.Result
	End     *record.Observations
}

// LevelStart is a no-op: Collect keeps results, not level boundaries.
func (c *Collect) LevelStart(Level) {}

// Result keeps a copy of r.
func (c *Collect) Result(r *record.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Results = append(c.Results, *r)
}

// LevelEnd keeps the level's level_end fields.
func (c *Collect) LevelEnd(_ Level, e *record.LevelEnd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.End = e.Fields
}

// Observer watches levels from outside the requests (telemetry: server
// metrics, GPU memory). LevelStart is called after the warm-up, just before
// the level's first counted request; LevelEnd after its last one ended. The
// Observations of the observers of a sweep are merged in their order
// (non-nil pointers win, warnings add up) into the level's level_end line;
// nil means none.
type Observer interface {
	LevelStart(ctx context.Context, l Level)
	LevelEnd(ctx context.Context, l Level) *record.Observations
}

// RepeatObserver is an Observer that also measures GPU memory after each
// batch of the batch method (BatchRun.gpu_memory_mib_after); nil when
// unknown.
type RepeatObserver interface {
	RepeatEnd(ctx context.Context, l Level, repeat int) *float64
}

// Sweep runs the levels of one run in the order given.
type Sweep struct {
	// Run labels every Result.
	Run string
	// Method is the scheduler every level uses.
	Method Method
	// Levels run in this order.
	Levels []Level
	// Warmup is the number of uncounted requests before each level (a
	// pool level sends at least its concurrency: Method.Warmups).
	Warmup int
	// CountStartBurst counts a pool level from its first send, the C
	// requests its workers start together included, with only Warmup
	// before it: the protocol of the documents measured before
	// Method.Warmups (throughput from first send to last finish), which
	// the engine-only predictions of those documents (sim.RunLevel)
	// reproduce.
	CountStartBurst bool
	// Seed seeds the random schedules of rate levels (Poisson, gamma,
	// ramp).
	Seed int64
	// Client sends the requests; Source prepares them.
	Client backend.Client
	Source Source
	// Sink receives the Results and level boundaries.
	Sink Sink
	// Observe watches each level from outside the requests (telemetry).
	Observe []Observer
	// Grace bounds how long in-flight requests go on after ctx is
	// cancelled; 0 means DefaultGrace.
	Grace time.Duration
	// Clock is the time the sweep runs on: the rate method's schedule,
	// the grace period and Result.StartNS; nil means RealClock.
	Clock Clock

	// Start is the time origin of Result.StartNS; Do sets it to the
	// clock's now when it is zero. FirstSeq is the sequence number of the
	// next request prepared; Do advances it past the requests it
	// prepared. So several Do calls on one Sweep, each with the levels
	// chosen after the last (servebench find, run --stop-when-saturated),
	// make one run: one time origin, no prompt sent twice.
	Start    time.Time
	FirstSeq int
	// Sessions, when set, prepares the sessions of levels that plan some
	// (Level.Sessions > 0): multi-turn levels (session.go). Think is the
	// pause between a session's turns.
	Sessions SessionSource
	Think    ThinkTime
	// People, for the Users method, prepares the conversations of the
	// levels' people and their think times (users.go); Think, when set,
	// overrides the think times it draws.
	People PeopleSource
	// RecordText copies each request's prompt and answer texts into its
	// Result (PromptText, AnswerText); off, no text reaches a Result.
	RecordText bool
	// FirstSession is the number of the next session prepared; Do
	// advances it past the sessions it prepared, as FirstSeq, so that the
	// sessions of several Do calls on one Sweep are numbered, seeded and
	// paused as in one run.
	FirstSession int
	// Stop, when set, may end each level early as its counted Results
	// end (LevelStop: a search's level whose verdict is decided to
	// break); nil runs every level its planned length.
	Stop LevelStop
}

// Do runs the sweep. When ctx is cancelled it stops sending, lets requests
// in flight run up to Grace, delivers what was measured and returns
// complete=false. err is an error preparing requests.
func (s *Sweep) Do(ctx context.Context) (complete bool, err error) {
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	clock := s.Clock
	if clock == nil {
		clock = RealClock{}
	}
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	g := &graceTimer{clock: clock, grace: grace, cancel: cancelReqs}
	stopWatch := context.AfterFunc(ctx, g.start)
	defer func() {
		stopWatch()
		g.stop()
	}()

	if s.Start.IsZero() {
		s.Start = clock.Now()
	}
	r := &runner{s: s, clock: clock, tr: trackerOf(clock), ctx: ctx, reqCtx: reqCtx, t0: s.Start, seq: s.FirstSeq, session: s.FirstSession, events: make(chan event, 256)}
	defer func() { s.FirstSeq, s.FirstSession = r.seq, r.session }()
	done := make(chan struct{})
	go r.deliver(done)
	defer func() { close(r.events); <-done }()
	for _, l := range s.Levels {
		if ctx.Err() != nil {
			return false, nil
		}
		if err := r.level(l); err != nil {
			if ctx.Err() != nil {
				return false, nil
			}
			return false, err
		}
	}
	return ctx.Err() == nil, nil
}

// graceTimer cancels the requests in flight grace after the sweep's
// context ended (start), unless the sweep returned first (stop), so that
// no timer outlives Do.
type graceTimer struct {
	clock  Clock
	grace  time.Duration
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	stopFn  func() bool
}

func (g *graceTimer) start() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopFn = g.clock.AfterFunc(g.grace, g.cancel)
	}
}

func (g *graceTimer) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.stopFn != nil {
		g.stopFn()
	}
}

// event is one thing for the Sink; exactly one field is set.
type event struct {
	start  *Level
	result *record.Result
	end    *record.LevelEnd
	endLvl Level
}

type runner struct {
	s           *Sweep
	clock       Clock
	tr          Tracker
	ctx, reqCtx context.Context
	t0          time.Time
	seq         int
	session     int // sessions prepared so far (the next session's number)
	events      chan event
	stop        levelStop // the running level's early stop (Sweep.Stop)
}

// deliver is the single goroutine that calls the Sink.
func (r *runner) deliver(done chan<- struct{}) {
	defer close(done)
	for ev := range r.events {
		switch {
		case ev.start != nil:
			r.s.Sink.LevelStart(*ev.start)
		case ev.result != nil:
			r.s.Sink.Result(ev.result)
		case ev.end != nil:
			r.s.Sink.LevelEnd(ev.endLvl, ev.end)
		}
	}
}

// feed starts preparing the level's n counted requests (warmup: its
// warm-up requests, from the Source's WarmupItems when it has them),
// numbered from the next sequence number, which it advances past them.
func (r *runner) feed(n int, warmup bool) (*feed, error) {
	prepare := r.s.Source.Items
	if ws, ok := r.s.Source.(WarmupSource); ok && warmup {
		prepare = ws.WarmupItems
	}
	seq0 := r.seq
	r.seq += n
	return newFeed(r.ctx, seq0, n, prepare)
}

// level runs one level. Every level that started gets its LevelEnd, even
// when preparing its requests failed or the sweep was cancelled, so a Sink
// never waits for a level that will not end.
func (r *runner) level(l Level) error {
	r.events <- event{start: &l}
	r.stop.begin(l, r.s.Stop)
	end := &record.LevelEnd{Run: r.s.Run, Level: l.Level}
	defer func() {
		r.stopNote(l, end)
		r.events <- event{end: end, endLvl: l}
	}()
	if r.s.Method == Users {
		// its warm-up is the first mean cycle of its people
		if err := r.users(l); err != nil {
			return err
		}
		r.levelEnd(l, end)
		return nil
	}
	if r.s.Method == Pool && l.Sessions == 0 {
		return r.poolLevel(l, end)
	}
	if r.s.Warmup > 0 {
		if err := r.warmup(l); err != nil {
			return err
		}
	}
	if l.Sessions > 0 && r.s.Sessions != nil {
		if err := r.sessions(l); err != nil {
			return err
		}
		r.levelEnd(l, end)
		return nil
	}
	f, err := r.feed(r.s.Method.Total(l), false)
	defer f.close()
	if err != nil {
		return err
	}
	for _, o := range r.s.Observe {
		o.LevelStart(r.ctx, l)
	}
	switch r.s.Method {
	case Batch:
		end.RepeatGPUMemoryMiB = r.batch(l, f)
	case Rate:
		r.rate(l, f)
	default:
		r.pool(l, f, l.Concurrency, false)
	}
	r.levelEnd(l, end)
	return f.Err()
}

// warmup sends the Sweep's warm-up requests before level l.
func (r *runner) warmup(l Level) error {
	f, err := r.feed(r.s.Warmup, true)
	defer f.close()
	if err != nil {
		return err
	}
	r.pool(l, f, min(max(l.Concurrency, 1), r.s.Warmup), true)
	return f.Err()
}

// poolLevel runs a pool level: its warm-ups (Method.Warmups: at least
// the C requests its workers start together) and then its counted
// requests, through one pool of C workers, so that the counted requests
// start where the workers left off rather than in a burst of their own.
// The observers start as the first counted request is taken.
func (r *runner) poolLevel(l Level, end *record.LevelEnd) error {
	nw, n := r.s.Method.Warmups(l, r.s.Warmup), r.s.Method.Total(l)
	if r.s.CountStartBurst {
		nw = r.s.Warmup
	}
	warmPrep := r.s.Source.Items
	if ws, ok := r.s.Source.(WarmupSource); ok {
		warmPrep = ws.WarmupItems
	}
	seq0 := r.seq
	r.seq += nw + n
	// the warm-ups are numbered first, the counted requests after them
	prepare := func(ctx context.Context, s0, k int) ([]workload.Item, error) {
		var out []workload.Item
		if w := min(k, seq0+nw-s0); w > 0 {
			items, err := warmPrep(ctx, s0, w)
			if err != nil {
				return nil, err
			}
			out, s0, k = append(out, items...), s0+w, k-w
		}
		if k > 0 {
			items, err := r.s.Source.Items(ctx, s0, k)
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
		}
		return out, nil
	}
	f, err := newFeed(r.ctx, seq0, nw+n, prepare)
	defer f.close()
	if err != nil {
		return err
	}
	var once sync.Once
	start := func() {
		for _, o := range r.s.Observe {
			o.LevelStart(r.ctx, l)
		}
	}
	r.poolEach(l, f, l.Concurrency, func(i int) bool {
		if i < nw {
			return true
		}
		once.Do(start)
		return false
	})
	once.Do(start) // a level cancelled in its warm-up still starts and ends
	r.levelEnd(l, end)
	return f.Err()
}

// levelEnd collects what the observers measured over level l into end.
func (r *runner) levelEnd(l Level, end *record.LevelEnd) {
	for _, o := range r.s.Observe {
		end.Fields = merge(end.Fields, o.LevelEnd(context.WithoutCancel(r.ctx), l))
	}
}

// send runs one request and hands its Result to the Sink; it returns when
// the request ended, from the run's start: StartNS + E2ENS, or the time Do
// returned for a request that failed before any chunk (E2ENS 0).
func (r *runner) send(l Level, it *workload.Item, seq, repeat int, warmup bool, scheduled *int64) (endNS int64) {
	endNS, _ = r.sendTurn(l, it, seq, repeat, warmup, scheduled)
	return endNS
}

// outcome is what the sender of a request learns of it: how long it took
// and the tokens it was answered with.
type outcome struct {
	e2e          time.Duration
	outputTokens int
}

// sendTurn is send that also returns the request's outcome (a person's
// next think time reads the answer).
func (r *runner) sendTurn(l Level, it *workload.Item, seq, repeat int, warmup bool, scheduled *int64) (endNS int64, out outcome) {
	res := &record.Result{
		Run: r.s.Run, Seq: seq, Level: l.Level, Repeat: repeat, Warmup: warmup,
		Class:                it.Class,
		ScheduledNS:          scheduled,
		ExpectedOutputTokens: it.Request.MaxTokens,
		ExpectedPromptTokens: it.ExpectedPromptTokens,
		Session:              it.Session, Turn: it.Turn, PrefixGroup: it.PrefixGroup,
	}
	// StartNS is set here and refined by Do to the moment the request was
	// written (Request.RunStart), so connection setup is not counted.
	it.Request.RunStart = r.t0
	res.StartNS = int64(r.clock.Now().Sub(r.t0))
	if r.s.RecordText && it.Request.Answer == nil {
		it.Request.Answer = &strings.Builder{}
	}
	r.s.Client.Do(r.reqCtx, &it.Request, res)
	if r.s.RecordText {
		res.PromptText, res.AnswerText = backend.FlatPrompt(&it.Request), it.Request.Answer.String()
	}
	endNS = res.StartNS + res.E2ENS
	if res.E2ENS <= 0 {
		endNS = int64(r.clock.Now().Sub(r.t0))
	}
	out.e2e = time.Duration(res.E2ENS)
	if res.OutputTokens != nil {
		out.outputTokens = *res.OutputTokens
	}
	r.stop.result(res)
	r.events <- event{result: res}
	return endNS, out
}

// pool sends f's requests with c workers, each taking the next request
// as its last one ends, until they run out or the sweep is cancelled.
func (r *runner) pool(l Level, f *feed, c int, warmup bool) {
	r.poolEach(l, f, c, func(int) bool { return warmup })
}

// poolEach is pool whose request i (its index in the level) is a warm-up
// where warmup(i) says so; warmup is called from the worker about to
// send request i.
func (r *runner) poolEach(l Level, f *feed, c int, warmup func(i int) bool) {
	wg := newGroup(r.tr)
	for range max(c, 1) {
		wg.Go(func() {
			for !r.halting() {
				it, i, ok := f.take()
				if !ok {
					return
				}
				r.send(l, it, f.seq0+i, l.Pass, warmup(i), nil)
			}
		})
	}
	wg.Wait()
}

// batch sends l.Repeats batches of l.Concurrency simultaneous requests
// from f; it returns the GPU memory after each batch that
// RepeatObservers measured.
func (r *runner) batch(l Level, f *feed) []*float64 {
	var mem []*float64
	for rep := range l.Repeats {
		if r.halting() {
			break
		}
		gate := make(chan struct{})
		wg := newGroup(r.tr)
		for range l.Concurrency {
			it, i, ok := f.take()
			if !ok {
				break
			}
			wg.Go(func() {
				<-gate
				r.send(l, it, f.seq0+i, rep, false, nil)
			})
		}
		close(gate) // release the whole batch at once
		wg.Wait()
		var m *float64
		for _, o := range r.s.Observe {
			if ro, ok := o.(RepeatObserver); ok && m == nil {
				m = ro.RepeatEnd(context.WithoutCancel(r.ctx), l, rep)
			}
		}
		mem = append(mem, m)
	}
	if allNil(mem) {
		return nil
	}
	return mem
}

// rate sends f's requests on the level's schedule (levelPacer; a trace's
// own times, read from each request as it is taken: feedPacer), at most
// l.Concurrency in flight; a request whose slot is not free is sent late,
// and its lag shows as StartNS − ScheduledNS.
func (r *runner) rate(l Level, f *feed) {
	p := &feedPacer{f: f, k: -1}
	if Arrival(l.Arrival) != Trace {
		l.Requests = f.n
		p.p = NewPacer(l, r.s.Seed)
	}
	r.paced(l, p, f.n, func(k int) func(int64) {
		it, i := p.it, p.i
		return func(scheduledNS int64) { r.send(l, it, f.seq0+i, l.Pass, false, &scheduledNS) }
	})
}

// feedPacer takes request k from its feed when the paced loop first asks
// about k (requests are taken in order, one at a time, on the loop's
// goroutine), stopping when the feed has none left. Its schedule is p's,
// or, when p is nil, the requests' own due times (a trace).
type feedPacer struct {
	f  *feed
	p  Pacer
	k  int
	it *workload.Item
	i  int
	ok bool
}

// at takes request k if it was not taken yet.
func (p *feedPacer) at(k int) bool {
	if k != p.k {
		p.k = k
		p.it, p.i, p.ok = p.f.take()
	}
	return p.ok
}

// Pace implements Pacer.
func (p *feedPacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	if !p.at(sent) {
		return 0, true
	}
	if p.p != nil {
		return p.p.Pace(elapsed, sent)
	}
	return max(p.it.Due-elapsed, 0), false
}

// Due implements Pacer.
func (p *feedPacer) Due(k int) time.Duration {
	if p.p != nil {
		return p.p.Due(k)
	}
	if !p.at(k) {
		return 0
	}
	return p.it.Due
}

// levelPacer is the schedule of a rate level's n arrivals (requests, or
// sessions and the single requests beside them): their own due times for
// a trace (TracePacer), else NewPacer's for a level of n arrivals.
func levelPacer(l Level, n int, due func(k int) time.Duration, seed int64) Pacer {
	if Arrival(l.Arrival) == Trace {
		offsets := make([]time.Duration, n)
		for k := range offsets {
			offsets[k] = due(k)
		}
		return TracePacer{Offsets: offsets}
	}
	l.Requests = n
	return NewPacer(l, seed)
}

// paced is the open loop of the rate method, apart from what it starts:
// for arrivals k = 0, 1, … until p stops or n have started, it waits until
// arrival k is due (on the Clock), takes one of l.Concurrency slots
// (waiting for one when all are taken: that wait is the lag the records
// show), calls begin(k) on the loop's goroutine (in order of k: it may
// take the arrival's request) and runs what it returns with scheduledNS
// on a goroutine of its own, which holds the slot until that returns.
// scheduledNS is when arrival k was due,
// from the run's start (Result.ScheduledNS). It returns when every launch
// returned, or stops starting new ones when the sweep is cancelled.
//
// The Pacer only schedules arrivals; launch decides what an arrival is.
// For the rate method it is one request; a caller that starts something
// longer on the same schedule (a multi-turn session whose turns follow on
// their own) passes a launch that runs it whole, and the slot then counts
// those in flight.
func (r *runner) paced(l Level, p Pacer, n int, begin func(k int) func(scheduledNS int64)) {
	slots := newSemaphore(r.tr, max(l.Concurrency, 1))
	wg := newGroup(r.tr)
	start := r.clock.Now()
	levelNS := int64(start.Sub(r.t0))
	for k := 0; k < n && !r.stop.halted(); k++ {
		elapsed := r.clock.Now().Sub(start)
		wait, stop := p.Pace(elapsed, k)
		if stop {
			break
		}
		if !r.clock.Sleep(r.ctx, wait) {
			break
		}
		sched := levelNS + int64(p.Due(k))
		if !slots.acquire(r.ctx) || r.ctx.Err() != nil {
			break
		}
		launch := begin(k)
		wg.Go(func() {
			defer slots.release()
			launch(sched)
		})
	}
	wg.Wait()
}

// merge copies the figures src measured into dst (allocating dst) and
// appends src's warnings.
func merge(dst, src *record.Observations) *record.Observations {
	if src == nil {
		return dst
	}
	if dst == nil {
		dst = &record.Observations{}
	}
	dst.MergeFigures(src)
	dst.Warnings = append(dst.Warnings, src.Warnings...)
	return dst
}

func allNil(xs []*float64) bool {
	for _, x := range xs {
		if x != nil {
			return false
		}
	}
	return true
}
