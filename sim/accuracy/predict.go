package main

import (
	"errors"
	"fmt"

	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/sim"
)

// Class is a GPU market class, the grouping the accuracy targets use.
type Class string

// GPU classes.
const (
	Consumer    Class = sim.ClassConsumer
	Workstation Class = sim.ClassWorkstation
	Datacenter  Class = sim.ClassDatacenter
)

// Classes lists the classes in report order.
var Classes = []Class{Consumer, Workstation, Datacenter}

// classOf is the class of a board named as NVIDIA names it (sim.GPUClass,
// the mapping a prediction's accuracy claim uses).
func classOf(gpu string) Class { return Class(sim.GPUClass(gpu)) }

// Metric is a figure the accuracy page compares.
type Metric string

// Compared metrics.
const (
	Throughput Metric = "throughput" // output tok/s, else total tok/s
	TPOT       Metric = "tpot"       // mean where published, else median
	TTFT       Metric = "ttft"       // mean where published, else median
	Prefill    Metric = "prefill"    // llama-bench's prompt tok/s (ppN)
)

// Metrics lists the metrics in report order.
var Metrics = []Metric{Throughput, TPOT, TTFT, Prefill}

// Point is one measured figure and its prediction.
type Point struct {
	Metric    Metric
	Stat      string // "output", "total", "mean", "median", "prompt"
	Measured  float64
	Predicted float64
}

// Err is (predicted − measured) / measured.
func (p Point) Err() float64 { return (p.Predicted - p.Measured) / p.Measured }

// Outcome is a case run through the simulator, or the reason it was not.
type Outcome struct {
	Case   Case
	Class  Class
	Points []Point
	Skip   string
}

// seed fixes the simulator's client jitter and arrivals, so the page is
// a function of the corpus and the model.
const seed = 1

// maxRequests bounds a simulated level (a burst of more requests is
// rarely published; the bound keeps the page's regeneration fast).
const maxRequests = 2000

// Run predicts every case with the simulator's defaults and the catalog
// (no fit): the same Spec → Config → engine path `run --backend sim`
// uses.
func Run(cases []Case) []Outcome {
	out := make([]Outcome, 0, len(cases))
	for _, c := range cases {
		o := Outcome{Case: c, Class: classOf(c.GPU)}
		pts, err := predict(c)
		if err != nil {
			o.Skip = err.Error()
		}
		o.Points = pts
		out = append(out, o)
	}
	return out
}

// errSkip marks a case the simulator cannot run as published.
var errSkip = errors.New("skipped")

// spec is the simulator's server for c, or why there is none.
func spec(c Case) (sim.Spec, error) {
	fam, err := sim.ParseKind(c.Server)
	switch {
	case err != nil:
		return sim.Spec{}, fmt.Errorf("%w: server %q is not a simulated family", errSkip, c.Server)
	case c.GPUCount != c.TP:
		return sim.Spec{}, fmt.Errorf("%w: %d GPUs at tp %d: the simulator splits a model over its GPUs by tensor parallelism only", errSkip, c.GPUCount, c.TP)
	case c.Preset == "":
		return sim.Spec{}, fmt.Errorf("%w: model %q has no preset", errSkip, c.Model)
	}
	// The catalog resolves a name to one board or refuses it (never a
	// neighbour), so a refusal is the only skip.
	if _, err := hardware.Lookup(c.GPU); err != nil {
		return sim.Spec{}, fmt.Errorf("%w: GPU %q not in catalog", errSkip, c.GPU)
	}
	s := sim.Spec{Backend: fam, GPU: c.GPU, Model: c.Preset, Quant: c.Quant, KVDtype: c.KVDtype,
		GPUMemoryUtilization: c.GPUMemoryUtilization, EnforceEager: c.EnforceEager, FlashAttention: c.FlashAttention, TensorParallel: c.TP}
	s.Server.MaxModelLen = c.MaxModelLen
	s.Server.MaxNumSeqs = c.MaxNumSeqs
	s.Server.MaxNumBatchedTokens = c.MaxNumBatchedTokens
	s.Server.Slots = c.Slots
	if c.Slots > 0 && c.CtxSize > 0 {
		s.Server.SlotContext = c.CtxSize / c.Slots
	}
	return s, nil
}

// llamaBench says the case is a llama-bench test (no HTTP server: ppN
// times the prompt alone, tgN the generation alone).
func (c Case) llamaBench() bool { return c.Tool == "llama-bench" }

// level is the simulator's workload and load for c.
func level(c Case) (sim.Workload, sim.Load) {
	w := sim.Workload{PromptTokens: max(c.PromptTokens, 1), OutputTokens: max(c.OutputTokens, 1)}
	n := c.NumRequests
	l := sim.Load{Method: load.Pool, Concurrency: 1, Seed: seed, Run: c.ID}
	switch c.Regime {
	case SingleStream:
		n = cmp0(n, 10)
	case ClosedLoop:
		l.Concurrency = c.Concurrency
		n = cmp0(n, max(5*c.Concurrency, 10))
	case OpenRate:
		l.Method, l.Rate, l.Concurrency = load.Rate, c.Rate, c.Concurrency
		n = cmp0(n, max(int(60*c.Rate), 50))
	case Burst:
		l.Method, l.Concurrency, l.Repeats = load.Batch, min(c.NumRequests, maxRequests), 1
	}
	l.Requests = min(n, maxRequests)
	if c.llamaBench() {
		l.Requests = 3
	}
	return w, l
}

func cmp0(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// newEngine is the simulated server of c, idle, or why there is none
// (an errSkip).
func newEngine(c Case) (*sim.Engine, error) {
	s, err := spec(c)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSkip, err)
	}
	e, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSkip, err)
	}
	return e, nil
}

// predict runs c and pairs each published figure with its prediction.
func predict(c Case) ([]Point, error) {
	e, err := newEngine(c)
	if err != nil {
		return nil, err
	}
	cfg := e.Config()
	w, l := level(c)
	var lr *sim.LevelResult
	law := lengthLaw(c)
	switch outCap, warms := c.warmsFirstPrompt(); {
	case warms:
		prompts, outputs := drawLengths(c, law, l.Requests)
		lr, err = runWarmed(e, prompts, outputs, outCap, l)
	case law == FixedLengths:
		lr, err = sim.RunLevel(e, w, l)
	default:
		prompts, outputs := drawLengths(c, law, l.Requests)
		lr, err = runDrawn(e, prompts, outputs, l)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSkip, err)
	}
	if lr.Level.Errors > 0 {
		return nil, fmt.Errorf("%w: %d of %d simulated requests failed", errSkip, lr.Level.Errors, lr.Level.Requests+lr.Level.Errors)
	}
	return points(c, lr, cfg.Params.RequestLatency.Seconds()*1000), nil
}

// points pairs the figures c publishes with the simulated level's. A
// llama-bench tgN and a published per-request decode rate are compared
// with the simulated decode rate (1000 / mean TPOT), and a ppN with the
// prompt over the prefill time (TTFT less the simulated request latency),
// since llama-bench times the kernels alone.
func points(c Case, lr *sim.LevelResult, reqLatencyMs float64) []Point {
	m, l := c.Measured, lr.Level
	var pts []Point
	add := func(metric Metric, stat string, meas *float64, pred *float64) {
		if meas != nil && pred != nil && *pred > 0 {
			pts = append(pts, Point{Metric: metric, Stat: stat, Measured: *meas, Predicted: *pred})
		}
	}
	decode := m.DecodeTokS
	if c.llamaBench() {
		decode = m.OutputTokS
	}
	if decode != nil && l.TPOTMeanMs != nil {
		add(Throughput, "decode", decode, ptr(1000 / *l.TPOTMeanMs))
	}
	if m.PromptTokS != nil && l.TTFTMeanMs != nil && *l.TTFTMeanMs > reqLatencyMs {
		add(Prefill, "prompt", m.PromptTokS, ptr(float64(w0(c.PromptTokens))/((*l.TTFTMeanMs-reqLatencyMs)/1000)))
	}
	if c.llamaBench() {
		return pts
	}
	if m.OutputTokS != nil {
		add(Throughput, "output", m.OutputTokS, l.ThroughputTokS)
	} else if m.TotalTokS != nil && l.ThroughputTokS != nil && c.OutputTokens > 0 {
		add(Throughput, "total", m.TotalTokS, ptr(*l.ThroughputTokS*float64(c.PromptTokens+c.OutputTokens)/float64(c.OutputTokens)))
	}
	if m.TPOTMeanMs != nil {
		add(TPOT, "mean", m.TPOTMeanMs, l.TPOTMeanMs)
	} else {
		add(TPOT, "median", m.TPOTMedianMs, l.TPOTP50Ms)
	}
	if m.TTFTMeanMs != nil {
		add(TTFT, "mean", m.TTFTMeanMs, l.TTFTMeanMs)
	} else {
		add(TTFT, "median", m.TTFTMedianMs, l.TTFTP50Ms)
	}
	return pts
}

func w0(n int) int { return max(n, 1) }

func ptr(v float64) *float64 { return &v }
