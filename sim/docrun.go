package sim

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
)

// Metrics a fit and a prediction compare, by their document names.
const (
	MetricThroughput = "throughput_tok_s"
	MetricTTFT       = "ttft_p50_ms"
	MetricTPOT       = "tpot_p50_ms"
	MetricAggregate  = "aggregate_output_tok_s"
)

// Target is one measured figure of a level.
type Target struct {
	Metric   string  `json:"metric"`
	Measured float64 `json:"measured"`
}

// Case is one measured level: how it was loaded and what it measured.
type Case struct {
	Workload Workload
	Load     Load
	Targets  []Target
}

// RunSpec is a document's run made simulable: the server as the document
// describes it and its measured levels.
type RunSpec struct {
	// Label names the run (the document's label, or the batch records'
	// runtime).
	Label string
	// Spec is the server to simulate.
	Spec Spec
	// FreeModel says that the model did not resolve to a preset: its
	// bytes read per step and FLOPs per token are unknown.
	FreeModel bool
	// SlotsKnown says whether the document recorded the slot count
	// (llama.cpp, Ollama).
	SlotsKnown bool
	// budgetKnown says whether the document recorded
	// max_num_batched_tokens (vLLM, SGLang).
	budgetKnown bool
	// Cases are the levels, in document order.
	Cases []Case
	// Notes say what was assumed where the document is silent.
	Notes []string
}

// textPromptTokens is the prompt length of servebench's text scenario
// (workload.Text), what "short unique prompts" of a batch document are
// taken to be.
const textPromptTokens = 32

// RunSpecs turns every run (sweep shape) or the batch records (batch
// shape) of doc into RunSpecs. A run of a backend the engine does not
// simulate, or on a GPU not in the catalog, is an error.
func RunSpecs(doc *document.Document) ([]RunSpec, error) {
	var out []RunSpec
	for i := range doc.Runs {
		rs, err := sweepRun(doc, &doc.Runs[i])
		if err != nil {
			return nil, fmt.Errorf("runs[%d] (%s): %w", i, doc.Runs[i].Label, err)
		}
		out = append(out, rs)
	}
	if len(doc.Records) > 0 {
		rs, err := batchRun(doc)
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		out = append(out, rs)
	}
	return out, nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func sweepRun(doc *document.Document, run *document.Run) (RunSpec, error) {
	fam, err := ParseKind(run.Backend)
	if err != nil {
		return RunSpec{}, err
	}
	rs := RunSpec{Label: run.Label}
	s := &rs.Spec
	s.Backend = fam
	s.GPU = deref(run.GPU, deref(doc.GPU, ""))
	s.GPUGiB = deref(run.GPUGiB, 0)
	if _, err := LookupGPU(s.GPU); err != nil {
		return RunSpec{}, err
	}
	s.Model = run.Model
	if _, _, err := resolveModel(run.Model); err != nil {
		rs.FreeModel = true
		rs.Notes = append(rs.Notes, fmt.Sprintf("model %q resolves to no preset: bytes read per step and FLOPs per token are fitted as free parameters", run.Model))
	}
	s.KVDtype = deref(run.KVCache.Dtype, "")
	if s.KVDtype == "" {
		s.KVDtype = labelKV(run.Label)
		if s.KVDtype != "" {
			rs.Notes = append(rs.Notes, fmt.Sprintf("KV dtype %s read from the label", s.KVDtype))
		}
	}
	s.Server.KVBlocks = deref(run.KVCache.Blocks, 0)
	s.Server.BlockSize = deref(run.KVCache.BlockSize, 0)
	s.GPUMemoryUtilization = deref(run.KVCache.GPUMemoryUtilization, 0)
	applyProfile(s, run.Profile)
	rs.SlotsKnown = run.Profile != nil && run.Profile.Parallel != nil
	rs.budgetKnown = run.Profile != nil && run.Profile.MaxNumBatchedTokens != nil
	if run.Server != nil && run.Server.Slots != nil && !rs.SlotsKnown {
		s.Server.Slots, rs.SlotsKnown = *run.Server.Slots, true
	}
	longest := 0
	for _, l := range run.Levels {
		c := Case{
			Workload: Workload{PromptTokens: run.PromptTokens, OutputTokens: run.MaxTokens},
			Load:     Load{Method: load.Pool, Key: l.Concurrency, Concurrency: l.Concurrency, Requests: l.Requests, Run: run.Label},
		}
		c.Workload.PromptTokens = meanTokens(l.MeanPromptTokens, c.Workload.PromptTokens)
		if load.Method(run.Method) == load.Rate && l.RequestedRate != nil {
			c.Load.Method, c.Load.Rate = load.Rate, *l.RequestedRate
		}
		for _, t := range []struct {
			m string
			v *float64
		}{{MetricThroughput, l.ThroughputTokS}, {MetricTTFT, l.TTFTP50Ms}, {MetricTPOT, l.TPOTP50Ms}} {
			if t.v != nil && *t.v > 0 {
				c.Targets = append(c.Targets, Target{t.m, *t.v})
			}
		}
		longest = max(longest, c.Workload.PromptTokens+c.Workload.OutputTokens)
		rs.Cases = append(rs.Cases, c)
	}
	if err := checkCases(run.Label, rs.Cases); err != nil {
		return RunSpec{}, err
	}
	if !batched(fam) && s.Server.SlotContext == 0 {
		// The document does not record -c / num_ctx: give each slot room
		// for the longest request, padded as llama.cpp pads.
		s.Server.SlotContext = (longest + 255) / 256 * 256
		rs.Notes = append(rs.Notes, fmt.Sprintf("slot context not recorded: %d cells per slot assumed (the longest request, padded to 256)", s.Server.SlotContext))
	}
	return rs, nil
}

// meanTokens is a level's mean prompt length rounded, where it is one a
// request can have (1 to limits.MaxTokens), or else def.
func meanTokens(mean *float64, def int) int {
	if mean == nil || !(*mean >= 1 && *mean <= limits.MaxTokens) {
		return def
	}
	return int(math.Round(*mean))
}

// checkCases is checkCase on each of cases.
func checkCases(label string, cases []Case) error {
	for _, c := range cases {
		if err := checkCase(label, c); err != nil {
			return err
		}
	}
	return nil
}

// checkCase bounds the counts a document gives a case before the
// simulator sizes anything from them (a request's chunk offsets, a
// level's results): tokens per request at most limits.MaxTokens, requests
// per level at most limits.MaxRequests. The sum of two bounded token
// counts cannot overflow.
func checkCase(label string, c Case) error {
	w, l := c.Workload, c.Load
	for _, f := range []struct {
		name string
		v    int
		min  int
		max  int
	}{
		{"prompt_tokens", w.PromptTokens, 0, limits.MaxTokens},
		{"max_tokens", w.OutputTokens, 0, limits.MaxTokens},
		{"requests", l.Requests, 0, limits.MaxRequests},
		{"repeats", l.Repeats, 0, limits.MaxRepeats},
		{"concurrency", l.Concurrency, 0, limits.MaxRequests},
	} {
		if f.v < f.min || f.v > f.max {
			return fmt.Errorf("%w: run %q: %s %d: want %d to %d", ErrBadInput, label, f.name, f.v, f.min, f.max)
		}
	}
	return nil
}

// labelKV reads a KV dtype from a run label ("llamacpp-q8kv-chat").
func labelKV(label string) string {
	l := strings.ToLower(label)
	for _, k := range []struct{ word, dtype string }{{"q8kv", "q8_0"}, {"q4kv", "q4_0"}, {"fp8kv", "fp8"}, {"f16kv", "f16"}, {"fp16kv", "fp16"}} {
		if strings.Contains(l, k.word) {
			return k.dtype
		}
	}
	return ""
}

// applyProfile copies a document's server profile into s.
func applyProfile(s *Spec, p *record.Profile) {
	if p == nil {
		return
	}
	sv := &s.Server
	sv.MaxModelLen = deref(p.MaxModelLen, sv.MaxModelLen)
	sv.MaxNumSeqs = deref(p.MaxNumSeqs, sv.MaxNumSeqs)
	sv.MaxNumBatchedTokens = deref(p.MaxNumBatchedTokens, sv.MaxNumBatchedTokens)
	s.GPUMemoryUtilization = deref(p.GPUMemoryUtilization, s.GPUMemoryUtilization)
	if p.CUDAGraphs != nil {
		s.EnforceEager = !*p.CUDAGraphs
	}
	if p.PrefixCaching != nil {
		s.NoPrefixCaching = !*p.PrefixCaching
	}
	if p.KVCacheDtype != nil && s.KVDtype == "" {
		s.KVDtype = *p.KVCacheDtype
	}
	sv.Slots = deref(p.Parallel, sv.Slots)
	s.TensorParallel = deref(p.TensorParallelSize, s.TensorParallel)
	if p.ContextLength != nil {
		sv.SlotContext = *p.ContextLength
		if s.Backend == backend.LlamaCpp && sv.Slots > 0 {
			sv.SlotContext /= sv.Slots
		}
	}
}

// batchRun is the batch records of doc as one run.
func batchRun(doc *document.Document) (RunSpec, error) {
	rt := strings.ToLower(deref(doc.Runtime, ""))
	fam := backend.VLLM
	rs := RunSpec{Label: deref(doc.Runtime, "records")}
	switch {
	case strings.Contains(rt, "sglang"):
		fam = backend.SGLang
	case strings.Contains(rt, "vllm"):
	default:
		rs.Notes = append(rs.Notes, fmt.Sprintf("runtime %q not recognised: simulated as vLLM", deref(doc.Runtime, "")))
	}
	s := &rs.Spec
	s.Backend = fam
	s.GPU = deref(doc.GPU, "")
	if _, err := LookupGPU(s.GPU); err != nil {
		return RunSpec{}, err
	}
	applyProfile(s, doc.Profile)
	rs.budgetKnown = doc.Profile != nil && doc.Profile.MaxNumBatchedTokens != nil
	rs.FreeModel = true
	rs.Notes = append(rs.Notes, "the batch document names no model: bytes read per step and FLOPs per token are fitted as free parameters")
	rs.Notes = append(rs.Notes, fmt.Sprintf("prompts taken as %d tokens (servebench's text scenario; the document says only \"short unique prompts\")", textPromptTokens))
	for _, r := range doc.Records {
		w := Workload{PromptTokens: textPromptTokens, OutputTokens: r.OutputTokensPerRequest, Name: r.Workload}
		if strings.Contains(strings.ToLower(r.Workload), "image") {
			w.Images = 1
		}
		c := Case{Workload: w, Load: Load{Method: load.Batch, Key: r.Concurrency, Concurrency: r.Concurrency, Repeats: max(r.Repeats, 1), Run: r.Label}}
		if err := checkCase(r.Label, c); err != nil {
			return RunSpec{}, err
		}
		if r.AggregateOutputTokS > 0 {
			c.Targets = append(c.Targets, Target{MetricAggregate, r.AggregateOutputTokS})
		}
		rs.Cases = append(rs.Cases, c)
	}
	return rs, nil
}

// metric reads a metric from a simulated level.
func metric(lr *LevelResult, m string) (float64, bool) {
	switch m {
	case MetricThroughput:
		return derefOK(lr.Level.ThroughputTokS)
	case MetricTTFT:
		return derefOK(lr.Level.TTFTP50Ms)
	case MetricTPOT:
		return derefOK(lr.Level.TPOTP50Ms)
	case MetricAggregate:
		if lr.Batch != nil {
			return lr.Batch.AggregateOutputTokS, true
		}
	}
	return 0, false
}

func derefOK(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Residual is a prediction held against a measurement.
type Residual struct {
	// Level is the level's key (its concurrency).
	Level int `json:"level"`
	// Workload names the level's workload where the document does (a
	// batch document's "text" and "image" records share a concurrency).
	Workload  string  `json:"workload,omitempty"`
	Metric    string  `json:"metric"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	// ErrorPct is (predicted − measured) / measured × 100.
	ErrorPct float64 `json:"error_pct"`
	// Fitted says the figure was one the fit aimed at.
	Fitted bool `json:"fitted"`
}

// Predict simulates every case of rs with cfg (each level on a fresh
// engine, as after a server's idle pause between levels) and holds the
// predictions against the measurements. The cases are independent (each
// its own engine, virtual clock and seed), so they run side by side on
// the machine's cores; the result does not depend on how they are
// scheduled.
func Predict(cfg Config, rs *RunSpec, seed uint64) ([]*LevelResult, []Residual, error) {
	out := make([]*LevelResult, len(rs.Cases))
	errs := make([]error, len(rs.Cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rs.Cases)) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = predictCase(cfg, &rs.Cases[i], seed+uint64(i))
			}
		})
	}
	for i := range rs.Cases {
		next <- i
	}
	close(next)
	wg.Wait()
	var res []Residual
	for i, c := range rs.Cases {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		lr := out[i]
		for _, t := range c.Targets {
			p, ok := metric(lr, t.Metric)
			if !ok {
				return nil, nil, fmt.Errorf("%w: level %d predicted no %s", errNoPrediction, c.Load.Key, t.Metric)
			}
			res = append(res, Residual{Level: c.Load.Key, Workload: c.Workload.Name, Metric: t.Metric, Measured: t.Measured, Predicted: p,
				ErrorPct: (p - t.Measured) / t.Measured * 100})
		}
	}
	return out, res, nil
}

// predictCase simulates case c on a fresh engine with the given seed.
func predictCase(cfg Config, c *Case, seed uint64) (*LevelResult, error) {
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l := c.Load
	l.Seed = seed
	return RunLevel(e, c.Workload, l)
}

// errNoPrediction: a simulated level has no value for a metric (every
// request failed).
var errNoPrediction = errors.New("no prediction")
