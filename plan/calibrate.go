package plan

import (
	"cmp"
	"fmt"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/serverlog"
)

// Given says which Inputs the caller set on purpose (a flag given, a
// profile key set). Calibrate takes what the server states about its own
// configuration only for inputs not given, so that a server's log never
// overrides what a person asked for; Plan does not look at it.
type Given struct {
	// GPUMemory covers GPUName and GPUGiB.
	GPUMemory     bool
	Utilization   bool
	Context       bool
	Parallel      bool
	KVDtypes      bool
	BlockSize     bool
	VLLMVersion   bool
	GraphEstimate bool
	EnforceEager  bool
}

// Observed is what a real server reported about itself, for Calibrate:
// its start-up log as package serverlog read it, and the figures a live
// server gave.
type Observed struct {
	// Source names where the figures came from ("log vllm.log", a URL); it
	// goes into the record.
	Source string
	// Log is the capacity and configuration the server's log states; nil
	// without a log.
	Log *serverlog.Capacity
	// Live holds what a live server reported; the zero value without one.
	Live Live
	// Notes are what the gathering found worth saying; Calibrate's notes
	// give them after the log's own.
	Notes []string
}

// Live is what a live server reports: vLLM's /metrics cache_config_info,
// Ollama's /api/ps. Nil and "" fields were not reported.
type Live struct {
	// Tokens is the KV capacity: vLLM's num_gpu_blocks × block_size.
	Tokens *int
	// BlockSize, KVDtype and Utilization are vLLM's cache settings.
	BlockSize   *int
	KVDtype     string
	Utilization *float64
	// TotalMiB is the memory Ollama's /api/ps gives the loaded model;
	// ContextPerSlot its context_length.
	TotalMiB       *float64
	ContextPerSlot *int
}

// Calibration is a prediction held against what a server reported.
type Calibration struct {
	// Plan is the plan of the one KV dtype compared, with the inputs the
	// server stated filled in.
	Plan *Result
	// Comparison holds the calibration record and the error per figure.
	Comparison Comparison
	// Notes say what the server's log tells of its attention backend and
	// CUDA graphs, and which inputs were taken from the server.
	Notes []string
}

// NoCapacityError is Calibrate's error when the server reported no figure
// the prediction can be held against.
type NoCapacityError struct {
	// Source is Observed.Source; Reason says what was missing.
	Source, Reason string
}

// Error is "<source>: <reason>".
func (e *NoCapacityError) Error() string { return e.Source + ": " + e.Reason }

// Calibrate is servebench's one calibration: it plans in for the server's
// own configuration and holds the prediction against the capacity the
// server reported. Inputs the caller did not give (in.Given) are taken
// from what the server states where it states them: from its log the GPU
// memory, and for vLLM the utilization, version and CUDA-graph charge, for
// llama.cpp and Ollama the slots, context and KV type; from a live vLLM
// its block size, KV dtype and utilization, from a live Ollama its
// context per slot. Only the first KV dtype is compared, and calibration
// corrections are not applied: it is the model itself that is held to
// the server. The actual tokens are what the server reported (tokens,
// else blocks × block size, else cells); with only a KV or total size
// the record's error is on that size and its source says so.
func Calibrate(in Inputs, obs Observed) (*Calibration, error) {
	notes := append(logNotes(obs.Log), obs.Notes...)
	stated, err := in.takeStated(&obs)
	if err != nil {
		return nil, err
	}
	notes = append(notes, stated...)
	in.Defaults()
	in.KVDtypes = in.KVDtypes[:1]
	in.Corrections = nil
	res, err := Plan(in)
	if err != nil {
		return nil, err
	}
	a := actual{Source: obs.Source, TotalMiB: obs.Live.TotalMiB}
	if obs.Live.Tokens != nil {
		a.Tokens = *obs.Live.Tokens
	}
	if c := obs.Log; c != nil {
		if a.Tokens == 0 {
			// blocks are vLLM's (its log states them); a plan of another
			// family leaves the block size unset, and a vLLM log held
			// against it counts blocks of vLLM's default size
			a.Tokens, _ = c.TokensFor(cmp.Or(in.VLLM.BlockSize, vllmDefaultBlockSize))
		}
		a.KVMiB = c.KVMiB
		a.Terms = memoryTerms{Weights: c.WeightsGiB, Activation: c.ActivationGiB, NonTorch: c.NonTorchGiB,
			CUDAGraphs: c.CUDAGraphEstimateGiB, AvailableKV: c.AvailableKVGiB, GraphsCharged: c.CUDAGraphEstimateApplied}
	}
	cmp, err := compare(res, &res.Predictions[0], a, in.Model.Preset)
	if err != nil {
		return nil, err
	}
	return &Calibration{Plan: res, Comparison: cmp, Notes: notes}, nil
}

// takeStated sets the inputs not given from what the server states
// (see Calibrate) and returns a note for each taken from its log. It
// runs before defaults, so that the defaults that depend on the GPU's
// memory (vLLM's max_num_seqs) follow the server's.
func (in *Inputs) takeStated(obs *Observed) ([]string, error) {
	if err := in.takeLive(obs.Live); err != nil {
		return nil, err
	}
	c := obs.Log
	if c == nil {
		return nil, nil
	}
	var notes []string
	note := func(format string, a ...any) {
		notes = append(notes, "from the server log: "+fmt.Sprintf(format, a...))
	}
	if c.TotalGPUGiB != nil && !in.Given.GPUMemory {
		in.GPUGiB = *c.TotalGPUGiB
		note("total_gpu_memory %.2f GiB", in.GPUGiB)
	}
	if take, ok := statedByLog[in.Server.Describe().Log]; ok {
		take(in, c, note)
	}
	return notes, nil
}

// statedByLog takes the inputs a server's log states, one reader per log
// format (backend.Descriptor.Log): llama.cpp's (Ollama's runner writes
// it too) and vLLM's. note records each input taken.
var statedByLog = map[backend.Kind]func(in *Inputs, c *serverlog.Capacity, note func(format string, a ...any)){
	backend.LlamaCpp: (*Inputs).takeLlamaLog,
	backend.VLLM:     (*Inputs).takeVLLMLog,
}

// takeLlamaLog takes the slots, the context (per slot for Ollama) and
// the KV type from a llama.cpp log; a quantized KV type means flash
// attention was on.
func (in *Inputs) takeLlamaLog(c *serverlog.Capacity, note func(format string, a ...any)) {
	if c.NSeq != nil && *c.NSeq > 0 && !in.Given.Parallel {
		in.LlamaCpp.Parallel = *c.NSeq
		note("%d slots (n_seq_max)", in.LlamaCpp.Parallel)
	}
	nctx := c.NCtx
	if nctx == nil {
		nctx = c.Cells
	}
	if nctx != nil && *nctx > 0 && !in.Given.Context {
		in.Context = *nctx
		if in.Server == backend.Ollama {
			// n_ctx is the total over the slots; Ollama's num_ctx is per slot
			in.Context = *nctx / max(in.slots(), 1)
		}
		note("n_ctx %d", *nctx)
	}
	if c.TypeK != "" && !in.Given.KVDtypes {
		if d, err := ParseKVDtype(c.TypeK); err == nil {
			in.KVDtypes = []KVDtype{d}
			note("KV type %s", c.TypeK)
			if d.isGGMLQuant() {
				in.LlamaCpp.FlashAttention = true
			}
		}
	}
}

// takeVLLMLog takes gpu_memory_utilization, the version and whether the
// CUDA-graph estimate was charged to the KV cache from a vLLM log.
func (in *Inputs) takeVLLMLog(c *serverlog.Capacity, note func(format string, a ...any)) {
	if c.Utilization != nil && !in.Given.Utilization {
		in.VLLM.Utilization = *c.Utilization
		note("gpu_memory_utilization %.2f", in.VLLM.Utilization)
	}
	if c.VLLMVersion != "" && !in.Given.VLLMVersion {
		if v, err := ParseVLLMVersion(c.VLLMVersion); err == nil {
			in.VLLM.VLLMVersion = v
			note("vLLM %s", v)
		}
	}
	if c.CUDAGraphEstimateApplied != nil && !in.Given.GraphEstimate && !in.Given.EnforceEager {
		in.VLLM.GraphEstimate = GraphEstimateOff
		if *c.CUDAGraphEstimateApplied {
			in.VLLM.GraphEstimate = GraphEstimateOn
		}
		note("CUDA-graph estimate charged to the KV cache: %v", *c.CUDAGraphEstimateApplied)
	}
}

// takeLive sets the inputs not given from what a live server reports.
func (in *Inputs) takeLive(l Live) error {
	if l.BlockSize != nil && !in.Given.BlockSize {
		in.VLLM.BlockSize = *l.BlockSize
	}
	if l.KVDtype != "" && !in.Given.KVDtypes {
		d, err := ParseKVDtype(l.KVDtype)
		if err != nil {
			return fmt.Errorf("the server's KV-cache dtype: %v", err)
		}
		in.KVDtypes = []KVDtype{d}
	}
	if l.Utilization != nil && !in.Given.Utilization {
		in.VLLM.Utilization = *l.Utilization
	}
	if l.ContextPerSlot != nil && !in.Given.Context {
		in.Context = *l.ContextPerSlot
	}
	return nil
}

// slots is the number of parallel slots in has or, unset, will default
// to.
func (in *Inputs) slots() int {
	switch {
	case in.LlamaCpp.Parallel > 0:
		return in.LlamaCpp.Parallel
	case in.Server == backend.Ollama:
		return ollamaDefaultParallel
	}
	return 1
}

// logNotes says what a vLLM log tells of its attention backend and
// CUDA-graph estimate: the figures to hold a FlashInfer term against.
func logNotes(c *serverlog.Capacity) []string {
	if c == nil {
		return nil
	}
	var notes []string
	if c.AttentionBackend != "" {
		n := "attention backend " + c.AttentionBackend
		if c.DecodeBackend != "" {
			n += ", decode backend " + c.DecodeBackend
		}
		notes = append(notes, "from the server log: "+n)
	}
	if c.GraphsPiecewise != nil || c.GraphsFull != nil {
		count := func(p *int) string {
			if p == nil {
				return "0"
			}
			return fmt.Sprint(*p)
		}
		notes = append(notes, fmt.Sprintf("from the server log: CUDA graphs profiled PIECEWISE=%s FULL=%s", count(c.GraphsPiecewise), count(c.GraphsFull)))
	}
	for _, g := range c.GraphSamples {
		notes = append(notes, fmt.Sprintf("from the server log: %s graphs estimated at %.2f MiB first capture + (%d−1) × %.2f MiB per graph",
			g.Mode, g.FirstCaptureMiB, g.Graphs, g.PerGraphMiB))
	}
	if c.CUDAGraphActualGiB != nil {
		notes = append(notes, fmt.Sprintf("from the server log: CUDA graphs took %.2f GiB once captured", *c.CUDAGraphActualGiB))
	}
	return notes
}
