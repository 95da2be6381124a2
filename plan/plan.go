// Package plan predicts how much of a GPU an LLM server gives to its KV
// cache: the weights, the KV-cache tokens and blocks left, and how many
// concurrent sequences of a context length fit, per server family (vLLM,
// llama.cpp, Ollama) and per KV-cache dtype; and it calibrates those
// predictions against the capacity a real server reports. The model comes
// from package modelspec, the GPU from package hardware; package
// report/plantext renders the result as text.
//
// Units: bytes inside, GiB (2^30 bytes) and MiB (2^20) in names outside.
package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/modelspec"
)

// GiB is the number of bytes in one GiB, the seed planner's "gib".
const GiB = 1 << 30

// MiB is the number of bytes in one MiB.
const MiB = 1 << 20

// Backend is a capacity model: how one server family turns GPU memory into
// KV-cache capacity.
type Backend string

// Capacity models.
const (
	// Seed is the seed planner of multi-backend-sweep.json, exactly.
	Seed Backend = "seed"
	// VLLM follows vLLM's memory profiling (gpu_worker).
	VLLM Backend = "vllm"
	// LlamaCpp follows llama.cpp's KV-cache allocation (llama_kv_cache).
	LlamaCpp Backend = "llamacpp"
	// Ollama is llama.cpp underneath with Ollama's settings and defaults.
	Ollama Backend = "ollama"
)

// Backends lists the capacity models in help order.
var Backends = []Backend{Seed, VLLM, LlamaCpp, Ollama}

// ParseBackend returns the capacity model named s.
func ParseBackend(s string) (Backend, error) {
	for _, b := range Backends {
		if string(b) == strings.ToLower(s) {
			return b, nil
		}
	}
	return "", fmt.Errorf("unknown --backend %q (want one of seed, vllm, llamacpp, ollama)", s)
}

// Inputs are everything a plan depends on. Zero values mean "the backend's
// default" (see Defaults).
type Inputs struct {
	// Model is the model's attention and matrix shape.
	Model modelspec.Spec
	// Backend is the capacity model to apply.
	Backend Backend
	// GPUName is the device name, for display; GPUGiB its total memory.
	GPUName string
	GPUGiB  float64
	// Utilization is vLLM's gpu_memory_utilization (seed and vllm only).
	Utilization float64
	// WeightsGiB overrides the weight estimate when > 0.
	WeightsGiB float64
	// Quant is the weight format for the estimate; "" = the model's dtype
	// (or the GGUF tensors' real size when the spec has it).
	Quant Quant
	// KVDtypes are the KV-cache dtypes to compare.
	KVDtypes []KVDtype
	// Context is the per-sequence length used for "max concurrency"
	// (vLLM max_model_len; llama.cpp/Ollama per-slot context).
	Context int
	// BlockSize is vLLM's KV block size in tokens.
	BlockSize int
	// MaxNumSeqs and MaxNumBatchedTokens shape vLLM's profiling run.
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	// Sampler is vLLM's top-k/top-p implementation during profiling.
	Sampler Sampler
	// VLLMVersion is the vLLM release whose accounting to follow (zero:
	// the current one); EnforceEager is its --enforce-eager (no CUDA
	// graphs, so nothing is charged for them); GraphEstimate its
	// VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS ("" = auto).
	VLLMVersion   VLLMVersion
	EnforceEager  bool
	GraphEstimate GraphEstimate
	// Parallel is llama.cpp --parallel / OLLAMA_NUM_PARALLEL (slots).
	Parallel int
	// UBatch is llama.cpp's n_ubatch.
	UBatch int
	// FlashAttention is llama.cpp -fa / OLLAMA_FLASH_ATTENTION.
	FlashAttention bool
	// Corrections, if set, are calibration corrections to apply.
	Corrections *CalibrationFile
}

// Prediction is the capacity of one KV dtype.
type Prediction struct {
	// KVCacheDtype is the dtype as asked for ("auto", "fp8", "q8_0", ...).
	KVCacheDtype string `json:"kv_cache_dtype"`
	// BytesPerElement is the dtype's bytes per cached element.
	BytesPerElement float64 `json:"bytes_per_element"`
	// PredictedTokens is the KV-cache capacity in tokens (vLLM: blocks ×
	// block_size, its "GPU KV cache size"; llama.cpp: cells).
	PredictedTokens int `json:"predicted_tokens"`
	// Blocks is the number of KV blocks (vLLM num_gpu_blocks); for
	// llama.cpp, cells / block_size is not a server figure and Blocks is 0.
	Blocks int `json:"blocks"`
	// BlockSize is the KV block size in tokens (vLLM and seed).
	BlockSize int `json:"block_size"`
	// WeightsGiB is the weight memory used.
	WeightsGiB float64 `json:"weights_gib"`
	// KVGiB is the memory of the KV cache (tokens × bytes per token).
	KVGiB float64 `json:"kv_gib"`
	// BytesPerToken is the KV bytes one token needs over all layers
	// (for sliding-window models: of the full-attention layers plus the
	// sliding layers, see BytesPerTokenNote).
	BytesPerToken float64 `json:"bytes_per_token"`
	// MaxConcurrency is how many sequences of Context tokens fit at once.
	MaxConcurrency float64 `json:"max_concurrency"`
	// Context is the sequence length MaxConcurrency is for.
	Context int `json:"context"`
	// Fits is false when the weights (and fixed overheads) alone exceed
	// the memory; ShortfallGiB then says by how much.
	Fits         bool    `json:"fits"`
	ShortfallGiB float64 `json:"shortfall_gib,omitempty"`

	// Memory terms of the model that produced the figure (GiB).
	RequestedGiB  float64 `json:"requested_gib,omitempty"`
	OverheadGiB   float64 `json:"overhead_gib,omitempty"`
	ActivationGiB float64 `json:"activation_peak_gib,omitempty"`
	NonTorchGiB   float64 `json:"non_torch_gib,omitempty"`
	// AttentionBackendGiB is, for vLLM, the attention backend's buffers
	// its CUDA-graph estimate charges to the KV budget (FlashInfer under
	// an fp8 cache off Hopper, from v0.21.0; see VLLMFlashInferGiB).
	AttentionBackendGiB float64 `json:"attention_backend_gib,omitempty"`
	// KVMiB and Cells are llama.cpp's "KV self size" and cell count;
	// ComputeBufferMiB its compute-buffer estimate.
	KVMiB            float64 `json:"kv_mib,omitempty"`
	Cells            int     `json:"cells,omitempty"`
	ComputeBufferMiB float64 `json:"compute_buffer_mib,omitempty"`
	// FitTokens is, for llama.cpp and Ollama, how many KV cells the memory
	// left after weights and compute buffer could hold (the largest total
	// context that fits).
	FitTokens int `json:"fit_tokens,omitempty"`
	// Correction is the calibration correction applied, if any;
	// UncorrectedTokens is the figure before it.
	Correction        *Correction `json:"correction,omitempty"`
	UncorrectedTokens int         `json:"uncorrected_tokens,omitempty"`
}

// Result is a whole plan: one prediction per KV dtype.
type Result struct {
	// Inputs are the resolved inputs (defaults filled in).
	Inputs InputsOut `json:"inputs"`
	// Model is the spec the prediction was made for.
	Model modelspec.Spec `json:"model"`
	// Predictions holds one entry per KV dtype, in the order asked.
	Predictions []Prediction `json:"predictions"`
	// Warnings are findings a person should read (data, not stderr).
	Warnings []string `json:"warnings,omitempty"`
	// Planner is the seed planner's block (constants and this model's
	// row) in the seed's shape.
	Planner *document.Planner `json:"planner"`
}

// InputsOut is the resolved inputs as written to JSON.
type InputsOut struct {
	Model                string   `json:"model"`
	Backend              Backend  `json:"backend"`
	GPU                  string   `json:"gpu,omitempty"`
	GPUGiB               float64  `json:"gpu_gib"`
	GPUMemoryUtilization float64  `json:"gpu_memory_utilization,omitempty"`
	WeightsSource        string   `json:"weights_source"`
	Quant                Quant    `json:"quant,omitempty"`
	KVDtypes             []string `json:"kv_cache_dtypes"`
	Context              int      `json:"context"`
	BlockSize            int      `json:"block_size,omitempty"`
	MaxNumSeqs           int      `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  int      `json:"max_num_batched_tokens,omitempty"`
	Sampler              Sampler  `json:"sampler,omitempty"`
	VLLMVersion          string   `json:"vllm_version,omitempty"`
	EnforceEager         bool     `json:"enforce_eager,omitempty"`
	GraphEstimate        string   `json:"graph_estimate,omitempty"`
	// GraphsCharged says whether this vLLM subtracts its CUDA-graph
	// estimate from the KV cache, as the three settings above resolve.
	GraphsCharged  *bool `json:"graphs_charged,omitempty"`
	Parallel       int   `json:"parallel,omitempty"`
	UBatch         int   `json:"n_ubatch,omitempty"`
	FlashAttention bool  `json:"flash_attention,omitempty"`
}

// Defaults fills the zero fields of in with the backend's defaults.
func (in *Inputs) Defaults() {
	if len(in.KVDtypes) == 0 {
		switch in.Backend {
		case LlamaCpp, Ollama:
			in.KVDtypes = []KVDtype{KVFP16, KVQ8_0, KVQ4_0}
		default:
			in.KVDtypes = []KVDtype{KVAuto, KVFP8}
		}
	}
	if in.BlockSize == 0 {
		in.BlockSize = 16
	}
	switch in.Backend {
	case Seed, VLLM:
		if in.Utilization == 0 {
			in.Utilization = 0.9
		}
		seqs, batched := vllmDefaults(in.GPUName, in.GPUGiB)
		if in.MaxNumSeqs == 0 {
			in.MaxNumSeqs = seqs
		}
		if in.MaxNumBatchedTokens == 0 {
			in.MaxNumBatchedTokens = batched
		}
		if in.Sampler == "" {
			in.Sampler = SamplerFlashInfer
		}
		if in.GraphEstimate == "" {
			in.GraphEstimate = GraphEstimateAuto
		}
		if in.Context == 0 {
			in.Context = in.Model.MaxContext
		}
	case LlamaCpp:
		if in.Parallel == 0 {
			in.Parallel = 1
		}
		if in.Context == 0 {
			in.Context = 4096
		}
	case Ollama:
		if in.Parallel == 0 {
			in.Parallel = ollamaDefaultParallel
		}
		if in.Context == 0 {
			in.Context = ollamaDefaultNumCtx
		}
	}
	if in.UBatch == 0 {
		in.UBatch = 512
	}
	if in.Context == 0 {
		in.Context = 32768
	}
}

// Validate checks the inputs; errors name the flag.
func (in *Inputs) Validate() error {
	if err := in.Model.Validate(); err != nil {
		return err
	}
	switch {
	case !(in.GPUGiB > 0) || in.GPUGiB > 1e5:
		return fmt.Errorf("--gpu-gib %v must be > 0 and at most 100000", in.GPUGiB)
	case !(in.Utilization >= 0 && in.Utilization <= 1):
		return fmt.Errorf("--gpu-memory-utilization %v must be in (0, 1]", in.Utilization)
	case in.WeightsGiB < 0 || math.IsNaN(in.WeightsGiB):
		return fmt.Errorf("--weights-gib %v must be >= 0", in.WeightsGiB)
	case in.Context <= 0:
		return fmt.Errorf("--context %d must be > 0", in.Context)
	case in.BlockSize <= 0:
		return fmt.Errorf("--block-size %d must be > 0", in.BlockSize)
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"--max-num-seqs", in.MaxNumSeqs}, {"--max-num-batched-tokens", in.MaxNumBatchedTokens}, {"--parallel", in.Parallel}, {"--ubatch", in.UBatch}} {
		if c.v < 0 {
			return fmt.Errorf("%s %d must be >= 0", c.flag, c.v)
		}
	}
	return nil
}

// weights returns the weight bytes and where they came from.
func (in *Inputs) weights() (int64, string) {
	switch {
	case in.WeightsGiB > 0:
		return int64(in.WeightsGiB * GiB), "--weights-gib"
	case in.Quant != "":
		return WeightsBytes(&in.Model, in.Quant), "--quant " + string(in.Quant) + " estimate"
	case in.Model.WeightsBytes > 0:
		return in.Model.WeightsBytes, "GGUF tensor sizes"
	case fileTypeQuant[in.Model.FileType] != "":
		q := fileTypeQuant[in.Model.FileType]
		return WeightsBytes(&in.Model, q), string(q) + " estimate from the GGUF file type " + in.Model.FileType
	}
	q := DefaultQuant(&in.Model)
	return WeightsBytes(&in.Model, q), string(q) + " estimate from the model dtype"
}

// fileTypeQuant maps GGUF file types to the --quant formats that
// estimate them, for specs without tensor sizes (Ollama's model_info).
var fileTypeQuant = map[string]Quant{"F32": "fp32", "F16": "fp16", "BF16": "bf16", "Q8_0": "q8_0", "Q4_0": "q4_0", "Q4_K_M": "q4_k_m"}

// Plan computes the capacity for every KV dtype of in.
func Plan(in Inputs) (*Result, error) {
	in.Defaults()
	if err := in.Validate(); err != nil {
		return nil, err
	}
	wb, wsrc := in.weights()
	res := &Result{Model: in.Model, Planner: SeedPlanner(in.Model)}
	res.Inputs = InputsOut{
		Model: in.Model.Name, Backend: in.Backend, GPU: in.GPUName, GPUGiB: in.GPUGiB,
		WeightsSource: wsrc, Quant: in.Quant, Context: in.Context,
	}
	for _, d := range in.KVDtypes {
		res.Inputs.KVDtypes = append(res.Inputs.KVDtypes, string(d))
	}
	var p func(KVDtype) (Prediction, []string)
	switch in.Backend {
	case Seed:
		res.Inputs.GPUMemoryUtilization, res.Inputs.BlockSize = in.Utilization, in.BlockSize
		p = func(d KVDtype) (Prediction, []string) { return seedPredict(&in, wb, d) }
	case VLLM:
		o := &res.Inputs
		o.GPUMemoryUtilization, o.BlockSize, o.MaxNumSeqs, o.MaxNumBatchedTokens, o.Sampler =
			in.Utilization, in.BlockSize, in.MaxNumSeqs, in.MaxNumBatchedTokens, in.Sampler
		o.VLLMVersion, o.EnforceEager, o.GraphEstimate = in.VLLMVersion.String(), in.EnforceEager, string(in.GraphEstimate)
		charged := vllmChargesGraphs(&in)
		o.GraphsCharged = &charged
		p = func(d KVDtype) (Prediction, []string) { return vllmPredict(&in, wb, d) }
	case LlamaCpp, Ollama:
		o := &res.Inputs
		o.Parallel, o.UBatch, o.FlashAttention = in.Parallel, in.UBatch, in.FlashAttention
		p = func(d KVDtype) (Prediction, []string) { return llamaPredict(&in, wb, d) }
	default:
		return nil, fmt.Errorf("unknown backend %q", in.Backend)
	}
	seen := map[string]bool{}
	for _, d := range in.KVDtypes {
		pr, warns := p(d)
		if in.Corrections != nil {
			in.Corrections.apply(in.Backend, in.GPUName, in.GPUGiB, &pr)
		}
		res.Predictions = append(res.Predictions, pr)
		for _, w := range warns {
			if !seen[w] {
				seen[w] = true
				res.Warnings = append(res.Warnings, w)
			}
		}
	}
	if in.Model.IsMLA() && in.Backend != VLLM {
		res.Warnings = append(res.Warnings, "MLA model: KV is one latent of kv_lora_rank+qk_rope_head_dim per layer and token")
	}
	return res, nil
}

// concurrency is tokens / context, the number of full-length sequences.
func concurrency(tokens, context int) float64 {
	if context <= 0 {
		return 0
	}
	return float64(tokens) / float64(context)
}

// round rounds x to n decimals (for display-stable JSON).
func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}
