// Package plan predicts how much of a GPU an LLM server gives to its KV
// cache: the weights, the KV-cache tokens and blocks left, and how many
// concurrent sequences of a context length fit, per server family (vLLM,
// llama.cpp, Ollama) and per KV-cache dtype; and it calibrates those
// predictions against the capacity a real server reports. The model comes
// from package modelspec, the GPU from package hardware; package
// report/plantext renders the result as text. Server families are
// backend.Kind, the one vocabulary run, calibrate and launch share; the
// formula applied to a family is a CapacityModel.
//
// Units: bytes inside, GiB (2^30 bytes) and MiB (2^20) in names outside.
package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/modelspec"
)

// GiB is the number of bytes in one GiB, the seed planner's "gib".
const GiB = 1 << 30

// MiB is the number of bytes in one MiB.
const MiB = 1 << 20

// CapacityModel is the formula that turns a server's GPU memory into
// KV-cache capacity. The server family is a separate input
// (Inputs.Server, a backend.Kind): each family has its own accounting,
// and the seed formula is a second model of vLLM.
type CapacityModel string

// Capacity models.
const (
	// ServerAccounting follows the server family's own memory accounting:
	// vLLM's profiling run (gpu_worker), llama.cpp's KV-cache allocation
	// (llama_kv_cache), Ollama's settings and defaults on llama.cpp. It is
	// the default.
	ServerAccounting CapacityModel = "server"
	// SeedFormula is the seed planner of examples/multi-backend-sweep.json,
	// exactly; it models vLLM.
	SeedFormula CapacityModel = "seed"
)

// ParseCapacityModel returns the capacity model named s ("" is
// ServerAccounting).
func ParseCapacityModel(s string) (CapacityModel, error) {
	switch m := CapacityModel(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ServerAccounting, nil
	case ServerAccounting, SeedFormula:
		return m, nil
	}
	return "", fmt.Errorf("unknown capacity model %q (want server or seed)", s)
}

// Inputs are everything a plan depends on. Zero values mean "the server
// family's default" (see defaults). The inputs every family reads are
// fields of Inputs; a family's own settings are one nested group each
// (VLLM, SGLang, LlamaCpp), which its capacity model defaults.
type Inputs struct {
	// Model is the model's attention and matrix shape.
	Model modelspec.Spec
	// Server is the server family whose capacity is predicted (one of
	// Servers); CapacityModel the formula ("" is ServerAccounting).
	Server        backend.Kind
	CapacityModel CapacityModel
	// GPUName is the device name, for display; GPUGiB its total memory.
	GPUName string
	GPUGiB  float64
	// GPUs lists every GPU the server runs on, in rank order (vLLM and
	// SGLang: pipeline stage-major, tensor rank minor; llama.cpp and
	// Ollama: device order), for a server on several GPUs, alike or not.
	// Empty means one GPU, GPUName and GPUGiB; when set, Defaults makes
	// GPUName and GPUGiB the first GPU's.
	GPUs []Device
	// TensorParallel and PipelineParallel are vLLM's and SGLang's
	// --tensor-parallel-size and --pipeline-parallel-size (0 = 1; with
	// GPUs listed and neither given, tensor parallel over all of them).
	// Their product must be the number of GPUs. They are shared, not
	// nested, because both worker families read them, and the checks of
	// the GPU list (one GPU per rank) need them for every family.
	TensorParallel, PipelineParallel int
	// WeightsGiB overrides the weight estimate when > 0.
	WeightsGiB float64
	// Quant is the weight format for the estimate; "" = the model's dtype
	// (or the GGUF tensors' real size when the spec has it).
	Quant Quant
	// QuantFrom says where Quant came from when no --quant gave it ("the
	// model name", "config.json's quantization_config"); "" = --quant.
	QuantFrom string
	// KVDtypes are the KV-cache dtypes to compare.
	KVDtypes []KVDtype
	// Context is the per-sequence length used for "max concurrency"
	// (vLLM and SGLang max_model_len; llama.cpp/Ollama per-slot context).
	Context int
	// VLLM holds vLLM's settings (zero values: its defaults); the seed
	// formula, a model of vLLM, reads them too.
	VLLM VLLMSettings
	// SGLang holds SGLang's memory settings (zero values: its defaults).
	SGLang SGLangSettings
	// LlamaCpp holds llama.cpp's settings, which Ollama shares (it runs
	// llama.cpp; zero values: each family's defaults).
	LlamaCpp LlamaCppSettings
	// Corrections, if set, are calibration corrections to apply.
	Corrections *CalibrationFile
	// Given says which of these the caller set on purpose, for Calibrate
	// (Plan does not look at it).
	Given Given
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
	// BytesPerToken is the KV bytes one token needs over all layers, on
	// one tensor-parallel rank for vLLM and SGLang (for llama.cpp with
	// sliding-window layers: the whole cache over its full-length cells).
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
	// an fp8 cache off Hopper, from v0.21.0; see vllmFlashInferGiB).
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

	// Multi-GPU, offload, MoE, vision and LoRA.
	// Devices is the per-GPU breakdown: every worker of a vLLM or SGLang
	// server, every GPU llama.cpp or Ollama splits layers over (one entry
	// for one GPU). WeightsGiB and KVGiB above are per GPU for vLLM and
	// SGLang (every worker holds the same tokens), the whole model's for
	// llama.cpp and Ollama.
	Devices []DeviceShare `json:"devices,omitempty"`
	// Host is what llama.cpp and Ollama keep in system memory; nil when
	// every layer is on a GPU.
	Host *HostShare `json:"host,omitempty"`
	// GPULayers is, for llama.cpp and Ollama, the layers on the GPUs
	// counting the output layer ("offloaded N/M layers to GPU"), and
	// ModelLayers that M (n_layer + 1).
	GPULayers   int `json:"gpu_layers,omitempty"`
	ModelLayers int `json:"model_layers,omitempty"`
	// Ollama is Ollama's own memory estimate behind its offload decision.
	Ollama *OllamaEstimate `json:"ollama_estimate,omitempty"`
	// KVGroups is the number of vLLM's KV-cache groups for a model that
	// mixes full and sliding-window or chunked layers (hybrid KV-cache
	// manager); 0 when every layer is alike. BlocksPerSequence is how
	// many blocks one sequence of Context tokens takes over all groups.
	KVGroups          int `json:"kv_groups,omitempty"`
	BlocksPerSequence int `json:"blocks_per_sequence,omitempty"`
	// VisionGiB is the vision encoder's profiling peak per GPU (vLLM);
	// ImageItems how many of the largest images it was profiled with and
	// ImageTokens the tokens of one.
	VisionGiB   float64 `json:"vision_encoder_gib,omitempty"`
	ImageItems  int     `json:"image_items,omitempty"`
	ImageTokens int     `json:"image_tokens,omitempty"`
	// LoRAGiB is the stacked LoRA adapter weights per GPU (vLLM).
	LoRAGiB float64 `json:"lora_gib,omitempty"`
	// SGLang is the SGLang settings the figure used (defaults resolved).
	SGLang *SGLangSettings `json:"sglang,omitempty"`
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
	// TotalParams and ActiveParams are the model's parameters and those a
	// text token is multiplied by (modelspec.Spec.ActiveParams: for MoE
	// models only the experts a token visits), for the simulator's FLOPs.
	TotalParams  int64 `json:"total_params"`
	ActiveParams int64 `json:"active_params"`
}

// InputsOut is the resolved inputs as written to JSON.
type InputsOut struct {
	Model                string        `json:"model"`
	Backend              backend.Kind  `json:"backend"`
	CapacityModel        CapacityModel `json:"capacity_model"`
	GPU                  string        `json:"gpu,omitempty"`
	GPUGiB               float64       `json:"gpu_gib"`
	GPUMemoryUtilization float64       `json:"gpu_memory_utilization,omitempty"`
	WeightsSource        string        `json:"weights_source"`
	Quant                Quant         `json:"quant,omitempty"`
	KVDtypes             []string      `json:"kv_cache_dtypes"`
	Context              int           `json:"context"`
	BlockSize            int           `json:"block_size,omitempty"`
	MaxNumSeqs           int           `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  int           `json:"max_num_batched_tokens,omitempty"`
	Sampler              Sampler       `json:"sampler,omitempty"`
	VLLMVersion          string        `json:"vllm_version,omitempty"`
	EnforceEager         bool          `json:"enforce_eager,omitempty"`
	GraphEstimate        string        `json:"graph_estimate,omitempty"`
	// GraphsCharged says whether this vLLM subtracts its CUDA-graph
	// estimate from the KV cache, as the three settings above resolve.
	GraphsCharged  *bool `json:"graphs_charged,omitempty"`
	Parallel       int   `json:"parallel,omitempty"`
	UBatch         int   `json:"n_ubatch,omitempty"`
	FlashAttention bool  `json:"flash_attention,omitempty"`
	// Several GPUs, offload, LoRA, images.
	GPUs             []Device  `json:"gpus,omitempty"`
	TensorParallel   int       `json:"tensor_parallel_size,omitempty"`
	PipelineParallel int       `json:"pipeline_parallel_size,omitempty"`
	NGPULayers       *int      `json:"n_gpu_layers,omitempty"`
	TensorSplit      []float64 `json:"tensor_split,omitempty"`
	RAMGiB           float64   `json:"ram_gib,omitempty"`
	LoRA             *LoRA     `json:"lora,omitempty"`
	ImagesPerPrompt  *int      `json:"images_per_prompt,omitempty"`
	DisableHybridKV  bool      `json:"disable_hybrid_kv_cache_manager,omitempty"`
}

// Defaults fills the zero fields of in with the server family's defaults.
func (in *Inputs) Defaults() {
	if in.CapacityModel == "" {
		in.CapacityModel = ServerAccounting
	}
	if len(in.GPUs) > 0 {
		in.GPUName, in.GPUGiB = in.GPUs[0].Name, in.GPUs[0].MemoryGiB
		if in.TensorParallel == 0 && in.PipelineParallel == 0 && in.tensorParallel() {
			in.TensorParallel = len(in.GPUs)
		}
	}
	if in.TensorParallel == 0 {
		in.TensorParallel = 1
	}
	if in.PipelineParallel == 0 {
		in.PipelineParallel = 1
	}
	if len(in.KVDtypes) == 0 {
		in.KVDtypes = hfKV
		if m, ok := capacityModels[in.Server]; ok {
			in.KVDtypes = m.kvDtypes()
		}
	}
	if m, ok := capacityModels[in.Server]; ok {
		m.defaults(in)
	}
	if in.Context == 0 {
		in.Context = 32768
	}
}

// Field names an input of Inputs in an InputError, so that a caller can
// say which of its own settings (a flag, a profile key) it was.
type Field string

// Inputs that validate checks.
const (
	FieldServer              Field = "server family"
	FieldCapacityModel       Field = "capacity model"
	FieldGPUGiB              Field = "GPU memory (GiB)"
	FieldUtilization         Field = "gpu_memory_utilization"
	FieldWeightsGiB          Field = "weights (GiB)"
	FieldContext             Field = "context"
	FieldBlockSize           Field = "block size"
	FieldMaxNumSeqs          Field = "max_num_seqs"
	FieldMaxNumBatchedTokens Field = "max_num_batched_tokens"
	FieldParallel            Field = "parallel slots"
	FieldUBatch              Field = "n_ubatch"
	// Several GPUs, offload, LoRA, images, SGLang.
	FieldGPUs              Field = "GPU list"
	FieldTensorParallel    Field = "tensor_parallel_size"
	FieldPipelineParallel  Field = "pipeline_parallel_size"
	FieldNGPULayers        Field = "n_gpu_layers"
	FieldTensorSplit       Field = "tensor_split"
	FieldRAMGiB            Field = "system memory (GiB)"
	FieldMaxLoRAs          Field = "max_loras"
	FieldMaxLoRARank       Field = "max_lora_rank"
	FieldLoRATargets       Field = "lora target modules"
	FieldImagesPerPrompt   Field = "images per prompt"
	FieldMemFractionStatic Field = "mem_fraction_static"
	FieldMaxTotalTokens    Field = "max_total_tokens"
	FieldChunkedPrefill    Field = "chunked_prefill_size"
	FieldCUDAGraphMaxBS    Field = "cuda_graph_max_bs"
	FieldPageSize          Field = "page_size"
	FieldUsers             Field = "users"
)

// Limits on the inputs of several GPUs, offload, LoRA and SGLang:
// generous bounds far above any real server, so that absurd values are
// refused instead of computed.
const (
	MaxGPUs          = 1024
	MaxGPULayers     = 100000
	MaxRAMGiB        = 1 << 20
	MaxImages        = 1000
	MaxTotalTokens   = 1 << 30
	MaxChunkedTokens = 1 << 24
	MaxCUDAGraphBS   = 1 << 16
)

// InputError is an input Plan cannot use: Field says which, Value what
// it was and Want what it must be.
type InputError struct {
	Field Field
	Value any
	Want  string
}

// Error is "<field> <value> <want>", e.g. "context -3 must be > 0".
func (e *InputError) Error() string { return fmt.Sprintf("%s %v %s", e.Field, e.Value, e.Want) }

// validate checks the inputs; an input out of range is an *InputError
// naming its Field, a bad model spec an error naming the spec's field.
func (in *Inputs) validate() error {
	if err := in.Model.Validate(); err != nil {
		return err
	}
	if _, ok := capacityModels[in.Server]; !ok {
		return &InputError{FieldServer, in.Server, "has no capacity model (want " + backend.Or(Servers) + ")"}
	}
	switch in.CapacityModel {
	case "", ServerAccounting:
	case SeedFormula:
		if in.Server != backend.VLLM {
			return &InputError{FieldCapacityModel, in.CapacityModel, "models vLLM only, not " + string(in.Server)}
		}
	default:
		return &InputError{FieldCapacityModel, in.CapacityModel, "is unknown (want server or seed)"}
	}
	switch {
	case in.GPUGiB == 0:
		return &InputError{FieldGPUGiB, 0.0, "is missing"}
	case in.Context == 0:
		return &InputError{FieldContext, 0, "is missing"}
	}
	// Every numeric input is finite and within its written limit
	// (limits.go), so no product of them overflows: the shared ones here,
	// each family's in its settings' check (validateBreadth).
	if err := checkLimits(limitCheck{LimitGPUGiB, in.GPUGiB}, limitCheck{LimitWeightsGiB, in.WeightsGiB},
		limitCheck{LimitContext, float64(in.Context)}); err != nil {
		return err
	}
	return in.validateBreadth()
}

// validateBreadth checks how the model is split over GPUs, then each
// family's settings by its own check: every family's, whichever is
// planned, so that a setting out of range is refused even where it is
// not used.
func (in *Inputs) validateBreadth() error {
	if err := in.validateParallel(); err != nil {
		return err
	}
	if err := in.VLLM.check(); err != nil {
		return err
	}
	if err := in.LlamaCpp.check(len(in.devices())); err != nil {
		return err
	}
	return in.SGLang.check()
}

// validateParallel checks how the model is split over GPUs: tensor and
// pipeline parallelism in range and only for the families that split so
// (with as many GPUs as ranks, and no more stages than layers), and each
// GPU's memory.
func (in *Inputs) validateParallel() error {
	tp, pp := in.TensorParallel, in.PipelineParallel
	switch {
	case tp < 1 || tp > MaxGPUs:
		return &InputError{FieldTensorParallel, tp, fmt.Sprintf("must be in 1..%d", MaxGPUs)}
	case pp < 1 || pp > MaxGPUs:
		return &InputError{FieldPipelineParallel, pp, fmt.Sprintf("must be in 1..%d", MaxGPUs)}
	case len(in.GPUs) > MaxGPUs:
		return &InputError{FieldGPUs, len(in.GPUs), fmt.Sprintf("GPUs: at most %d", MaxGPUs)}
	}
	for _, d := range in.GPUs {
		if !(d.MemoryGiB > 0) || d.MemoryGiB > 1e5 {
			return &InputError{FieldGPUs, d.MemoryGiB, "GiB: every GPU's memory must be > 0 and at most 100000"}
		}
	}
	batched := in.tensorParallel()
	if !batched && tp*pp > 1 {
		return &InputError{FieldTensorParallel, tp * pp, "is for vLLM and SGLang: llama.cpp and Ollama split layers over the GPUs (give the GPUs, and a tensor split)"}
	}
	if batched && len(in.GPUs) > 0 && len(in.GPUs) != tp*pp {
		return &InputError{FieldGPUs, len(in.GPUs), fmt.Sprintf("GPUs: tensor parallel %d × pipeline parallel %d needs %d", tp, pp, tp*pp)}
	}
	if pp > in.Model.Layers {
		return &InputError{FieldPipelineParallel, pp, fmt.Sprintf("is more than the model's %d layers", in.Model.Layers)}
	}
	return nil
}

// formula names the capacity model Plan applies to in: "seed", or the
// server family whose accounting it follows ("vllm", "llamacpp",
// "ollama"). Calibration records and corrections carry this name (their
// "backend" field).
func (in *Inputs) formula() string { return formulaName(in.Server, in.CapacityModel) }

// formulaName is Inputs.formula for a resolved server and model.
func formulaName(server backend.Kind, m CapacityModel) string {
	if m == SeedFormula {
		return string(SeedFormula)
	}
	return string(server)
}

// weights returns the weight bytes and where they came from. For vLLM
// and SGLang on several GPUs, --weights-gib is per GPU (as their logs
// print it); the estimates are the whole model's. llama.cpp loads a
// vision encoder from a separate --mmproj file, so its estimate is the
// text model's.
func (in *Inputs) weights() (int64, string) {
	switch {
	case in.WeightsGiB > 0:
		return int64(in.WeightsGiB * GiB), "--weights-gib"
	case in.Quant != "" && in.Server == backend.LlamaCpp && in.Model.Vision != nil:
		_, _, _, vb := bytesPerParam(in.Quant)
		return WeightsBytes(&in.Model, in.Quant) - int64(float64(in.Model.Params().Vision)*vb), "--quant " + string(in.Quant) + " estimate, text model (the vision encoder is a separate --mmproj file)"
	case in.Quant != "" && in.QuantFrom != "":
		return WeightsBytes(&in.Model, in.Quant), string(in.Quant) + " estimate, the format " + in.QuantFrom + " states"
	case in.Quant != "":
		return WeightsBytes(&in.Model, in.Quant), "--quant " + string(in.Quant) + " estimate"
	case in.Model.WeightsBytes > 0:
		if in.Model.WeightsSource != "" {
			return in.Model.WeightsBytes, in.Model.WeightsSource
		}
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
var fileTypeQuant = map[string]Quant{"F32": "fp32", "F16": "fp16", "BF16": "bf16", "Q8_0": "q8_0", "Q4_0": "q4_0", "Q4_K_M": "q4_k_m", "Q5_K_M": "q5_k_m"}

// Plan computes the capacity for every KV dtype of in.
func Plan(in Inputs) (*Result, error) {
	autoParallel := in.Server == backend.Ollama && in.LlamaCpp.Parallel == 0
	in.Defaults()
	if err := in.validate(); err != nil {
		return nil, err
	}
	wb, wsrc := in.weights()
	res := &Result{Model: in.Model, Planner: seedPlanner(in.Model), TotalParams: in.Model.Params().Total(), ActiveParams: in.Model.ActiveParams()}
	res.Inputs = InputsOut{
		Model: in.Model.Name, Backend: in.Server, CapacityModel: in.CapacityModel, GPU: in.GPUName, GPUGiB: in.GPUGiB,
		WeightsSource: wsrc, Quant: in.Quant, Context: in.Context,
		GPUs: in.GPUs, NGPULayers: in.LlamaCpp.NGPULayers, TensorSplit: in.LlamaCpp.TensorSplit, RAMGiB: in.LlamaCpp.RAMGiB, LoRA: in.VLLM.LoRA,
		ImagesPerPrompt: in.VLLM.ImagesPerPrompt, DisableHybridKV: in.VLLM.DisableHybridKV,
	}
	if tp, pp := in.TensorParallel, in.PipelineParallel; tp*pp > 1 {
		res.Inputs.TensorParallel, res.Inputs.PipelineParallel = tp, pp
		if len(in.GPUs) == 0 {
			res.Inputs.GPUs = in.devices()
		}
	}
	for _, d := range in.KVDtypes {
		res.Inputs.KVDtypes = append(res.Inputs.KVDtypes, string(d))
	}
	var p func(KVDtype) (Prediction, []string)
	m, ok := capacityModels[in.Server]
	switch {
	case in.CapacityModel == SeedFormula:
		res.Inputs.GPUMemoryUtilization, res.Inputs.BlockSize = in.VLLM.Utilization, in.VLLM.BlockSize
		p = func(d KVDtype) (Prediction, []string) { return seedPredict(&in, wb, d) }
	case ok:
		p = m.predictor(&in, wb, &res.Inputs, autoParallel)
	default:
		return nil, &InputError{FieldServer, in.Server, "has no capacity model"}
	}
	seen := map[string]bool{}
	for _, d := range in.KVDtypes {
		pr, warns := p(d)
		if in.Corrections != nil {
			in.Corrections.apply(in.formula(), in.GPUName, in.GPUGiB, &pr)
		}
		res.Predictions = append(res.Predictions, pr)
		for _, w := range warns {
			if !seen[w] {
				seen[w] = true
				res.Warnings = append(res.Warnings, w)
			}
		}
	}
	if in.Model.IsMLA() && (in.Server == backend.LlamaCpp || in.Server == backend.Ollama || in.CapacityModel == SeedFormula) {
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
