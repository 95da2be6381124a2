package plan

import (
	"fmt"
	"math"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/gguf"
	"github.com/servebench/servebench/modelspec"
)

// LlamaCppSettings are llama.cpp's own settings, which Ollama shares
// (it runs llama.cpp, and sets them through its own names): the layers
// offloaded and their split over the GPUs, the system memory for the
// rest, the slots, the micro-batch and flash attention. Zero values take
// each family's defaults (see defaults).
type LlamaCppSettings struct {
	// NGPULayers is llama.cpp's --n-gpu-layers and Ollama's num_gpu: how
	// many layers go to the GPUs, counting the output layer as the last
	// one (n_layer + 1 = everything); nil means all for llama.cpp and
	// Ollama's own estimate for Ollama (EstimateGPULayers).
	NGPULayers *int
	// TensorSplit is llama.cpp's --tensor-split: the proportion of the
	// offloaded layers each GPU takes; nil splits by GPU memory.
	TensorSplit []float64
	// RAMGiB is the system memory for what llama.cpp and Ollama keep on
	// the CPU (0 = not checked).
	RAMGiB float64
	// Parallel is llama.cpp --parallel / OLLAMA_NUM_PARALLEL (slots).
	Parallel int
	// UBatch is llama.cpp's n_ubatch.
	UBatch int
	// FlashAttention is llama.cpp -fa / OLLAMA_FLASH_ATTENTION.
	FlashAttention bool
}

// defaults fills the zero settings: parallel slots (the family's own
// default: llama-server's -np 1, Ollama's OLLAMA_NUM_PARALLEL) and
// n_ubatch 512.
func (l *LlamaCppSettings) defaults(parallel int) {
	if l.Parallel == 0 {
		l.Parallel = parallel
	}
	if l.UBatch == 0 {
		l.UBatch = 512
	}
}

// check checks the settings against their ranges (zero: the default):
// slots and micro-batch not negative and within their Limits, the layers
// on GPUs, the tensor split (one share for each of the gpus, not all
// zero) and the host memory. validate calls it whichever family is
// planned, so that a setting out of range is refused even where it is
// not used.
func (l *LlamaCppSettings) check(gpus int) error {
	if err := checkNonNegative(signCheck{FieldParallel, l.Parallel}, signCheck{FieldUBatch, l.UBatch}); err != nil {
		return err
	}
	if err := checkLimits(limitCheck{LimitParallel, float64(l.Parallel)}, limitCheck{LimitUBatch, float64(l.UBatch)}); err != nil {
		return err
	}
	if l.NGPULayers != nil && (*l.NGPULayers < 0 || *l.NGPULayers > MaxGPULayers) {
		return &InputError{FieldNGPULayers, *l.NGPULayers, fmt.Sprintf("must be in 0..%d", MaxGPULayers)}
	}
	if err := l.checkSplit(gpus); err != nil {
		return err
	}
	if !(l.RAMGiB >= 0) || l.RAMGiB > MaxRAMGiB {
		return &InputError{FieldRAMGiB, l.RAMGiB, fmt.Sprintf("must be >= 0 and at most %d", MaxRAMGiB)}
	}
	return nil
}

// checkSplit checks the tensor split, when given: one share for each of
// the gpus, each >= 0 and at most 1000000, not all zero.
func (l *LlamaCppSettings) checkSplit(gpus int) error {
	if len(l.TensorSplit) == 0 {
		return nil
	}
	if len(l.TensorSplit) != gpus {
		return &InputError{FieldTensorSplit, len(l.TensorSplit), fmt.Sprintf("values for %d GPUs", gpus)}
	}
	sum := 0.0
	for _, v := range l.TensorSplit {
		if !(v >= 0) || v > 1e6 {
			return &InputError{FieldTensorSplit, v, "must be >= 0 and at most 1000000"}
		}
		sum += v
	}
	if !(sum > 0) {
		return &InputError{FieldTensorSplit, sum, "must not be all zero"}
	}
	return nil
}

// llamaPad is llama.cpp's KV-cache size padding (GGML_PAD(n_ctx, 256)).
const llamaPad = 256

// kvGGML maps KV dtypes to their GGML types, for ggml_row_size.
var kvGGML = map[KVDtype]gguf.Type{
	KVF32: gguf.TypeF32, KVFP16: gguf.TypeF16, KVBF16: gguf.TypeBF16,
	KVQ8_0: gguf.TypeQ8_0, KVQ4_0: gguf.TypeQ4_0, KVQ4_1: gguf.TypeQ4_1,
	KVQ5_0: gguf.TypeQ5_0, KVQ5_1: gguf.TypeQ5_1, KVIQ4NL: gguf.TypeIQ4_NL,
}

// rowBytes is ggml_row_size: the bytes of n elements of type d.
func rowBytes(d KVDtype, n int64) int64 {
	return kvGGML[d].RowBytes(n)
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
	// typeK, typeV, nK and nV are the element types and row widths, for
	// the per-layer split.
	typeK, typeV KVDtype
	nK, nV       int64
}

// MiB is the "KV self size" / "llama_kv_cache: size" figure in MiB.
func (k llamaKV) MiB() float64 { return float64(k.KBytes+k.VBytes) / MiB }

// llamaKVSize computes llama.cpp's KV buffers (llama_kv_cache constructor:
// per layer, ggml_new_tensor_3d(type_k, n_embd_k_gqa, kv_size) and the same
// for V) for nCtx total context cells (padded to 256) and nSeq parallel
// sequences. Sliding-window (and Llama 4's chunked) layers get
// llama_kv_cache_iswa's smaller size: min(kv_size, pad(n_swa × n_seq +
// n_ubatch, 256)). MLA models cache K as
// kv_lora_rank + qk_rope_head_dim and V as kv_lora_rank per layer, as
// llama.cpp does for DeepSeek since its MLA support.
func llamaKVSize(m *modelspec.Spec, nCtx, nSeq, nUBatch int, typeK, typeV KVDtype) (llamaKV, error) {
	for _, t := range []KVDtype{typeK, typeV} {
		if _, ok := kvGGML[t]; !ok {
			return llamaKV{}, fmt.Errorf("llama.cpp has no KV cache type %q", t)
		}
	}
	kv := llamaKV{Cells: padCtx(nCtx), typeK: typeK, typeV: typeV}
	kv.SWACells = kv.Cells
	if w := localWindow(m); w > 0 {
		kv.SWACells = min(kv.Cells, padCtx(w*max(nSeq, 1)+nUBatch))
	}
	nK, nV := int64(m.EmbdGQA()), int64(m.EmbdGQA())
	if m.IsMLA() {
		nK, nV = int64(m.KVLoraRank+m.QKRopeHeadDim), int64(m.KVLoraRank)
	}
	kv.nK, kv.nV = nK, nV
	for i := 0; i < m.Layers; i++ {
		cells := int64(kv.Cells)
		if m.Kind(i) != modelspec.FullAttention {
			cells = int64(kv.SWACells)
		}
		kv.KBytes += cells * rowBytes(typeK, nK)
		kv.VBytes += cells * rowBytes(typeV, nV)
	}
	return kv, nil
}

// localWindow is the window llama.cpp's iSWA cache gives a model's local
// layers: the sliding window, or Llama 4's attention chunk (llama.cpp
// sets n_swa to attention_chunk_size with LLAMA_SWA_TYPE_CHUNKED).
func localWindow(m *modelspec.Spec) int {
	if m.SlidingWindow > 0 {
		return m.SlidingWindow
	}
	return m.AttentionChunk
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
// cells; the layers (weights and KV) are placed on the GPUs and the CPU
// as llama.cpp's load_tensors does (llamaPlace); Fits says whether every
// GPU holds its weights, KV and compute buffer (and the CPU its part
// within RAMGiB, when given), and FitTokens how many cells would fit.
func llamaPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	var warns []string
	cellsReq, perSeq := in.Context, in.Context/max(in.LlamaCpp.Parallel, 1)
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
		cellsReq, perSeq = in.Context*in.LlamaCpp.Parallel, in.Context
		eff, w = ollamaKVType(in, eff)
		warns = append(warns, w...)
	} else if eff.isGGMLQuant() && !in.LlamaCpp.FlashAttention {
		warns = append(warns, "llama.cpp needs flash attention (-fa) for a quantized V cache; pass --flash-attn")
	}
	if in.Model.IsMLA() {
		warns = append(warns, "llama.cpp MLA cache: K = kv_lora_rank + qk_rope_head_dim, V = kv_lora_rank per layer")
	}
	kv, err := llamaKVSize(&in.Model, cellsReq, in.LlamaCpp.Parallel, in.LlamaCpp.UBatch, eff, eff)
	if err != nil {
		return Prediction{KVCacheDtype: string(d)}, []string{err.Error()}
	}
	bpt := float64(kv.KBytes+kv.VBytes) / float64(kv.Cells)
	comp := llamaComputeMiB(&in.Model, kv.Cells, min(in.LlamaCpp.UBatch, kv.Cells), in.LlamaCpp.FlashAttention)
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
	pl := llamaPlace(in, weightsBytes, kv, comp)
	p.Devices, p.Host, p.GPULayers, p.ModelLayers = pl.devices, pl.host, pl.gpuLayers, in.Model.Layers+1
	p.FitTokens = pl.fitCells
	for _, dv := range pl.devices {
		if dv.FreeGiB < 0 {
			p.Fits = false
			p.ShortfallGiB = max(p.ShortfallGiB, round(-dv.FreeGiB, 2))
		}
	}
	if pl.host != nil && !pl.host.Fits {
		p.Fits = false
		warns = append(warns, fmt.Sprintf("the %d layers left on the CPU need %.2f GiB of system memory, more than --ram-gib %.2f", pl.host.Layers, pl.host.WeightsGiB+pl.host.KVGiB, pl.host.RAMGiB))
	}
	if pl.host != nil && pl.host.Layers > 0 {
		warns = append(warns, fmt.Sprintf("%d of %d layers run on the CPU: every token waits for system memory, expect a large slowdown", pl.host.Layers, in.Model.Layers))
	}
	return p, warns
}

// llamaPlacement is where llama.cpp puts a model: per GPU its layers,
// weights, KV and compute buffer; on the CPU the rest.
type llamaPlacement struct {
	devices   []DeviceShare
	host      *HostShare
	gpuLayers int
	fitCells  int
}

// llamaLayerDevices assigns each of n_layer + 1 layers (the last is the
// output layer) to a GPU or the CPU (-1) as llama.cpp's load_tensors does
// (src/llama-model.cpp): the last n_gpu_layers layers are offloaded
// (i_gpu_start = max(n_layer − n_gpu_layers, 0), at most n_layer + 1 of
// them), and an offloaded layer il goes to the first GPU whose cumulative
// share of the split exceeds (il − i_gpu_start) / act_gpu_layers. split
// is --tensor-split or, by default, each GPU's memory.
func llamaLayerDevices(nLayer, nGPULayers int, split []float64) []int {
	out := make([]int, nLayer+1)
	total := 0.0
	for _, s := range split {
		total += s
	}
	cum := make([]float64, len(split))
	acc := 0.0
	for i, s := range split {
		acc += s
		cum[i] = acc / total
	}
	start := max(nLayer-nGPULayers, 0)
	act := min(nGPULayers, nLayer+1)
	for il := range out {
		if il < start || il-start >= act || len(split) == 0 {
			out[il] = -1
			continue
		}
		f := float64(il-start) / float64(act)
		dev := len(cum) - 1
		for i, c := range cum { // upper_bound: first cumulative share above f
			if c > f {
				dev = i
				break
			}
		}
		out[il] = dev
	}
	return out
}

// llamaLayerWeights is the bytes of each repeating layer and of the
// output layer (output.weight and output_norm) and the input embedding,
// from the GGUF file's tensors when the spec has them, else the whole
// weights split in proportion to the architecture's layer sizes.
func llamaLayerWeights(m *modelspec.Spec, q Quant, weightsBytes int64) (layers []int64, output, embd int64) {
	if len(m.LayerBytes) == m.Layers {
		output = m.OutputBytes + m.OutputNormBytes
		if output == m.OutputNormBytes { // tied: llama.cpp reuses token_embd as the output
			output += m.TokenEmbdBytes
		}
		return m.LayerBytes, output, m.TokenEmbdBytes
	}
	w := parts(m, q, 1)
	whole := float64(w.sum(0, m.Layers, true, true, m.TiedEmbeddings))
	scale := float64(weightsBytes) / whole
	layers = make([]int64, m.Layers)
	for i, b := range w.layers {
		layers[i] = int64(float64(b) * scale)
	}
	return layers, int64(float64(w.lmHead) * scale), int64(float64(w.embedding) * scale)
}

// llamaPlace places the model's layers, their KV and the compute buffer
// on in's GPUs and the CPU (see llamaLayerDevices and llamaLayerWeights).
// The KV cache of a layer lives with the layer (llama.cpp's default
// --kv-offload); the input embedding always stays on the CPU; every GPU
// that holds layers gets a compute buffer of the estimate.
func llamaPlace(in *Inputs, weightsBytes int64, kv llamaKV, compMiB float64) llamaPlacement {
	m := &in.Model
	devs := in.devices()
	ngl := m.Layers + 1
	if in.LlamaCpp.NGPULayers != nil {
		ngl = *in.LlamaCpp.NGPULayers
	}
	where := llamaLayerDevices(m.Layers, ngl, llamaSplit(in, devs))
	layerW, outW, embW := llamaLayerWeights(m, in.Quant, weightsBytes)
	kvLayer := func(i int) int64 {
		cells := int64(kv.Cells)
		if m.Kind(i) != modelspec.FullAttention {
			cells = int64(kv.SWACells)
		}
		return cells * (rowBytes(kv.typeK, kv.nK) + rowBytes(kv.typeV, kv.nV))
	}
	var pl llamaPlacement
	shares := make([]DeviceShare, len(devs))
	kvPerCell := make([]float64, len(devs))
	host := &HostShare{}
	hostW, hostKV := embW, int64(0)
	for i, d := range devs {
		shares[i] = DeviceShare{Device: d, Rank: i, FirstLayer: -1}
	}
	for il, dev := range where {
		wb, kb, isLayer := outW, int64(0), il < m.Layers
		if isLayer {
			wb, kb = layerW[il], kvLayer(il)
		}
		if dev < 0 {
			hostW += wb
			hostKV += kb
			host.Layers, host.Output = host.Layers+btoi(isLayer), host.Output || !isLayer
			continue
		}
		pl.gpuLayers++
		s := &shares[dev]
		if isLayer {
			if s.FirstLayer < 0 {
				s.FirstLayer = il
			}
			s.Layers++
			kvPerCell[dev] += float64(kb) / float64(kv.Cells)
		}
		s.WeightsGiB += float64(wb) / GiB
		s.KVGiB += float64(kb) / GiB
		s.KVMiB += float64(kb) / MiB
	}
	pl.fitCells = finishShares(shares, kvPerCell, compMiB)
	pl.devices = shares
	pl.host = llamaHost(in, host, hostW, hostKV)
	return pl
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// llamaSplit is the share of the layers each GPU gets: the tensor split
// given, else each GPU's memory (llama.cpp's default split by free
// memory).
func llamaSplit(in *Inputs, devs []Device) []float64 {
	if len(in.LlamaCpp.TensorSplit) > 0 {
		return in.LlamaCpp.TensorSplit
	}
	split := make([]float64, len(devs))
	for i, d := range devs {
		split[i] = d.MemoryGiB
	}
	return split
}

// finishShares gives each GPU holding layers its compute buffer, rounds
// its figures and works out its free memory, and returns the KV cells
// that fit on every GPU holding KV (kvPerCell: its KV bytes per cell), 0
// when none does.
func finishShares(shares []DeviceShare, kvPerCell []float64, compMiB float64) int {
	fit := math.MaxInt
	for i := range shares {
		s := &shares[i]
		if s.Layers > 0 || s.WeightsGiB > 0 {
			s.ComputeBufferMiB = round(compMiB, 2)
		}
		free := s.MemoryGiB - s.WeightsGiB - s.KVGiB - s.ComputeBufferMiB/1024
		s.FreeGiB = round(free, 3)
		if kvPerCell[i] > 0 {
			room := (s.MemoryGiB - s.WeightsGiB - s.ComputeBufferMiB/1024) * GiB / kvPerCell[i]
			fit = min(fit, int(math.Max(0, math.Floor(room))))
		}
		s.WeightsGiB, s.KVGiB, s.KVMiB = round(s.WeightsGiB, 3), round(s.KVGiB, 3), round(s.KVMiB, 2)
		if s.FirstLayer < 0 {
			s.FirstLayer = 0
		}
	}
	if fit == math.MaxInt {
		return 0
	}
	return fit
}

// llamaHost is the CPU's share of the placement, with the weights and KV
// bytes on it: there when it holds layers or the output, or when the
// host memory given is too small for what it holds; nil otherwise.
func llamaHost(in *Inputs, host *HostShare, hostW, hostKV int64) *HostShare {
	holds := host.Layers > 0 || host.Output
	if !holds && in.LlamaCpp.RAMGiB <= 0 {
		return nil
	}
	host.WeightsGiB, host.KVGiB, host.KVMiB, host.RAMGiB = round(float64(hostW)/GiB, 3), round(float64(hostKV)/GiB, 3), round(float64(hostKV)/MiB, 2), in.LlamaCpp.RAMGiB
	host.Fits = in.LlamaCpp.RAMGiB == 0 || float64(hostW+hostKV) <= in.LlamaCpp.RAMGiB*GiB
	if holds || !host.Fits {
		return host
	}
	return nil
}
