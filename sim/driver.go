package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// DefaultJitter is the mean of the clients' send jitter. Real clients do
// not send in lock-step: after a response ends, the client parses its last
// chunk, hands over the result and writes the next request, and the server
// parses it and applies the chat template before the scheduler sees it —
// a few milliseconds that differ from request to request (for a 500-token
// prompt, the HTTP round trip on loopback, JSON handling and tokenization
// each take from tenths of a millisecond to a couple of milliseconds). The
// driver draws each send's delay from an exponential distribution of this
// mean, from a generator seeded with Load.Seed, so every prediction is
// reproducible from the seed. The delay comes before the request is
// written: it is not part of the request's TTFT.
const DefaultJitter = 2 * time.Millisecond

// Workload is what every request of a level asks for.
type Workload struct {
	// PromptTokens and OutputTokens are the lengths in tokens; Images
	// the images per request.
	PromptTokens, OutputTokens, Images int
	// SharedPrefixTokens is a prefix all requests share (one group for
	// prefix caching); 0 = every prompt is unique from its first token.
	SharedPrefixTokens int
	// Name names the workload in batch records ("text",
	// "one_image_per_request"); "" = by Images.
	Name string
}

// Load is how a level sends its requests.
type Load struct {
	// Method is the load method, one of package load's (load.Methods):
	// pool, batch or rate.
	Method load.Method
	// Key is the value the level's Results carry in Level (0 =
	// Concurrency).
	Key int
	// Concurrency is the clients (pool), the batch size (batch) or the
	// cap on requests in flight (rate; 0 = none).
	Concurrency int
	// Requests is the counted requests (pool, rate); Repeats the batches
	// (batch); Warmup the uncounted requests sent first, by a pool of
	// min(Concurrency, Warmup) clients that finishes before the level.
	Requests, Repeats, Warmup int
	// Rate is requests per second (rate); Constant sends every 1/Rate
	// seconds instead of as a Poisson process.
	Rate     float64
	Constant bool
	// Jitter is the mean send jitter (0: DefaultJitter; negative: none).
	Jitter time.Duration
	// Seed seeds the jitter and the Poisson schedule.
	Seed uint64
	// Run labels the Results.
	Run string
}

// LevelResult is what a simulated level measured.
type LevelResult struct {
	// Results are the requests' records, warm-ups (marked) first, then
	// the counted ones in send order.
	Results []record.Result
	// Level is their summary (stats.SummarizeLevel) with the telemetry a
	// real server exports: peak KV-cache usage and preemptions (vLLM,
	// SGLang), peak requests running and waiting (all but Ollama).
	Level document.Level
	// Batch is the batch-method record (vllm-text-image-example.json
	// shape); nil for other methods.
	Batch *document.BatchRecord
	// Stats is the engine's state at the level's end, its peaks over the
	// counted part.
	Stats Stats
}

func (l *Load) validate() error {
	switch {
	case l.Method != load.Pool && l.Method != load.Batch && l.Method != load.Rate:
		return fmt.Errorf("%w: method %q (want pool, batch or rate)", ErrBadInput, l.Method)
	case l.Method != load.Rate && l.Concurrency < 1:
		return fmt.Errorf("%w: concurrency %d must be >= 1", ErrBadInput, l.Concurrency)
	case l.Method == load.Batch && l.Repeats < 1:
		return fmt.Errorf("%w: repeats %d must be >= 1", ErrBadInput, l.Repeats)
	case l.Method != load.Batch && l.Requests < 1:
		return fmt.Errorf("%w: requests %d must be >= 1", ErrBadInput, l.Requests)
	case l.Method == load.Rate && !(l.Rate > 0 && l.Rate < 1e9):
		return fmt.Errorf("%w: rate %v must be > 0", ErrBadInput, l.Rate)
	case l.Warmup < 0 || l.Concurrency < 0:
		return fmt.Errorf("%w: warmup and concurrency must be >= 0", ErrBadInput)
	}
	return nil
}

// client drives requests on an engine and turns their events into
// Results.
type client struct {
	e       *Engine
	w       Workload
	l       Load
	rng     *rand.Rand
	jitter  float64 // mean seconds
	results []record.Result
	// free holds, per finished request, the time its client is free.
	onDone func(i int, at time.Duration)
}

// RunLevel runs one level on e, from its current time, and returns what it
// measured. Levels of a sweep run one after another on the same engine.
func RunLevel(e *Engine, w Workload, l Load) (*LevelResult, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if w.PromptTokens < 1 || w.OutputTokens < 1 || w.Images < 0 {
		return nil, fmt.Errorf("%w: workload needs prompt and output tokens >= 1 (have %d, %d)", ErrBadInput, w.PromptTokens, w.OutputTokens)
	}
	if l.Key == 0 {
		l.Key = l.Concurrency
	}
	c := &client{e: e, w: w, l: l, rng: rand.New(rand.NewPCG(l.Seed, 0x51a1))}
	switch {
	case l.Jitter == 0:
		c.jitter = DefaultJitter.Seconds()
	case l.Jitter > 0:
		c.jitter = l.Jitter.Seconds()
	}
	if l.Warmup > 0 {
		c.pool(l.Warmup, min(max(l.Concurrency, 1), l.Warmup), true)
	}
	e.ResetPeaks()
	pre := e.Stats().Preemptions
	first := len(c.results)
	switch l.Method {
	case load.Pool:
		c.pool(l.Requests, l.Concurrency, false)
	case load.Batch:
		for rep := range l.Repeats {
			c.batch(rep)
		}
	case load.Rate:
		c.rate()
	}
	counted := c.results[first:]
	res := &LevelResult{Results: c.results, Stats: e.Stats()}
	res.Level = stats.SummarizeLevel(counted)
	c.telemetry(&res.Level, res.Stats, pre)
	if l.Method == load.Batch {
		b := stats.BatchRecord(c.workloadName(), l.Concurrency, w.OutputTokens, counted, nil)
		res.Batch = &b
	}
	return res, nil
}

func (c *client) workloadName() string {
	if c.w.Name != "" {
		return c.w.Name
	}
	if c.w.Images > 0 {
		return "one_image_per_request"
	}
	return "text"
}

// telemetry fills what a real server's metrics would give.
func (c *client) telemetry(l *document.Level, s Stats, pre int) {
	f := c.e.cfg.Backend
	if batched(f) {
		l.PeakKVCacheUsage = ptr(math.Round(s.PeakKVUsage*1000) / 1000)
		l.Preemptions = ptr(float64(s.Preemptions - pre))
	}
	if f != backend.Ollama {
		l.PeakRequestsRunning = ptr(float64(s.PeakRunning))
		l.PeakRequestsWaiting = ptr(float64(s.PeakWaiting))
	}
	if c.l.Method == load.Rate {
		l.RequestedRate = ptr(c.l.Rate)
	}
}

func ptr[T any](v T) *T { return &v }

// delay is one send jitter.
func (c *client) delay() time.Duration {
	if c.jitter == 0 {
		return 0
	}
	return time.Duration(c.rng.ExpFloat64() * c.jitter * 1e9)
}

// send submits request i of the results at time at.
func (c *client) send(at time.Duration, warmup bool, repeat int, scheduled *int64) error {
	i := len(c.results)
	c.results = append(c.results, record.Result{
		Run: c.l.Run, Seq: i, Level: c.l.Key, Repeat: repeat, Warmup: warmup,
		StartNS: int64(at), ScheduledNS: scheduled,
		ExpectedOutputTokens: c.w.OutputTokens, ExpectedPromptTokens: c.w.PromptTokens,
		ChunkOffsetsNS: make([]int64, 0, c.w.OutputTokens),
	})
	group := 0
	if c.w.SharedPrefixTokens > 0 {
		group = 1
	}
	req := Request{PromptTokens: c.w.PromptTokens, OutputTokens: c.w.OutputTokens, Images: c.w.Images,
		PrefixGroup: group, SharedPrefixTokens: c.w.SharedPrefixTokens}
	_, err := c.e.Submit(req, at, func(ev Event) { c.event(i, ev) })
	return err
}

// event records one engine event of request i.
func (c *client) event(i int, ev Event) {
	r := &c.results[i]
	off := int64(ev.At) - r.StartNS
	switch ev.Kind {
	case EventToken:
		if r.TTFTNS == nil {
			r.TTFTNS = ptr(off)
		}
		r.ChunkOffsetsNS = append(r.ChunkOffsetsNS, off)
	case EventFinished:
		r.E2ENS = off
		r.Status = 200
		r.FinishReason = "length"
		r.OutputTokens = ptr(ev.Generated)
		p := c.w.PromptTokens + c.w.Images*c.e.cfg.Model.ImageTokens
		r.PromptTokens = ptr(p)
		c.onDone(i, ev.At)
	case EventRejected:
		r.E2ENS = off
		r.Status = 400
		r.Reason = record.ReasonHTTP4xx
		r.Error = ev.Reason
		r.ChunkOffsetsNS = nil
		c.onDone(i, ev.At)
	}
}

// sendQueue is a min-heap of pending send times.
type sendQueue []time.Duration

func (q *sendQueue) push(t time.Duration) {
	*q = append(*q, t)
	s := *q
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (q *sendQueue) pop() time.Duration {
	s := *q
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l] < s[m] {
			m = l
		}
		if r < n && s[r] < s[m] {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*q = s
	return top
}

// run sends at the times the queue yields until n requests are sent, then
// waits for all of them, advancing the engine in between.
func (c *client) run(q *sendQueue, n int, inflight *int, send func(at time.Duration) error) {
	sent := 0
	for sent < n || *inflight > 0 {
		tEng, ok := c.e.NextEvent()
		if sent < n && len(*q) > 0 && (!ok || (*q)[0] <= tEng) {
			at := q.pop()
			c.e.AdvanceTo(at)
			if err := send(at); err == nil {
				*inflight++
			}
			sent++
			continue
		}
		if !ok {
			return // nothing can happen any more
		}
		c.e.AdvanceTo(tEng)
	}
}

// pool runs n requests with k clients.
func (c *client) pool(n, k int, warmup bool) {
	var q sendQueue
	now := c.e.Now()
	for range k {
		q.push(now + c.delay())
	}
	inflight := 0
	c.onDone = func(int, time.Duration) {
		inflight--
		q.push(c.e.Now() + c.delay())
	}
	c.run(&q, n, &inflight, func(at time.Duration) error { return c.send(at, warmup, 0, nil) })
}

// batch sends one batch and waits for it.
func (c *client) batch(rep int) {
	var q sendQueue
	now := c.e.Now()
	for range c.l.Concurrency {
		q.push(now + c.delay())
	}
	inflight := 0
	c.onDone = func(int, time.Duration) { inflight-- }
	c.run(&q, c.l.Concurrency, &inflight, func(at time.Duration) error { return c.send(at, false, rep, nil) })
}

// rate sends on a Poisson (or constant) schedule, at most Concurrency in
// flight; a request whose turn comes while the cap is reached goes when a
// request ends, and records when it was due.
func (c *client) rate() {
	start := c.e.Now()
	due := make([]time.Duration, c.l.Requests)
	t := 0.0
	for i := range due {
		if c.l.Constant {
			t = float64(i) / c.l.Rate // as load.ConstantPacer: k/Rate
		}
		due[i] = start + time.Duration(math.Round(t*1e9))
		if !c.l.Constant {
			t += c.rng.ExpFloat64() / c.l.Rate
		}
	}
	limit := c.l.Concurrency
	if limit <= 0 {
		limit = math.MaxInt
	}
	inflight, next := 0, 0
	var waiting sendQueue // sends held back by the cap, by due time
	c.onDone = func(int, time.Duration) {
		inflight--
		if len(waiting) > 0 {
			d := waiting.pop()
			c.submitRate(c.e.Now(), d)
			inflight++
		}
	}
	for next < len(due) || inflight > 0 {
		tEng, ok := c.e.NextEvent()
		if next < len(due) && (!ok || due[next] <= tEng) {
			c.e.AdvanceTo(due[next])
			if inflight < limit {
				c.submitRate(due[next], due[next])
				inflight++
			} else {
				waiting.push(due[next])
			}
			next++
			continue
		}
		if !ok {
			return
		}
		c.e.AdvanceTo(tEng)
	}
}

func (c *client) submitRate(at, due time.Duration) {
	d := int64(due)
	_ = c.send(at, false, 0, &d)
}
