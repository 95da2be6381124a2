package sim

import "time"

// Published figures the defaults come from (DEFAULTS.md explains each).
// None is from the reference sweep (examples/multi-backend-sweep.json).

// vLLM: fitted by TestDefaultsVLLM5090 to the published QPS sweep of
// vLLM 0.22.1 on an RTX 5090 serving Qwen3-4B in BF16 (random 1024 in /
// 128 out, Poisson arrivals; testdata/published-vllm-rtx5090-qwen3-4b.json).
var vllmDefaults = Params{
	MemoryEfficiency:  0.760,
	ComputeEfficiency: 0.871,
	StepOverhead:      388 * time.Microsecond,
	SeqCost:           55 * time.Microsecond,
	RequestLatency:    10000 * time.Microsecond,
}

// llama.cpp: from llama-bench figures in ggml-org/llama.cpp pull requests
// (testdata/published-llamacpp.json), checked by TestDefaultsLlamaCpp.
var llamaDefaults = struct {
	MemoryEfficiency, ComputeEfficiency float64
	StepOverhead                        time.Duration
	// smallBatchFLOPsFraction: the per-column cost of ggml's vector
	// kernels (MMVQ, which runs dp4a on the INT32 lanes, not the tensor
	// cores) as a fraction of the GPU's dp4a rate, DP4AOPS (SeqCost =
	// FLOPsPerToken / (DP4AOPS × fraction)); PeakFLOPS stands in where
	// the rate is unknown (a custom board).
	smallBatchFLOPsFraction float64
	RequestLatency          time.Duration
	OllamaRequestLatency    time.Duration
}{
	MemoryEfficiency:        0.919,
	ComputeEfficiency:       0.884,
	StepOverhead:            0,
	smallBatchFLOPsFraction: 0.1951,
	RequestLatency:          5 * time.Millisecond,
	OllamaRequestLatency:    10 * time.Millisecond,
}

// DefaultParams is the calibration a prediction without a fit uses for
// family f on GPU g with model m.
func DefaultParams(f Family, g GPU, m ModelCost) Params {
	switch f {
	case LlamaCpp, Ollama:
		d := llamaDefaults
		p := Params{
			MemoryEfficiency: d.MemoryEfficiency, ComputeEfficiency: d.ComputeEfficiency,
			StepOverhead:   d.StepOverhead,
			SeqCost:        dur(m.FLOPsPerToken / (g.smallBatchOPS() * d.smallBatchFLOPsFraction)),
			RequestLatency: d.RequestLatency,
		}
		if f == Ollama {
			p.RequestLatency = d.OllamaRequestLatency
		}
		return p
	}
	return vllmDefaults
}

// smallBatchOPS is g's dp4a rate, else its tensor peak.
func (g GPU) smallBatchOPS() float64 {
	if g.DP4AOPS > 0 {
		return g.DP4AOPS
	}
	return g.PeakFLOPS
}
