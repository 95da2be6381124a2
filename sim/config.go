package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/servebench/servebench/backend"
)

// Error values. Every error the package returns wraps one of them, so a
// caller (the CLI) can tell usage errors (exit 2) from others with
// errors.Is; the message names the field or value to fix.
var (
	// ErrUnknownGPU: the GPU is not in the catalog.
	ErrUnknownGPU = errors.New("unknown GPU")
	// ErrUnknownModel: the model is neither a preset nor a name that
	// resolves to one.
	ErrUnknownModel = errors.New("unknown model")
	// ErrDoesNotFit: the model (and the server's fixed overheads) does not
	// fit the GPU's memory, or a request does not fit the KV cache.
	ErrDoesNotFit = errors.New("does not fit")
	// ErrTooFewLevels: a document has too few levels to fit.
	ErrTooFewLevels = errors.New("too few levels to fit")
	// ErrBadInput: a setting or request is out of range.
	ErrBadInput = errors.New("invalid input")
)

// GPU is the hardware the step-time roofline needs.
type GPU struct {
	// Name is the catalog name.
	Name string `json:"name"`
	// MemoryGiB is the device memory (for capacity models).
	MemoryGiB float64 `json:"memory_gib"`
	// BandwidthBytesPerS is the memory bandwidth in bytes per second.
	BandwidthBytesPerS float64 `json:"bandwidth_bytes_per_s"`
	// PeakFLOPS is dense FP16 tensor throughput with FP32 accumulate, in
	// FLOP/s.
	PeakFLOPS float64 `json:"peak_flops"`
	// DP4AOPS is the dp4a (int8 dot product) rate in operations per
	// second (0 = unknown), what ggml's small-batch vector kernels run
	// on.
	DP4AOPS float64 `json:"dp4a_ops,omitempty"`
	// SMCyclesPerS is the board's SMs × boost clock (0 = unknown: a
	// custom board or another vendor's): what the per-SM limits of ggml's
	// kernels scale with (mmqOpsPerSMCycle, llamaDefaults.vectorBytesPerSMCycle).
	SMCyclesPerS float64 `json:"sm_cycles_per_s,omitempty"`
	// INT8OPS is dense INT8 tensor throughput in operations per second
	// (0 = unknown or none), what ggml's MMQ kernels run on; FP8FLOPS
	// dense FP8 tensor throughput (0 = no FP8 tensor cores), what vLLM's
	// CUTLASS scaled_mm runs FP8 checkpoints on.
	INT8OPS  float64 `json:"int8_ops,omitempty"`
	FP8FLOPS float64 `json:"fp8_flops,omitempty"`
	// NVLinkBytesPerS and PCIeBytesPerS are the board's NVLink (0: none)
	// and PCIe bandwidth per direction in bytes per second; DefaultLink
	// is what its tensor-parallel ranks talk over unless told otherwise
	// (hardware: NVLink on NVSwitch boards, PCIe without peer access on
	// GeForce boards, else PCIe with it).
	NVLinkBytesPerS float64 `json:"nvlink_bytes_per_s,omitempty"`
	PCIeBytesPerS   float64 `json:"pcie_bytes_per_s,omitempty"`
	DefaultLink     Link    `json:"default_link,omitempty"`
	// TensorClockRatio is the share of the datasheet tensor rates the
	// board sustains under tensor load relative to a GeForce board, on
	// which the efficiencies of Params were fitted
	// (hardware.GPU.SustainedTensorShare: from measured dense GEMMs); it
	// scales every tensor rate. 0 = 1 (a custom board's own figure).
	TensorClockRatio float64 `json:"tensor_clock_ratio,omitempty"`
}

// Kernel is the matrix-multiply code path a weight format runs on: it
// picks which of the GPU's tensor rates bounds the compute time.
type Kernel string

// Matrix-multiply kernels.
const (
	// KernelFP16 is cuBLAS (or Marlin's FP16 MMA for AWQ/GPTQ) on
	// FP16/BF16 tensor cores with FP32 accumulate: GPU.PeakFLOPS.
	KernelFP16 Kernel = ""
	// KernelFP8 is vLLM's CUTLASS scaled_mm on FP8 tensor cores
	// (GPU.FP8FLOPS; boards without FP8 fall back to Marlin W8A16, the
	// FP16 rate).
	KernelFP8 Kernel = "fp8"
	// KernelMMQ is ggml's MMQ for llama.cpp's quantized types, which since
	// ggml-org/llama.cpp#7676 ("CUDA: use tensor cores for MMQ") runs
	// INT8 mma.sync on q8_1-quantized activations: GPU.INT8OPS.
	KernelMMQ Kernel = "mmq"
)

// ModelCost is what one forward pass of a model in one weight format
// costs. All figures are per forward pass or per token, in bytes and FLOPs.
type ModelCost struct {
	// Name is the model as resolved (preset name or "free" for a fit
	// without a model).
	Name string `json:"name"`
	// WeightBytesPerStep is the weight bytes one forward pass reads: every
	// matrix and the lm_head, but not the embedding table (one row per
	// token is read from it).
	WeightBytesPerStep float64 `json:"weight_bytes_per_step"`
	// FLOPsPerToken is 2 × the matrix parameters a token passes through
	// (attention and MLP projections; for mixture-of-experts models the
	// experts it visits), lm_head excluded.
	FLOPsPerToken float64 `json:"flops_per_token"`
	// HeadFLOPs is 2 × the lm_head parameters: paid once per sequence that
	// samples a token in a step.
	HeadFLOPs float64 `json:"head_flops"`
	// AttnFLOPsPerCtx is the attention FLOPs of one query token per token
	// of context it attends to: 4 × layers × heads × head_dim (QKᵀ and PV,
	// two FLOPs per multiply-add).
	AttnFLOPsPerCtx float64 `json:"attention_flops_per_context_token"`
	// KVBytesPerToken is the KV-cache bytes of one token over all layers
	// in the cache's dtype; a step reads it for every token of context of
	// every sequence in it.
	KVBytesPerToken float64 `json:"kv_bytes_per_token"`
	// ImageTokens is the prompt tokens one image adds; ImageFLOPs the
	// vision encoder's FLOPs per image.
	ImageTokens int     `json:"image_tokens,omitempty"`
	ImageFLOPs  float64 `json:"image_flops,omitempty"`
	// Kernel is the matrix-multiply path of the weight format.
	Kernel Kernel `json:"kernel,omitempty"`
	// Experts and ExpertsPerToken are a mixture-of-experts model's routed
	// experts per layer and those a token visits; ExpertBytes the routed
	// experts' share of WeightBytesPerStep. A step reads only the experts
	// its tokens visit (vLLM's fused_moe and ggml's mul_mat_id gather
	// the selected experts' rows), so its expert bytes are ExpertBytes
	// times the expected distinct share, 1 − (1 − k/E)^tokens.
	Experts         int     `json:"experts,omitempty"`
	ExpertsPerToken int     `json:"experts_per_token,omitempty"`
	ExpertBytes     float64 `json:"expert_bytes,omitempty"`
	// MoELayers is the layers with routed experts (all but DeepSeek's
	// leading dense ones and an interleave's dense layers): each expert a
	// small micro-batch runs in each of them takes ggml at least a
	// latency floor, however few bytes it reads (llamaDefaults.expertFloor).
	MoELayers int `json:"moe_layers,omitempty"`
	// ExpertColumnFLOPs is 2 × one routed expert's matrix parameters in
	// one layer (gate, up and down: 3 × hidden × expert width): what one
	// token column costs in one expert's products. ggml's MMQ pads each
	// expert's columns to whole tiles (costModel.expertPadFLOPs).
	ExpertColumnFLOPs float64 `json:"expert_column_flops,omitempty"`
	// Layers is the decoder layers; HiddenBytesPerToken the hidden state
	// of one token in the activation dtype (hidden × 2 bytes, BF16 or
	// FP16 whatever the weights' format) and LogitBytesPerSample one
	// sampled sequence's logits (vocabulary × 2): what tensor-parallel
	// ranks exchange (commModel). 0 in a model-less fit, which runs on
	// one GPU only.
	Layers              int     `json:"layers,omitempty"`
	HiddenBytesPerToken float64 `json:"hidden_bytes_per_token,omitempty"`
	LogitBytesPerSample float64 `json:"logit_bytes_per_sample,omitempty"`
}

// Params are the calibration of the step-time model: the efficiencies and
// overheads that Fit adjusts and Defaults documents.
type Params struct {
	// MemoryEfficiency is the achieved fraction of the memory bandwidth.
	MemoryEfficiency float64 `json:"memory_efficiency"`
	// ComputeEfficiency is the achieved fraction of PeakFLOPS.
	ComputeEfficiency float64 `json:"compute_efficiency"`
	// StepOverhead is the fixed time of one step (llama.cpp, Ollama: of
	// one micro-batch): kernel launches, scheduling, graph replay.
	StepOverhead time.Duration `json:"step_overhead_ns"`
	// SeqCost is the time each sequence in a step adds (vLLM, SGLang: the
	// scheduler, sampler and detokenizer on the CPU; llama.cpp, Ollama:
	// ggml's per-column vector-kernel work, per token after the first of
	// micro-batches of at most eight tokens — one token per sequence when
	// decoding).
	SeqCost time.Duration `json:"seq_cost_ns"`
	// RequestLatency is the time from a client's send to the request
	// reaching the scheduler (HTTP, chat template, tokenization): it adds
	// to TTFT and E2E but does not occupy the GPU.
	RequestLatency time.Duration `json:"request_latency_ns"`
	// FrontEnd is the API process's serial work, a queue every request
	// and streamed token passes through (vLLM, SGLang; zero for
	// llama.cpp and Ollama).
	FrontEnd
}

// minEfficiency is the smallest memory or compute efficiency a profile
// may give: a thousandth of the GPU's figure. Below it the step time
// (bytes ÷ (bandwidth × efficiency)) leaves any plausible range and, near
// zero, overflows to a step that takes no time.
const minEfficiency = 1e-3

// maxOverhead bounds each overhead of Params: a minute per step, per
// sequence or per request, where measured ones are micro- to
// milliseconds; past it a simulated server would never answer.
const maxOverhead = time.Minute

// Validate checks that p is physically meaningful: efficiencies in
// [minEfficiency, 2], overheads in [0, maxOverhead].
func (p Params) Validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"memory_efficiency", p.MemoryEfficiency}, {"compute_efficiency", p.ComputeEfficiency}} {
		if !(c.v >= minEfficiency && c.v <= 2) {
			return fmt.Errorf("%w: %s %v must be in [%g, 2]", ErrBadInput, c.name, c.v, minEfficiency)
		}
	}
	for _, o := range []struct {
		name string
		v    time.Duration
	}{{"step_overhead_ns", p.StepOverhead}, {"seq_cost_ns", p.SeqCost}, {"request_latency_ns", p.RequestLatency},
		{"front_end_request_ns", p.PerRequest}, {"front_end_prompt_token_ns", p.PerPromptToken}, {"front_end_chunk_ns", p.PerChunk}} {
		if o.v < 0 || o.v > maxOverhead {
			return fmt.Errorf("%w: %s %d must be in [0, %d] (%v)", ErrBadInput, o.name, int64(o.v), int64(maxOverhead), maxOverhead)
		}
	}
	return nil
}

// costBounds are the largest figures a GPU or model cost may state, each
// far above any real one (the largest models read a few TB per step,
// the fastest GPUs move a few TB/s and do a few PFLOP/s): past them the
// figure is a mistake, and the step times computed from it leave the
// range a float64 divides well in.
var costBounds = []struct {
	name string
	max  float64
	get  func(*Config) float64
}{
	{"bandwidth_bytes_per_s", 1e15, func(c *Config) float64 { return c.GPU.BandwidthBytesPerS }},
	{"peak_flops", 1e18, func(c *Config) float64 { return c.GPU.PeakFLOPS }},
	{"sm_cycles_per_s", 1e15, func(c *Config) float64 { return c.GPU.SMCyclesPerS }},
	{"tensor_clock_ratio", 2, func(c *Config) float64 { return c.GPU.TensorClockRatio }},
	{"weight_bytes_per_step", 1e14, func(c *Config) float64 { return c.Model.WeightBytesPerStep }},
	{"flops_per_token", 1e14, func(c *Config) float64 { return c.Model.FLOPsPerToken }},
	{"head_flops", 1e13, func(c *Config) float64 { return c.Model.HeadFLOPs }},
	{"attention_flops_per_context_token", 1e11, func(c *Config) float64 { return c.Model.AttnFLOPsPerCtx }},
	{"kv_bytes_per_token", 1e9, func(c *Config) float64 { return c.Model.KVBytesPerToken }},
	{"image_flops", 1e16, func(c *Config) float64 { return c.Model.ImageFLOPs }},
}

// Server are the server settings the schedulers obey. Zero values are
// filled by Config.defaults with the family's defaults.
type Server struct {
	// MaxNumSeqs and MaxNumBatchedTokens are vLLM's max_num_seqs and
	// max_num_batched_tokens (SGLang: max_running_requests and
	// chunked_prefill_size).
	MaxNumSeqs          int `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens int `json:"max_num_batched_tokens,omitempty"`
	// BlockSize is the KV block size in tokens (vLLM 16, SGLang 1).
	BlockSize int `json:"block_size,omitempty"`
	// KVBlocks is the number of KV blocks the server allocated (vLLM's
	// num_gpu_blocks, one of which is its null block).
	KVBlocks int `json:"kv_blocks,omitempty"`
	// PrefixCaching turns on prefix caching (vLLM V1's default).
	PrefixCaching bool `json:"prefix_caching"`
	// CUDAGraphs: the server pads decode batches to its captured sizes.
	CUDAGraphs bool `json:"cuda_graphs"`
	// ReserveFullPrompt is vLLM's scheduler_reserve_full_isl (on by
	// default in current vLLM, vllm/config/scheduler.py): a waiting
	// request is admitted only if the blocks for its whole prompt (and
	// output so far) are free, not just those of its first chunk.
	ReserveFullPrompt bool `json:"reserve_full_prompt"`
	// MaxModelLen is the longest sequence the server admits (vLLM), 0 =
	// no limit beyond the KV cache.
	MaxModelLen int `json:"max_model_len,omitempty"`
	// Slots is llama.cpp's --parallel or OLLAMA_NUM_PARALLEL.
	Slots int `json:"slots,omitempty"`
	// SlotContext is the cells one slot may use (llama.cpp: -c / slots;
	// Ollama: num_ctx).
	SlotContext int `json:"slot_context,omitempty"`
	// NBatch and NUBatch are llama.cpp's n_batch and n_ubatch (Ollama's
	// num_batch for both).
	NBatch  int `json:"n_batch,omitempty"`
	NUBatch int `json:"n_ubatch,omitempty"`
}

// Config is everything an Engine needs.
type Config struct {
	Backend backend.Kind `json:"backend"`
	GPU     GPU          `json:"gpu"`
	Model   ModelCost    `json:"model"`
	Server  Server       `json:"server"`
	Params  Params       `json:"params"`
	// Parallel is how the model is split over several GPUs (zero: one
	// GPU, GPU).
	Parallel Parallel `json:"parallel,omitzero"`
}

// check validates a complete Config: its bounds (checkBounds), then
// what its server family needs to build an engine (checkNeeds).
func (c *Config) check() error {
	if err := c.checkBounds(); err != nil {
		return err
	}
	return c.checkNeeds()
}

// checkBounds checks that every figure and setting of c is within its
// written bound, whatever the family.
func (c *Config) checkBounds() error {
	if _, err := ParseKind(string(c.Backend)); err != nil {
		return err
	}
	if !(c.GPU.BandwidthBytesPerS > 0) || !(c.GPU.PeakFLOPS > 0) {
		return fmt.Errorf("%w: GPU %q has no bandwidth or FP16 throughput", ErrBadInput, c.GPU.Name)
	}
	m := c.Model
	if !(m.WeightBytesPerStep > 0) || !(m.FLOPsPerToken > 0) {
		return fmt.Errorf("%w: model %q: bytes per step and FLOPs per token must be > 0", ErrBadInput, m.Name)
	}
	for _, b := range costBounds {
		if v := b.get(c); !(v >= 0 && v <= b.max) {
			return fmt.Errorf("%w: model %q on %q: %s %v must be in [0, %g]", ErrBadInput, m.Name, c.GPU.Name, b.name, v, b.max)
		}
	}
	if m.ImageTokens < 0 || m.ImageTokens > 1<<20 {
		return fmt.Errorf("%w: model %q: image_tokens %d out of range", ErrBadInput, m.Name, m.ImageTokens)
	}
	if err := c.Params.Validate(); err != nil {
		return err
	}
	if err := c.checkParallel(); err != nil {
		return err
	}
	s := c.Server
	for _, b := range []struct {
		name   string
		v, max int
	}{
		{"slots", s.Slots, 1 << 16}, {"max_num_seqs", s.MaxNumSeqs, 1 << 20}, {"slot_context", s.SlotContext, 1 << 26},
		{"kv_blocks", s.KVBlocks, 1 << 31}, {"max_num_batched_tokens", s.MaxNumBatchedTokens, 1 << 24},
		{"n_batch", s.NBatch, 1 << 24}, {"n_ubatch", s.NUBatch, 1 << 24}, {"block_size", s.BlockSize, 1 << 16},
		{"max_model_len", s.MaxModelLen, 1 << 26},
	} {
		if b.v < 0 || b.v > b.max {
			return fmt.Errorf("%w: server setting %s %d out of range (0 to %d)", ErrBadInput, b.name, b.v, b.max)
		}
	}
	return nil
}

// checkParallel checks c's split over GPUs: its bounds, a batched
// family (llama.cpp and Ollama split layers, not matrices), and the
// model figures its collectives need.
func (c *Config) checkParallel() error {
	p := c.Parallel
	if err := p.validate(); err != nil {
		return err
	}
	if p.size() <= 1 {
		return nil
	}
	if !batched(c.Backend) {
		return fmt.Errorf("%w: tensor_parallel_size %d is for vLLM and SGLang: %s splits layers over GPUs, not matrices", ErrBadInput, p.size(), c.Backend)
	}
	m := c.Model
	if m.Layers <= 0 || m.Layers > 1<<12 || !(m.HiddenBytesPerToken > 0 && m.HiddenBytesPerToken <= 1e7) || !(m.LogitBytesPerSample >= 0 && m.LogitBytesPerSample <= 1e9) {
		return fmt.Errorf("%w: model %q: tensor parallelism needs its layers (%d), hidden bytes per token (%v) and logit bytes (%v): name a model, not a model-less fit",
			ErrBadInput, m.Name, m.Layers, m.HiddenBytesPerToken, m.LogitBytesPerSample)
	}
	return nil
}

// checkNeeds checks that c has the settings its family's scheduler
// needs.
func (c *Config) checkNeeds() error {
	s := c.Server
	if batched(c.Backend) {
		if s.MaxNumSeqs <= 0 || s.MaxNumBatchedTokens <= 0 || s.BlockSize <= 0 || s.KVBlocks < 2 {
			return fmt.Errorf("%w: %s needs max_num_seqs, max_num_batched_tokens, block_size > 0 and at least 2 KV blocks (have %d, %d, %d, %d)",
				ErrBadInput, c.Backend, s.MaxNumSeqs, s.MaxNumBatchedTokens, s.BlockSize, s.KVBlocks)
		}
		return nil
	}
	if s.Slots <= 0 || s.SlotContext <= 0 || s.NBatch <= 0 || s.NUBatch <= 0 {
		return fmt.Errorf("%w: %s needs slots, slot context, n_batch and n_ubatch > 0 (have %d, %d, %d, %d)",
			ErrBadInput, c.Backend, s.Slots, s.SlotContext, s.NBatch, s.NUBatch)
	}
	return nil
}
