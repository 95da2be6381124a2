package plan

import (
	"math"
	"strings"
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

// vllmDefaults returns vLLM's default max_num_seqs and
// max_num_batched_tokens for a GPU.
func vllmDefaults(gpuName string, gib float64) (seqs, batched int) {
	if gib >= 70 && !strings.Contains(strings.ToLower(gpuName), "a100") {
		return vllmLargeMaxNumSeqs, vllmLargeMaxNumBatchedTokens
	}
	return vllmDefaultMaxNumSeqs, vllmDefaultMaxNumBatchedTokens
}

// VLLMNonTorchGiB is the memory vLLM counts as "non-torch" growth during
// profiling (cuBLAS/NCCL workspaces and the like, outside PyTorch's
// allocator). The published runs show 0.02–0.09 GiB; 0.1 is used.
const VLLMNonTorchGiB = 0.1

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
	// FlashInfer): float32 logits, sorted values, int64 sort indices (two
	// float32-sized tensors), softmax of the sorted values, its cumsum,
	// the scattered-back logits and the final probabilities — eight.
	SamplerPyTorch Sampler = "pytorch"
)

// samplerCopies is the number of float32 [seqs, vocab] tensors alive at
// the sampler's peak, per implementation (see Sampler).
var samplerCopies = map[Sampler]float64{SamplerFlashInfer: 2, SamplerPyTorch: 8}

// VLLMActivation is the activation peak of vLLM's profiling run
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
// (moe_intermediate × experts_per_token).
func VLLMActivation(m *ModelSpec, tokens, seqs int, s Sampler) (forward, sampler int64) {
	T, S := int64(tokens), int64(min(seqs, tokens))
	inter := int64(m.Intermediate)
	if m.Experts > 0 && m.MoEIntermediate > 0 {
		inter = int64(m.MoEIntermediate * max(m.ExpertsPerToken, 1))
	}
	forward = T * (int64(m.Hidden) + 3*inter) * 2
	k, ok := samplerCopies[s]
	if !ok {
		k = samplerCopies[SamplerFlashInfer]
	}
	sampler = T*int64(m.Hidden)*2 + S*int64(m.Vocab)*2 + int64(k*float64(S*int64(m.Vocab))*4)
	return forward, sampler
}

// vllmBytesPerToken is vLLM's KV page bytes per token over all layers:
// full attention 2 × kv_heads × head_dim per layer; MLA one latent of
// kv_lora_rank + qk_rope_head_dim per layer.
func vllmBytesPerToken(m *ModelSpec, kb float64) float64 {
	return float64(m.Layers*m.KVElementsPerToken()) * kb
}

// vllmPredict follows vLLM's Worker.determine_available_memory (V1
// gpu_worker, and V0's determine_num_available_blocks):
//
//	requested  = total_gpu_memory × gpu_memory_utilization
//	available  = requested − weights − activation peak − non-torch
//	num_blocks = ⌊available / (block_size × bytes_per_token)⌋
//	"GPU KV cache size" = num_blocks × block_size tokens
//	"Maximum concurrency for L tokens per request"
//	           = num_blocks / ⌈L / block_size⌉
//
// CUDA graphs are captured after the KV cache is allocated and come out
// of the (1 − utilization) headroom in the versions whose logs are in
// kv-capacity-logs.json, so they are not subtracted. One block is vLLM
// V1's null block (never holds tokens); it is inside num_blocks as the
// server reports it.
func vllmPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	var warns []string
	if d.IsGGMLQuant() {
		warns = append(warns, "vLLM has no "+string(d)+" KV cache (use auto, fp16, bf16 or fp8)")
	}
	if in.Model.SlidingWindow > 0 {
		warns = append(warns, "sliding-window layers are counted as full attention (vLLM's hybrid allocator gives them fewer blocks; the figure is a lower bound)")
	}
	fwd, smp := VLLMActivation(&in.Model, in.MaxNumBatchedTokens, in.MaxNumSeqs, in.Sampler)
	act := float64(max(fwd, smp)) / GiB
	kb := d.Bytes(in.Model.Dtype)
	bpt := vllmBytesPerToken(&in.Model, kb)
	req := in.GPUGiB * in.Utilization
	w := float64(weightsBytes) / GiB
	avail := req - w - act - VLLMNonTorchGiB
	p := Prediction{
		KVCacheDtype: string(d), BytesPerElement: kb, BlockSize: in.BlockSize,
		WeightsGiB: round(w, 3), BytesPerToken: bpt, Context: in.Context,
		RequestedGiB: round(req, 3), ActivationGiB: round(act, 3), NonTorchGiB: VLLMNonTorchGiB, Fits: true,
	}
	if avail <= 0 {
		p.Fits, p.ShortfallGiB = false, round(-avail, 2)
		return p, warns
	}
	p.Blocks = int(math.Floor(avail * GiB / (float64(in.BlockSize) * bpt)))
	p.PredictedTokens = p.Blocks * in.BlockSize
	p.KVGiB = round(float64(p.PredictedTokens)*bpt/GiB, 3)
	perReq := (in.Context + in.BlockSize - 1) / in.BlockSize
	p.MaxConcurrency = round(float64(p.Blocks)/float64(perReq), 2)
	if p.Blocks > 0 && perReq > p.Blocks-1 {
		warns = append(warns, "one sequence of the full context does not fit the KV cache; vLLM refuses to start (lower --context / max_model_len)")
	}
	return p, warns
}
