package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/servebench/servebench/backend"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// DefaultJitter is the mean of the clients' send jitter. Real clients do
// not send in lock-step: after a response ends, the client parses its last
// chunk, hands over the result and writes the next request, and the server
// parses it and applies the chat template before the scheduler sees it —
// a few milliseconds that differ from request to request (for a 500-token
// prompt, the HTTP round trip on loopback, JSON handling and tokenization
// each take from tenths of a millisecond to a couple of milliseconds). The
// driver draws each send's delay from an exponential distribution of this
// mean, keyed by Load.Seed and the request's number (Virtual.delay), so
// every prediction is reproducible from the seed. The delay comes before the request is
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
	// (batch); Warmup the uncounted requests sent first. A pool level's
	// start burst (its C clients' first requests) is counted, as in the
	// documents RunLevel predicts (load.Sweep.CountStartBurst), where
	// `run` leaves it out (load.Method.Warmups).
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

// RunLevel runs one level on e, from its current time, and returns what it
// measured. Levels of a sweep run one after another on the same engine.
// It is the engine-only path (fitting, planning): package load's method
// drives the level, as for `run --backend sim`, on the engine's virtual
// clock (Virtual), with every request of the level asking for w. A pool
// level counts from its first send (load.Sweep.CountStartBurst), as the
// documents that sim fit and the accuracy test predict measured it.
func RunLevel(e *Engine, w Workload, l Load) (*LevelResult, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	if w.PromptTokens < 1 || w.OutputTokens < 1 || w.Images < 0 {
		return nil, fmt.Errorf("%w: workload needs prompt and output tokens >= 1 (have %d, %d)", ErrBadInput, w.PromptTokens, w.OutputTokens)
	}
	k, err := runLevel(e, fixedSource{w}, w.shape, l)
	if err != nil {
		return nil, err
	}
	return k.result(e, &w, l), nil
}

// RunLevelFrom runs one level as RunLevel does, with each request taken
// from src and its engine request from shape instead of one fixed
// Workload: per-request lengths drawn from a dataset, say. A batch level
// gets no batch record, which names one workload.
func RunLevelFrom(e *Engine, src load.Source, shape func(*backend.Request, *record.Result) Request, l Load) (*LevelResult, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	k, err := runLevel(e, src, shape, l)
	if err != nil {
		return nil, err
	}
	return k.result(e, nil, l), nil
}

// runLevel drives one level of l on e's virtual clock with package
// load's method, src's requests shaped for the engine by shape.
func runLevel(e *Engine, src load.Source, shape func(*backend.Request, *record.Result) Request, l Load) (*levelSink, error) {
	v := NewVirtual(e, VirtualOptions{Seed: int64(l.Seed), Jitter: l.Jitter, Shape: shape})
	k := &levelSink{}
	sw := &load.Sweep{Run: l.Run, Method: l.Method, Levels: []load.Level{l.plan()}, Warmup: l.Warmup, CountStartBurst: true, Seed: int64(l.Seed),
		Client: v.Client(), Source: src, Sink: k, Observe: []load.Observer{v.Observer()}, Clock: v,
		Start: VirtualBase, FirstSeq: 0}
	if _, err := sw.Do(context.Background()); err != nil {
		return nil, err
	}
	return k, nil
}

// plan is the load.Level l asks for.
func (l *Load) plan() load.Level {
	p := load.Level{Level: l.Key, Concurrency: l.Concurrency, Requests: l.Requests, Repeats: l.Repeats}
	if p.Level == 0 {
		p.Level = l.Concurrency
	}
	if l.Method == load.Rate {
		p.Rate, p.Arrival = l.Rate, string(load.Poisson)
		if l.Constant {
			p.Arrival = string(load.Constant)
		}
		if p.Concurrency <= 0 {
			p.Concurrency = l.Requests // no cap: at most every request in flight
		}
	}
	return p
}

// shape is the engine request of every request of w.
func (w Workload) shape(*backend.Request, *record.Result) Request {
	r := Request{PromptTokens: w.PromptTokens, OutputTokens: w.OutputTokens, Images: w.Images, SharedPrefixTokens: w.SharedPrefixTokens}
	if w.SharedPrefixTokens > 0 {
		r.PrefixGroup = 1
	}
	return r
}

// fixedSource prepares requests that all ask for one Workload; their
// texts are empty, since Workload.shape gives the engine their lengths.
type fixedSource struct{ w Workload }

// Items implements load.Source.
func (s fixedSource) Items(_ context.Context, _, n int) ([]workload.Item, error) {
	items := make([]workload.Item, n)
	for i := range items {
		items[i] = workload.Item{Request: backend.Request{MaxTokens: s.w.OutputTokens}, ExpectedPromptTokens: s.w.PromptTokens}
	}
	return items, nil
}

// levelSink collects one level's Results and its level_end telemetry.
type levelSink struct{ load.Collect }

// result is the LevelResult of what k collected: the Results in send
// order, their summary with the server's telemetry, and the batch record
// of a batch level of one workload (w; nil when requests differ).
func (k *levelSink) result(e *Engine, w *Workload, l Load) *LevelResult {
	slices.SortFunc(k.Results, func(a, b record.Result) int { return a.Seq - b.Seq })
	first := 0
	for first < len(k.Results) && k.Results[first].Warmup {
		first++
	}
	counted := k.Results[first:]
	res := &LevelResult{Results: k.Results, Stats: e.Stats()}
	res.Level = stats.SummarizeLevel(counted)
	if k.End != nil {
		stats.MergeLevel(&res.Level, k.End)
	}
	if l.Method == load.Rate {
		res.Level.RequestedRate = ptr(l.Rate)
	}
	if l.Method == load.Batch && w != nil {
		b := stats.BatchRecord(w.workloadName(), l.Concurrency, w.OutputTokens, counted, nil)
		res.Batch = &b
	}
	return res
}

func (w Workload) workloadName() string {
	if w.Name != "" {
		return w.Name
	}
	if w.Images > 0 {
		return "one_image_per_request"
	}
	return "text"
}
