package sim

import (
	"time"

	"github.com/servebench/servebench/backend"
)

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
	FrontEnd:          apiServerDefaults,
}

// apiServerDefaults are the API process's serial costs (FrontEnd), from
// published measurements of vLLM's and SGLang's front ends, none of them
// a corpus page: tokenizing about 1,000 tokens per millisecond at
// concurrency 1 on a DGX H100 host (a vLLM maintainer in
// vllm-project/vllm#19012: 10.7 ms for a 10k-token prompt); "most
// tokenizer.encode calls take ~0.1 ms" (vllm-project/vllm#45759); and
// SGLang's default streaming at 21.8k output tokens/s against 28.8k
// without streaming, Qwen3-1.7B on 4 × H200 at 80 requests/s
// (sgl-project/sglang#22548): 1/21.8k − 1/28.8k = 11 µs per streamed
// token where the front end binds.
var apiServerDefaults = FrontEnd{
	PerRequest:     100 * time.Microsecond,
	PerPromptToken: 1 * time.Microsecond,
	PerChunk:       11 * time.Microsecond,
}

// llama.cpp: from llama-bench figures in ggml-org/llama.cpp pull requests
// (testdata/published-llamacpp.json), checked by TestDefaultsLlamaCpp.
var llamaDefaults = struct {
	MemoryEfficiency float64
	// ComputeEfficiency is the achieved fraction of the FP16 tensor peak
	// for F16/BF16 GGUF weights (cuBLAS); mmqEfficiency the achieved
	// fraction of the INT8 tensor peak for the quantized types, which
	// run ggml's MMQ on INT8 mma (fitted to pp512 of ggml-org/llama.cpp#7676).
	ComputeEfficiency, mmqEfficiency float64
	StepOverhead                     time.Duration
	// layerFloor is what each layer adds to every micro-batch
	// (costModel.layerFloorStep), however few bytes it reads: a
	// micro-batch runs some fifteen kernels per layer
	// (norms, the projections' vector kernels, RoPE, attention, adds),
	// each with a launch and a tail in which the GPU streams no weights,
	// so a small model reads at a smaller share of the bandwidth than a
	// large one. Fitted with MemoryEfficiency to the tg128 rates of
	// three models (7B, 12B, 70B) on one RTX PRO 6000 Blackwell and one
	// build (decode_by_size in testdata/published-llamacpp-llama-bench.json).
	layerFloor time.Duration
	// vectorBytesPerSMCycle bounds the weight bytes ggml's vector kernels
	// stream per SM cycle (vectorBandwidth), before the memory
	// efficiency: the median of what four single-stream decode rates of
	// current builds on H100 SXM, NVL and PCIe boards imply, after the
	// layer floor (decode_hbm in
	// testdata/published-llamacpp-llama-bench.json).
	vectorBytesPerSMCycle float64
	// smallBatchFLOPsFraction: the cost of each column after the first of
	// ggml's vector kernels (MMVQ, which runs dp4a on the INT32 lanes, not
	// the tensor cores; the first hides under the weight read, see
	// mmvqExtraColumns) as a fraction of the GPU's dp4a rate, DP4AOPS (SeqCost =
	// FLOPsPerToken / (DP4AOPS × fraction)); PeakFLOPS stands in where
	// the rate is unknown (a custom board).
	smallBatchFLOPsFraction float64
	// expertFloor is the least time one selected expert's products take
	// in each MoE layer (ModelCost.MoELayers) of a micro-batch of at most
	// eight tokens (costModel.expertFloorTime): fitted to the
	// micro-batch-1 rate of Qwen3-30B-A3B Q4_0 on an RTX 4090 in
	// ggml-org/llama.cpp#15631.
	expertFloor          time.Duration
	RequestLatency       time.Duration
	OllamaRequestLatency time.Duration
}{
	MemoryEfficiency:        0.8653,
	ComputeEfficiency:       0.884,
	mmqEfficiency:           0.2264,
	StepOverhead:            0,
	layerFloor:              30060 * time.Nanosecond,
	vectorBytesPerSMCycle:   8.11,
	smallBatchFLOPsFraction: 0.2090,
	expertFloor:             6968 * time.Nanosecond,
	RequestLatency:          5 * time.Millisecond,
	OllamaRequestLatency:    10 * time.Millisecond,
}

// DefaultParams is the calibration a prediction without a fit uses for
// family f on GPU g with model m (the family's scheduling.params; vLLM's
// for a family the engine does not schedule).
func DefaultParams(f backend.Kind, g GPU, m ModelCost) Params {
	if sc, ok := schedulers[f]; ok {
		return sc.params(g, m)
	}
	return vllmDefaults
}

// llamaParams are llama.cpp's defaults (Ollama's request latency for
// ollama), the per-sequence cost from the GPU's small-batch rate.
func llamaParams(ollama bool) func(g GPU, m ModelCost) Params {
	return func(g GPU, m ModelCost) Params {
		d := llamaDefaults
		p := Params{
			MemoryEfficiency: d.MemoryEfficiency, ComputeEfficiency: d.ComputeEfficiency,
			StepOverhead:   d.StepOverhead,
			SeqCost:        dur(m.FLOPsPerToken / (g.smallBatchOPS() * d.smallBatchFLOPsFraction)),
			RequestLatency: d.RequestLatency,
		}
		if m.Kernel == KernelMMQ {
			p.ComputeEfficiency = d.mmqEfficiency
		}
		if ollama {
			p.RequestLatency = d.OllamaRequestLatency
		}
		return p
	}
}

// smallBatchOPS is g's dp4a rate, else its tensor peak.
func (g GPU) smallBatchOPS() float64 {
	if g.DP4AOPS > 0 {
		return g.DP4AOPS
	}
	return g.PeakFLOPS
}

// linkDefaults are the collectives' costs per link (Parallel.Small and
// Large), from published all-reduce measurements, none of them from a
// corpus case: each bus bandwidth is a share of the board's link
// bandwidth per direction (GPU.NVLinkBytesPerS or PCIeBytesPerS), so it
// carries to other boards; DEFAULTS.md cites each figure.
var linkDefaults = map[Link]struct {
	small, large  linkFigure
	smallMaxBytes float64
}{
	// NVLink: vLLM's custom all-reduce under 8 MiB (max_size in
	// vllm/distributed/device_communicators/custom_all_reduce.py): 8.7–10.1
	// µs from 512 B to 32 KiB on H100 at TP 2, 4 and 8, and 57–66 GB/s of
	// bus bandwidth from 256 KiB to 1 MiB (sgl-project/sglang#2904's
	// vLLM rows; A100: 53 GB/s, sglang#2688), 0.13–0.18 of NVLink per
	// direction; NCCL's ring above it, about 370 GB/s on H100 SXM (an
	// NCCL maintainer in NVIDIA/nccl-tests#212), 0.82 of 450.
	LinkNVLink: {small: linkFigure{9 * time.Microsecond, 0.14}, large: linkFigure{9 * time.Microsecond, 0.82}, smallMaxBytes: 8 << 20},
	// PCIe with peer access: NCCL (vLLM's custom all-reduce needs NVLink
	// past two ranks); 24.1–24.6 µs from 256 B to 64 KB on eight PCIe 5.0
	// RTX PRO 6000 boards (voipmonitor/rtx6kpro, hardware/pcie-bandwidth.md),
	// bus bandwidth 0.80 of PCIe 4.0 (25.7 GB/s on four RTX 4090 with
	// peer access, tinygrad/open-gpu-kernel-modules#36) and 0.62 of PCIe
	// 5.0 (39.4 GB/s, the RTX PRO 6000 page): 0.71.
	LinkPCIe: {small: linkFigure{24 * time.Microsecond, 0.71}, large: linkFigure{24 * time.Microsecond, 0.71}},
	// PCIe without peer access (NCCL's shared-memory transport through
	// host memory): 42 µs for an 8-byte all-reduce on eight RTX 4090
	// (NVIDIA/nccl#1530), 28 GB/s of bus bandwidth on eight PCIe 5.0 RTX
	// 5090 (NVIDIA/nccl#1639), 0.44 of 64 GB/s. Neither page states the
	// transport.
	LinkHost: {small: linkFigure{42 * time.Microsecond, 0.44}, large: linkFigure{42 * time.Microsecond, 0.44}},
}

// linkFigure is one collective path's fixed time and bus bandwidth as a
// share of the link's bandwidth per direction.
type linkFigure struct {
	latency time.Duration
	share   float64
}
