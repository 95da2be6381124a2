package plan

import "github.com/servebench/servebench/modelspec"

// vllmImageItems is how many of the largest images vLLM's profiling run
// encodes at once (vllm/v1/worker/gpu_model_runner.py profile_run, with
// the multimodal budget of vllm/multimodal/budget.py): the encoder
// budget is max(max_num_batched_tokens, the tokens of the largest image),
// and the batch is as many images as fit it, at most
// --limit-mm-per-prompt × max_num_seqs and at least one. Its log line is
// "Encoder cache will be initialized with a budget of N tokens, and
// profiled with K image items of the maximum feature size". limit nil is
// vLLM's default (no limit below the budget's); 0 turns images off.
func vllmImageItems(v *modelspec.VisionSpec, batched, seqs int, limit *int) (items, tokens int) {
	tokens = v.Tokens()
	if tokens <= 0 || (limit != nil && *limit == 0) {
		return 0, tokens
	}
	budget := max(batched, tokens)
	items = max(budget/tokens, 1)
	if limit != nil {
		items = min(items, max(*limit*max(seqs, 1), 1))
	}
	return items, tokens
}

// Live tensors at an encoder block's peak, in units of (patches × width)
// 16-bit elements. vLLM's Qwen2.5-VL vision attention (v0.11,
// vllm/model_executor/models/qwen2_5_vl.py, Qwen2_5_VisionAttention)
// keeps the block input (1), the fused qkv output (3) and contiguous
// copies of q, k and v (3), concatenates q and k (2) and rotates them in
// float32 (apply_rotary_pos_emb_vision: a float32 copy (4), the float32
// result of vllm_flash_attn's rotary kernel (4), cast back (2)): 19.
// Encoders without rotary embeddings (SigLIP) stop at the input, qkv,
// the copies and the attention output: 8. The MLP's peak is the input,
// the residual and the normed input (3) and the MLP width (fc1 and its
// activation; gate/up and the activation when gated).
const (
	visionRotaryAttnUnits = 19
	visionPlainAttnUnits  = 8
)

// visionRotary reports whether an encoder rotates q and k (Qwen2-VL,
// Qwen2.5-VL and Llama 4 use 2-D rotary embeddings; SigLIP does not).
func visionRotary(v *modelspec.VisionSpec) bool { return v.SpatialMerge > 1 || v.MaxTiles > 1 }

// visionEncoderBytes is the activation peak of encoding items of the
// largest image on one of tp ranks (vLLM shards the encoder's
// projections over the tensor-parallel ranks; the block input stays
// whole): patches × the larger of the attention and MLP peaks (see the
// units above), plus the pixel values, which arrive in float32 and are
// cast to 16 bits (6 bytes per value).
func visionEncoderBytes(v *modelspec.VisionSpec, items, tp int) int64 {
	if items <= 0 {
		return 0
	}
	tp = max(tp, 1)
	p, h, i := float64(v.Patches()*items), float64(v.Hidden), float64(v.Intermediate)
	attn := float64(visionPlainAttnUnits)
	if visionRotary(v) {
		attn = visionRotaryAttnUnits
	}
	mlpMats := 2.0
	if v.GatedMLP {
		mlpMats = 3
	}
	attnPeak := h * (1 + (attn-1)/float64(tp))
	mlpPeak := 3*h + mlpMats*i/float64(tp)
	return int64(p*max(attnPeak, mlpPeak)*2 + p*float64(v.PixelValues())*6)
}
