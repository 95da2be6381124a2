package plan

import (
	"fmt"
	"math"

	"github.com/servebench/servebench/backend"

	"github.com/servebench/servebench/modelspec"
)

// llamaPad is llama.cpp's KV-cache size padding (GGML_PAD(n_ctx, 256)).
const llamaPad = 256

// ggmlBlock is a GGML element type's block: blockElems elements stored in
// blockBytes bytes (ggml_type_traits: blck_size, type_size).
type ggmlBlock struct{ blockElems, blockBytes int64 }

// kvGGML maps KV dtypes to their GGML blocks, for ggml_row_size.
var kvGGML = map[KVDtype]ggmlBlock{
	KVF32: {1, 4}, KVFP16: {1, 2}, KVBF16: {1, 2},
	KVQ8_0: {32, 34}, KVQ4_0: {32, 18}, KVQ4_1: {32, 20},
	KVQ5_0: {32, 22}, KVQ5_1: {32, 24}, KVIQ4NL: {32, 18},
}

// rowBytes is ggml_row_size: the bytes of n elements of type d.
func rowBytes(d KVDtype, n int64) int64 {
	b := kvGGML[d]
	return n / b.blockElems * b.blockBytes
}

// padCtx rounds n_ctx up to llama.cpp's padding of 256 cells.
func padCtx(n int) int { return (n + llamaPad - 1) / llamaPad * llamaPad }

// llamaKV is llama.cpp's KV-cache allocation for a model.
type llamaKV struct {
	// Cells is the padded n_ctx of full-attention layers; SWACells the
	// cells of sliding-window layers.
	Cells, SWACells int
	// KBytes and VBytes are the K and V buffers over all layers.
	KBytes, VBytes int64
}

// MiB is the "KV self size" / "llama_kv_cache: size" figure in MiB.
func (k llamaKV) MiB() float64 { return float64(k.KBytes+k.VBytes) / MiB }

// llamaKVSize computes llama.cpp's KV buffers (llama_kv_cache constructor:
// per layer, ggml_new_tensor_3d(type_k, n_embd_k_gqa, kv_size) and the same
// for V) for nCtx total context cells (padded to 256) and nSeq parallel
// sequences. Sliding-window layers get llama_kv_cache_iswa's smaller size:
// min(kv_size, pad(n_swa × n_seq + n_ubatch, 256)). MLA models cache K as
// kv_lora_rank + qk_rope_head_dim and V as kv_lora_rank per layer, as
// llama.cpp does for DeepSeek since its MLA support.
func llamaKVSize(m *modelspec.Spec, nCtx, nSeq, nUBatch int, typeK, typeV KVDtype) (llamaKV, error) {
	for _, t := range []KVDtype{typeK, typeV} {
		if _, ok := kvGGML[t]; !ok {
			return llamaKV{}, fmt.Errorf("llama.cpp has no KV cache type %q", t)
		}
	}
	kv := llamaKV{Cells: padCtx(nCtx)}
	kv.SWACells = kv.Cells
	if m.SlidingWindow > 0 {
		kv.SWACells = min(kv.Cells, padCtx(m.SlidingWindow*max(nSeq, 1)+nUBatch))
	}
	nK, nV := int64(m.EmbdGQA()), int64(m.EmbdGQA())
	if m.IsMLA() {
		nK, nV = int64(m.KVLoraRank+m.QKRopeHeadDim), int64(m.KVLoraRank)
	}
	for i := 0; i < m.Layers; i++ {
		cells := int64(kv.Cells)
		if m.Kind(i) == modelspec.SlidingAttention {
			cells = int64(kv.SWACells)
		}
		kv.KBytes += cells * rowBytes(typeK, nK)
		kv.VBytes += cells * rowBytes(typeV, nV)
	}
	return kv, nil
}

// llamaComputeMiB estimates llama.cpp's compute buffer as the larger of
// two peaks of one micro-batch: the f32 logits (n_vocab × n_ubatch × 4)
// plus two f32 FFN activations (n_ff × n_ubatch × 4 each); and, without
// flash attention, the f32 attention scores KQ (n_kv × n_ubatch × n_head
// × 4) and a quarter more for the softmax. It is an estimate (the graph
// allocator reuses memory in ways that depend on the backend): against
// published and testbed logs it gives 613 MiB for Llama-3.1-8B with flash
// attention (613.01 logged), 80 MiB for the testbed's tiny model (80.51),
// but 237 for a Mistral-7B SYCL run without flash attention (164.01) and
// 386 for GLM-4-32B on CPU (308.0).
func llamaComputeMiB(m *modelspec.Spec, nKV, nUBatch int, flashAttn bool) float64 {
	inter := m.Intermediate
	if m.MoEIntermediate > 0 && m.Experts > 0 {
		inter = m.MoEIntermediate * max(m.ExpertsPerToken, 1)
	}
	ub := int64(nUBatch)
	est := float64(int64(m.Vocab)*ub*4 + 2*int64(inter)*ub*4)
	if !flashAttn {
		est = max(est, 1.25*float64(int64(nKV)*ub*int64(m.Heads)*4))
	}
	return est / MiB
}

// llamaPredict is the llama.cpp and Ollama capacity: the KV cache is sized
// by the context, not by free memory, so the figure is the configured
// cells; Fits says whether weights + KV + compute buffer fit the GPU, and
// FitTokens how many cells would.
func llamaPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	var warns []string
	cellsReq, perSeq := in.Context, in.Context/max(in.Parallel, 1)
	eff := d
	if d == KVAuto {
		eff = KVFP16
	}
	if d == KVFP8 {
		warns = append(warns, "llama.cpp has no fp8 KV cache; fp8 is shown as q8_0")
		eff = KVQ8_0
	}
	if in.Server == backend.Ollama {
		var w []string
		cellsReq, perSeq = in.Context*in.Parallel, in.Context
		eff, w = ollamaKVType(in, eff)
		warns = append(warns, w...)
	} else if eff.isGGMLQuant() && !in.FlashAttention {
		warns = append(warns, "llama.cpp needs flash attention (-fa) for a quantized V cache; pass --flash-attn")
	}
	if in.Model.IsMLA() {
		warns = append(warns, "llama.cpp MLA cache: K = kv_lora_rank + qk_rope_head_dim, V = kv_lora_rank per layer")
	}
	kv, err := llamaKVSize(&in.Model, cellsReq, in.Parallel, in.UBatch, eff, eff)
	if err != nil {
		return Prediction{KVCacheDtype: string(d)}, []string{err.Error()}
	}
	bpt := float64(kv.KBytes+kv.VBytes) / float64(kv.Cells)
	comp := llamaComputeMiB(&in.Model, kv.Cells, min(in.UBatch, kv.Cells), in.FlashAttention)
	p := Prediction{
		KVCacheDtype: string(d), BytesPerElement: eff.BytesPerElement(""), PredictedTokens: kv.Cells,
		WeightsGiB: round(float64(weightsBytes)/GiB, 3), KVGiB: round(float64(kv.KBytes+kv.VBytes)/GiB, 3),
		BytesPerToken: round(bpt, 2), Context: perSeq, KVMiB: round(kv.MiB(), 2), Cells: kv.Cells,
		ComputeBufferMiB: round(comp, 2), Fits: true,
		MaxConcurrency: round(concurrency(kv.Cells, perSeq), 2),
	}
	if eff != d {
		p.KVCacheDtype = string(d) + "→" + string(eff)
	}
	free := in.GPUGiB*GiB - float64(weightsBytes) - comp*MiB
	p.FitTokens = int(math.Max(0, math.Floor(free/bpt)))
	if need := float64(weightsBytes) + comp*MiB + float64(kv.KBytes+kv.VBytes); need > in.GPUGiB*GiB {
		p.Fits = false
		p.ShortfallGiB = round((need-in.GPUGiB*GiB)/GiB, 2)
	}
	return p, warns
}
