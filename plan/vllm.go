package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/modelspec"
)

// vLLM's defaults for the OpenAI API server (V1 engine,
// vllm/engine/arg_utils.py): max_num_batched_tokens 2048 and max_num_seqs
// 256; on GPUs of 70 GiB or more other than the A100, 8192 and 1024.
const (
	vllmDefaultMaxNumBatchedTokens = 2048
	vllmDefaultMaxNumSeqs          = 256
	vllmLargeMaxNumBatchedTokens   = 8192
	vllmLargeMaxNumSeqs            = 1024
)

// vllmDefaultBlockSize is vLLM's default KV block size in tokens
// (--block-size).
const vllmDefaultBlockSize = 16

// vllmDefaults returns vLLM's default max_num_seqs and
// max_num_batched_tokens for a GPU.
func vllmDefaults(gpuName string, gib float64) (seqs, batched int) {
	if gib >= 70 && !strings.Contains(strings.ToLower(gpuName), "a100") {
		return vllmLargeMaxNumSeqs, vllmLargeMaxNumBatchedTokens
	}
	return vllmDefaultMaxNumSeqs, vllmDefaultMaxNumBatchedTokens
}

// VLLMSettings are vLLM's own settings (zero values: its defaults, see
// defaults): its memory and profiling settings, the release whose
// accounting to follow, and the features that change what it profiles
// (LoRA, images, the hybrid KV-cache manager). The seed formula reads
// Utilization and BlockSize too, being a model of vLLM.
type VLLMSettings struct {
	// Utilization is vLLM's gpu_memory_utilization.
	Utilization float64
	// BlockSize is vLLM's KV block size in tokens. SGLang's page has its
	// own setting (SGLangSettings.PageSize), and llama.cpp has no blocks.
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
	// LoRA is vLLM's --enable-lora with its --max-loras, --max-lora-rank
	// and target modules; nil = LoRA off.
	LoRA *LoRA
	// ImagesPerPrompt is vLLM's --limit-mm-per-prompt image=N for a
	// vision-language model: 0 turns image profiling off (text only);
	// nil is vLLM's default (the encoder budget decides).
	ImagesPerPrompt *int
	// DisableHybridKV is vLLM's --disable-hybrid-kv-cache-manager:
	// sliding-window and chunked layers then get as many blocks as full
	// ones.
	DisableHybridKV bool
}

// defaults fills vLLM's zero settings: gpu_memory_utilization 0.9, block
// size 16, max_num_seqs and max_num_batched_tokens by GPU (gpuName,
// gpuGiB), FlashInfer's sampler and the automatic CUDA-graph estimate.
func (v *VLLMSettings) defaults(gpuName string, gpuGiB float64) {
	if v.Utilization == 0 {
		v.Utilization = 0.9
	}
	if v.BlockSize == 0 {
		v.BlockSize = vllmDefaultBlockSize
	}
	seqs, batched := vllmDefaults(gpuName, gpuGiB)
	if v.MaxNumSeqs == 0 {
		v.MaxNumSeqs = seqs
	}
	if v.MaxNumBatchedTokens == 0 {
		v.MaxNumBatchedTokens = batched
	}
	if v.Sampler == "" {
		v.Sampler = SamplerFlashInfer
	}
	if v.GraphEstimate == "" {
		v.GraphEstimate = GraphEstimateAuto
	}
}

// check checks vLLM's settings against their ranges (zero: its default):
// the batch shape not negative, every number within its Limit, the LoRA
// settings and the images per prompt. validate calls it whichever
// family is planned, so that a setting out of range is refused even
// where it is not used.
func (v *VLLMSettings) check() error {
	if err := checkNonNegative(signCheck{FieldMaxNumSeqs, v.MaxNumSeqs}, signCheck{FieldMaxNumBatchedTokens, v.MaxNumBatchedTokens}); err != nil {
		return err
	}
	if err := checkLimits(limitCheck{LimitUtilization, v.Utilization}, limitCheck{LimitBlockSize, float64(v.BlockSize)},
		limitCheck{LimitMaxNumSeqs, float64(v.MaxNumSeqs)}, limitCheck{LimitMaxNumBatchedTokens, float64(v.MaxNumBatchedTokens)}); err != nil {
		return err
	}
	if err := v.LoRA.validate(); err != nil {
		return err
	}
	if v.ImagesPerPrompt != nil && (*v.ImagesPerPrompt < 0 || *v.ImagesPerPrompt > MaxImages) {
		return &InputError{FieldImagesPerPrompt, *v.ImagesPerPrompt, fmt.Sprintf("must be in 0..%d", MaxImages)}
	}
	return nil
}

// vllmNonTorchGiB is the memory vLLM counts as "non-torch" growth during
// profiling (cuBLAS/NCCL workspaces and the like, outside PyTorch's
// allocator). The published runs show 0.02–0.09 GiB; 0.1 is used.
const vllmNonTorchGiB = 0.1

// Sampler is the implementation of top-k/top-p that vLLM's profiling run
// exercises; it sets how many [max_num_seqs, vocab] float32 tensors are
// alive at the sampler's peak.
type Sampler string

// Samplers.
const (
	// SamplerFlashInfer: V1 with FlashInfer installed (the official
	// images): the float32 logits and their softmax.
	SamplerFlashInfer Sampler = "flashinfer"
	// SamplerPyTorch: vLLM's PyTorch top-k/top-p (V0 always; V1 without
	// FlashInfer, and V1 from v0.11.1, where vLLM PR #26859 made the
	// FlashInfer sampler opt-in, until PR #40376 turned it back on; by
	// then the alternative was a Triton kernel, whose peak is not
	// modelled; the planner does not switch by version, --sampler pytorch
	// does). Its peak is inside apply_top_k_top_p's logits.sort(dim=-1):
	// PyTorch's CUDA stable sort
	// (aten/src/ATen/native/cuda/SortStable.cu, segmented_sort_pairs, the
	// path for more than 128 rows of more than 4,096 entries) holds the
	// float32 logits (1), the sorted values (1) and int64 indices (2) it
	// returns, the int64 reverse indices it allocates as the sort's input
	// values (2), and cub's SortPairs temporary storage with its alternate
	// key and value buffers (1 + 2) — nine float32-sized tensors. The
	// softmax, cumsum and scatter that follow peak lower (six).
	SamplerPyTorch Sampler = "pytorch"
)

// samplerCopies is the number of float32 [seqs, vocab] tensors alive at
// the sampler's peak, per implementation (see Sampler).
var samplerCopies = map[Sampler]float64{SamplerFlashInfer: 2, SamplerPyTorch: 9}

// vllmActivation is the activation peak of vLLM's profiling run
// (gpu_model_runner.profile_run): a forward pass of max_num_batched_tokens
// dummy tokens, then the sampler on the last token of min(max_num_seqs,
// max_num_batched_tokens) dummy requests. The peak is the larger of:
//
//   - forward: per layer, the residual [T, hidden] and the MLP's gate_up
//     [T, 2 × intermediate] and activation [T, intermediate], 16-bit;
//   - sampler: the final hidden states [T, hidden] 16-bit, the logits
//     [S, vocab] 16-bit, and the sampler's float32 [S, vocab] tensors.
//
// For MoE models the MLP width is the experts a token visits
// (moe_intermediate × experts_per_token). Under tensor parallelism the
// MLP is split over the tp ranks; the residual and the sampler's
// vocabulary are whole on every rank (the logits are gathered).
//
// The vLLM code it follows (V1): profile_run calls
// _dummy_run(self.max_num_tokens, is_profile=True), which spreads the
// tokens over min(num_tokens, max_num_seqs) dummy requests and returns the
// hidden states with those of each request's last token, then
// _dummy_sampler_run(last_hidden_states): compute_logits (16-bit
// [S, vocab]), Sampler.forward's logits.to(torch.float32), and
// TopKTopPSampler with top_k and top_p set. With FlashInfer importable V1
// takes forward_cuda unless VLLM_USE_FLASHINFER_SAMPLER is set to 0 (the
// "is not False" test in v1/sample/ops/topk_topp_sampler.py), whose
// flashinfer_sample adds the float32 softmax: two float32 tensors. The
// PyTorch path (apply_top_k_top_p's sort, softmax, scatter, then
// random_sample's exponential noise) peaks at nine, during the sort. vLLM
// measures the peak as torch's allocated_bytes.all.peak over the run
// (MemorySnapshot in vllm/utils) minus what was allocated before it.
func vllmActivation(m *modelspec.Spec, tokens, seqs int, s Sampler, tp int) (forward, sampler int64) {
	T, S := int64(tokens), int64(min(seqs, tokens))
	inter := int64(m.Intermediate)
	if m.Experts > 0 && m.MoEIntermediate > 0 {
		inter = int64(m.MoEIntermediate * max(m.ExpertsPerToken, 1))
	}
	forward = T * (int64(m.Hidden) + 3*inter/int64(max(tp, 1))) * 2
	k, ok := samplerCopies[s]
	if !ok {
		k = samplerCopies[SamplerFlashInfer]
	}
	sampler = T*int64(m.Hidden)*2 + S*int64(m.Vocab)*2 + int64(k*float64(S*int64(m.Vocab))*4)
	return forward, sampler
}

// FlashInfer's device buffers in vLLM (vllm/v1/attention/backends/
// flashinfer.py, FlashInferMetadataBuilder): one float workspace of
// VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE (default 394 MiB, vllm/envs.py)
// per builder (_get_workspace_buffer), and every FlashInfer wrapper it
// creates allocates an 8 MiB int workspace on the GPU (flashinfer/
// decode.py and prefill.py, _int_workspace_buffer). For full CUDA-graph
// decode the builder keeps one BatchDecodeWithPagedKVCacheWrapper per
// captured batch size (_decode_wrappers_cudagraph).
const (
	flashInferWorkspaceBytes    = 394 << 20
	flashInferIntWorkspaceBytes = 8 << 20
)

// vllmFullDecodeGraphs is how many full CUDA graphs of uniform decode
// batches vLLM captures by default (cudagraph_mode FULL_AND_PIECEWISE):
// the capture sizes [1, 2, 4] + range(8, 256, 8) + range(256, max+1, 16)
// with max = min(2 × max_num_seqs, 512, max_num_batched_tokens)
// (vllm/config/vllm.py, _set_cudagraph_sizes), those of at most
// max_num_seqs tokens (one token per request).
func vllmFullDecodeGraphs(seqs, batched int) int {
	top := min(2*seqs, 512, batched)
	n := 0
	for s := 1; s <= min(top, seqs); s++ {
		if s == 1 || s == 2 || s == 4 || (s < 256 && s%8 == 0) || (s >= 256 && s%16 == 0) {
			n++
		}
	}
	return n
}

// vllmUsesFlashInferForFP8 reports whether vLLM must take FlashInfer as
// the attention backend for an fp8 KV cache on this GPU. Its first
// choice off Blackwell datacenter parts is FlashAttention
// (vllm/platforms/cuda.py, _get_backend_priorities), which takes an fp8
// cache only as FA3 on Hopper (vllm/attention/utils/fa_utils.py,
// flash_attn_supports_fp8: FA version 3 and compute capability 9.x).
// Everywhere else (Ampere, Ada, Blackwell: RTX 50xx are sm_120) fp8
// falls through to FlashInfer.
func vllmUsesFlashInferForFP8(gpuName string) bool {
	n := strings.ToLower(gpuName)
	for _, hopper := range []string{"h100", "h200", "h800", "h20", "gh200"} {
		if strings.Contains(n, hopper) {
			return false
		}
	}
	return true
}

// vllmFlashInferGiB is the memory vLLM's CUDA-graph estimate charges to
// the FlashInfer attention backend when an fp8 KV cache forces it (see
// vllmUsesFlashInferForFP8); 0 otherwise. From v0.21.0 the V1 worker runs
// profile_cudagraph_memory inside determine_available_memory and subtracts
// its estimate (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default):
// it captures the largest full decode graph, whose warm-up creates the
// builder's workspace and first cudagraph decode wrapper, and one more,
// and extrapolates that second graph's cost (its new 8 MiB wrapper) to
// the other full graphs (gpu_model_runner.py, profile_cudagraph_memory).
// The term is the workspace plus one int workspace per full decode graph.
// FlashAttention allocates no such buffers, so the auto/fp16 cache does
// not pay it; the CUDA graphs themselves, common to both, are not
// modelled. Not modelled either: Blackwell datacenter parts (sm_100),
// where vLLM prefers FlashInfer for every dtype. Callers apply the term
// only where vLLM charges graphs at all (vllmChargesGraphs): before
// v0.21.0, or with --enforce-eager, these buffers come out of the
// (1 − utilization) headroom, not the KV cache.
func vllmFlashInferGiB(gpuName string, d KVDtype, seqs, batched int) float64 {
	if d != KVFP8 || !vllmUsesFlashInferForFP8(gpuName) {
		return 0
	}
	b := flashInferWorkspaceBytes + vllmFullDecodeGraphs(seqs, batched)*flashInferIntWorkspaceBytes
	return float64(b) / GiB
}

// vllmChargesGraphs reports whether in's vLLM subtracts its CUDA-graph
// estimate from the KV budget: as VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
// says, whose default is on from v0.21.0; never with --enforce-eager (no
// graphs).
func vllmChargesGraphs(in *Inputs) bool {
	switch {
	case in.VLLM.EnforceEager || in.VLLM.GraphEstimate == GraphEstimateOff:
		return false
	case in.VLLM.GraphEstimate == GraphEstimateOn:
		return true
	}
	return in.VLLM.VLLMVersion.atLeast(vllmGraphEstimateDefault)
}

// flashInferFP8Warning says how far the FlashInfer term can be trusted.
// The one published record of the case (the seed's Qwen2.5-7B AWQ with
// fp8 KV on an RTX 5070 Ti, run in October 2026 with a vLLM the seed does
// not name) had 1.17 GiB less KV memory than its auto twin; the buffers
// vLLM's source accounts for explain 0.66 GiB, and the prediction came
// out 10.1% high.
func flashInferFP8Warning(gpu string, gib float64) string {
	return fmt.Sprintf("fp8 KV on %s: vLLM runs it on FlashInfer and charges FlashInfer's CUDA-graph buffers to the KV cache; "+
		"%.2f GiB of them are modelled, but on the one published record of this case (RTX 5070 Ti) vLLM took 0.51 GiB more "+
		"and the figure came out 10%% high: read it as an upper bound, or correct it with servebench calibrate --fit against your server's log",
		gpuOrDefault(gpu), gib)
}

// gpuOrDefault names the GPU in a message, or "this GPU" when unnamed.
func gpuOrDefault(gpu string) string {
	if gpu == "" {
		return "this GPU"
	}
	return gpu
}

// vllmPerLayerElems is the cached elements one token needs in one layer
// on one tensor-parallel rank: 2 × max(1, kv_heads/TP) × head_dim, or
// the whole MLA latent, which every rank keeps (vLLM's MLA backends
// replicate the compressed KV on every tensor-parallel rank instead of
// splitting it).
func vllmPerLayerElems(m *modelspec.Spec, tp int) int {
	if m.IsMLA() {
		return m.KVLoraRank + m.QKRopeHeadDim
	}
	return 2 * KVHeadsPerRank(m.KVHeads, tp, false) * m.HeadDim
}

// vllmParallelNonTorchGiB is what tensor or pipeline parallelism adds to
// vLLM's non-torch memory: NCCL's communicators and buffers and the
// custom all-reduce's IPC buffers, allocated outside PyTorch. A published
// TP=2 start-up (vllm-project/vllm#13061, two RTX 4090s) logs
// "non_torch_memory takes 0.25GiB", 0.15 above the single-GPU 0.1.
const vllmParallelNonTorchGiB = 0.15

// vllmWorker is one vLLM worker's memory terms (GiB) and the KV blocks it
// alone could hold.
type vllmWorker struct {
	share                                 DeviceShare
	requested, weights, act, nonTorch, fi float64
	lora, vision, avail                   float64
	groupSize, blocks                     int
}

// vllmPredict follows vLLM's Worker.determine_available_memory (V1
// gpu_worker, and V0's determine_num_available_blocks) on every worker
// of a tensor × pipeline parallel server:
//
//	requested  = total_gpu_memory × gpu_memory_utilization
//	available  = requested − weights − activation peak − non-torch
//	             − FlashInfer buffers (fp8 KV off Hopper, v0.21.0 and later;
//	               vllmFlashInferGiB)
//	num_blocks = ⌊available / (block_size × bytes per token per layer × layers)⌋
//
// then, as kv_cache_utils.get_kv_cache_configs does, the smallest
// num_blocks over the workers for all of them. Each worker's weights are
// its pipeline stage's layers sharded over the tensor-parallel ranks
// (rankShare), plus LoRA's stacked buffers; its activation peak is the
// profiling forward pass with the MLP split over the ranks, the sampler
// (last stage only, full vocabulary on every rank) and, on the first
// stage, a vision-language model's encoder run on the largest images
// (visionEncoderBytes). A model that mixes full and sliding-window or
// chunked layers gets the hybrid KV-cache manager's groups (vllmKVLayout):
// blocks are counted per group-size layers, and the "GPU KV cache size"
// is blocks / groups × block size.
//
// Before v0.21.0 (the versions whose logs are in kv-capacity-logs.json)
// CUDA graphs are captured after the KV cache is allocated and come out
// of the (1 − utilization) headroom. From v0.21.0 vLLM subtracts an
// estimate of them; of it only the FlashInfer buffers are modelled (see
// vllmFlashInferGiB): the graphs common to every KV dtype are not, and
// the figure is high by their size (the seed's auto record comes out
// 0.22 GiB, 2.6%, high, which they may explain). One block is vLLM
// V1's null block (never holds tokens); it is inside num_blocks as the
// server reports it.
func vllmPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	m := &in.Model
	var warns []string
	if d.isGGMLQuant() {
		warns = append(warns, "vLLM has no "+string(d)+" KV cache (use auto, fp16, bf16 or fp8)")
	}
	warns = append(warns, in.VLLM.LoRA.warnings()...)
	if in.VLLM.LoRA != nil && m.IsMoE() {
		warns = append(warns, "LoRA on an MoE model: only attention projections and dense MLPs are counted; vLLM's fused-MoE LoRA buffers are not modelled")
	}
	hybrid := !in.VLLM.DisableHybridKV && in.VLLM.VLLMVersion.atLeast(vllmHybridKVVersion)
	layout := vllmKVLayout(m, hybrid)
	if !layout.hybrid() && hasLocalLayers(m) {
		warns = append(warns, "sliding-window and chunked layers are counted as full attention (vLLM before 0.10.0, or --disable-hybrid-kv-cache-manager): the figure is what such a vLLM allocates")
	}
	kb := d.BytesPerElement(m.Dtype)
	tp, pp := max(in.TensorParallel, 1), max(in.PipelineParallel, 1)
	page := float64(in.VLLM.BlockSize*vllmPerLayerElems(m, tp)) * kb
	workers, imageItems, imageTokens := vllmWorkers(in, weightsBytes, d, layout, page)
	p := Prediction{
		KVCacheDtype: string(d), BytesPerElement: kb, BlockSize: in.VLLM.BlockSize, Context: in.Context, Fits: true,
		BytesPerToken: float64(m.Layers*vllmPerLayerElems(m, tp)) * kb, ImageItems: imageItems, ImageTokens: imageTokens,
	}
	limiting := 0
	short := 0.0
	for i, w := range workers {
		if w.avail <= 0 {
			p.Fits = false
			short = max(short, -w.avail)
		}
		if w.blocks < workers[limiting].blocks {
			limiting = i
		}
	}
	lw := workers[limiting]
	p.WeightsGiB, p.RequestedGiB, p.ActivationGiB = round(lw.weights, 3), round(lw.requested, 3), round(lw.act, 3)
	p.NonTorchGiB, p.AttentionBackendGiB = round(lw.nonTorch, 3), round(lw.fi, 3)
	p.VisionGiB, p.LoRAGiB = round(lw.vision, 3), round(lw.lora, 3)
	if layout.hybrid() {
		p.KVGroups = len(layout.groups)
	}
	if !p.Fits {
		p.ShortfallGiB = round(short, 2)
		for _, w := range workers {
			p.Devices = append(p.Devices, w.share)
		}
		return p, warns
	}
	if lw.fi > 0 {
		warns = append(warns, flashInferFP8Warning(in.GPUName, lw.fi))
	}
	p.Blocks = lw.blocks
	for _, w := range workers {
		w.share.KVGiB = round(float64(p.Blocks)*page*float64(w.groupSize)/GiB, 3)
		p.Devices = append(p.Devices, w.share)
	}
	p.PredictedTokens = layout.tokens(p.Blocks, in.VLLM.BlockSize)
	p.KVGiB = p.Devices[limiting].KVGiB
	perSeq := layout.blocksPerSequence(m, in.Context, in.VLLM.MaxNumBatchedTokens, in.VLLM.BlockSize)
	p.BlocksPerSequence = perSeq
	p.MaxConcurrency = round(float64(p.Blocks)/float64(perSeq), 2)
	if p.Blocks > 0 && perSeq > p.Blocks-1 {
		warns = append(warns, "one sequence of the full context does not fit the KV cache; vLLM refuses to start (lower --context / max_model_len)")
	}
	if tp*pp > 1 && len(workers) > 1 && workers[limiting].share.Name != workers[0].share.Name {
		warns = append(warns, fmt.Sprintf("the GPUs differ: every worker gets the blocks of the smallest (%s), the others leave memory unused", gpuOrDefault(workers[limiting].share.Name)))
	}
	return p, warns
}

// hasLocalLayers reports whether m has sliding-window or chunked layers.
func hasLocalLayers(m *modelspec.Spec) bool {
	for i := 0; i < m.Layers; i++ {
		if m.Kind(i) != modelspec.FullAttention {
			return true
		}
	}
	return false
}

// vllmWorkers computes every worker's memory terms (see vllmPredict).
func vllmWorkers(in *Inputs, weightsBytes int64, d KVDtype, layout kvLayout, page float64) ([]vllmWorker, int, int) {
	m := &in.Model
	tp, pp := max(in.TensorParallel, 1), max(in.PipelineParallel, 1)
	devs := in.devices()
	stages := ppPartition(m.Layers, pp)
	items, tokens := 0, 0
	if m.Vision != nil {
		items, tokens = vllmImageItems(m.Vision, in.VLLM.MaxNumBatchedTokens, in.VLLM.MaxNumSeqs, in.VLLM.ImagesPerPrompt)
	}
	fi := 0.0
	if vllmChargesGraphs(in) {
		fi = vllmFlashInferGiB(in.GPUName, d, in.VLLM.MaxNumSeqs, in.VLLM.MaxNumBatchedTokens)
	}
	nonTorch := vllmNonTorchGiB
	if tp*pp > 1 {
		nonTorch += vllmParallelNonTorchGiB
	}
	var workers []vllmWorker
	first := 0
	for s := 0; s < pp; s++ {
		n := stages[s]
		layers := make([]int, n)
		for i := range layers {
			layers[i] = first + i
		}
		firstStage, lastStage := s == 0, s == pp-1
		for r := 0; r < tp; r++ {
			rank := s*tp + r
			dev := devs[min(rank, len(devs)-1)]
			w := vllmWorker{requested: dev.MemoryGiB * in.VLLM.Utilization, nonTorch: nonTorch, fi: fi, groupSize: layout.groupSize(first, n)}
			if in.WeightsGiB > 0 {
				w.weights = in.WeightsGiB
			} else {
				w.weights = float64(weightsBytes) * rankShare(m, in.Quant, tp, first, n, firstStage, lastStage) / GiB
				w.lora = float64(loraBytes(m, in.VLLM.LoRA, tp, layers, loraDtypeBytes(m))) / GiB
				w.weights += w.lora
			}
			fwd, smp := vllmActivation(m, in.VLLM.MaxNumBatchedTokens, in.VLLM.MaxNumSeqs, in.VLLM.Sampler, tp)
			if !lastStage {
				smp = 0
			}
			lm := float64(max(fwd, smp))
			if firstStage && m.Vision != nil && items > 0 {
				w.vision = float64(visionEncoderBytes(m.Vision, items, tp)) / GiB
				// the encoder's outputs stay cached through the text run
				lm += float64(items*tokens*m.Hidden) * 2
			}
			w.act = max(lm/GiB, w.vision)
			w.avail = w.requested - w.weights - w.act - w.nonTorch - w.fi
			if w.avail > 0 && w.groupSize > 0 {
				w.blocks = int(math.Floor(w.avail * GiB / (page * float64(w.groupSize))))
			}
			w.share = DeviceShare{Device: dev, Rank: rank, Stage: s, TensorRank: r, Layers: n, FirstLayer: first,
				KVHeads: KVHeadsPerRank(m.KVHeads, tp, m.IsMLA()), WeightsGiB: round(w.weights, 3), ActivationGiB: round(w.act, 3),
				CommGiB: round(w.nonTorch-vllmNonTorchGiB, 3), VisionGiB: round(w.vision, 3), LoRAGiB: round(w.lora, 3),
				AvailableKVGiB: round(w.avail, 3), Blocks: w.blocks}
			workers = append(workers, w)
		}
		first += n
	}
	return workers, items, tokens
}

// loraDtypeBytes is the bytes of LoRA's stacked weights: vLLM's
// lora_dtype "auto" is the model's dtype.
func loraDtypeBytes(m *modelspec.Spec) float64 {
	if strings.Contains(strings.ToLower(m.Dtype), "32") {
		return 4
	}
	return 2
}
