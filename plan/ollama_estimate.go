package plan

import (
	"slices"
	"strings"

	"github.com/servebench/servebench/modelspec"
)

// OllamaEstimate is Ollama's own memory estimate, which decides how many
// layers it offloads: llm/memory.go EstimateGPULayers with the graph
// sizes of fs/ggml/ggml.go GraphSize, at Ollama v0.6.5 (the testbed's
// version, github.com/ollama/ollama@v0.6.5). Its fields are what Ollama's
// "offload" log line prints (layers.*, memory.*), in bytes.
type OllamaEstimate struct {
	// Parallel is the OLLAMA_NUM_PARALLEL the scheduler settled on
	// (unset: 4 if the model then fits the GPUs whole, else 1) and Ctx
	// the context it estimated for (num_ctx × Parallel).
	Parallel int `json:"parallel"`
	Ctx      int `json:"ctx"`
	// Layers is layers.offload, ModelLayers layers.model (block_count +
	// 1), TensorSplit layers.split (layers per GPU, passed to the runner
	// as --tensor-split).
	Layers      int   `json:"layers_offload"`
	ModelLayers int   `json:"layers_model"`
	TensorSplit []int `json:"layers_split,omitempty"`
	// KVBytes is memory.required.kv, GraphFullBytes and
	// GraphPartialBytes memory.graph.full and .partial,
	// WeightsRepeatingBytes and WeightsNonRepeatingBytes
	// memory.weights.repeating and .nonrepeating.
	KVBytes                  int64 `json:"kv_bytes"`
	GraphFullBytes           int64 `json:"graph_full_bytes"`
	GraphPartialBytes        int64 `json:"graph_partial_bytes"`
	WeightsRepeatingBytes    int64 `json:"weights_repeating_bytes"`
	WeightsNonRepeatingBytes int64 `json:"weights_nonrepeating_bytes"`
	// RequiredFullBytes is memory.required.full (everything, GPUs and
	// overflow), RequiredPartialBytes memory.required.partial (on the
	// GPUs), GPUAllocations memory.required.allocations per GPU.
	RequiredFullBytes    int64   `json:"required_full_bytes"`
	RequiredPartialBytes int64   `json:"required_partial_bytes"`
	GPUAllocations       []int64 `json:"gpu_allocations_bytes"`
	// FullyLoaded is whether every layer and the output fit the GPUs.
	FullyLoaded bool `json:"fully_loaded"`
}

// ollamaCUDAMinimumMemory is the memory Ollama keeps free on every CUDA
// GPU (discover/gpu.go cudaMinimumMemory, 457 MiB).
const ollamaCUDAMinimumMemory = 457 << 20

// ollamaBatch is Ollama's default num_batch, the batch its graph estimate
// uses (min(num_ctx, num_batch)).
const ollamaBatch = 512

// ollamaGraphSize is GraphSize (fs/ggml/ggml.go, v0.6.5): the KV bytes of
// each layer at ctx cells (K and V of key_length × kv_heads at the KV
// type's bytes per element: 2 for f16, 1 for q8_0, 0.5 for q4_0 — its
// approximation of the GGML block sizes; Gemma 3's sliding layers at
// num_parallel × window + batch) and the graph sizes for full and
// partial offload, per architecture. Architectures without a formula
// there get 0 and EstimateGPULayers falls back to GQA × kv / 6.
func ollamaGraphSize(m *modelspec.Spec, ctx, batch, parallel int, kvType KVDtype) (kv []int64, partial, full int64) {
	d := ollamaDims{m: m, emb: int64(m.Hidden), heads: int64(m.Heads), headsKV: int64(m.KVHeads), vocab: int64(m.Vocab),
		headK: int64(m.HeadDim), headV: int64(m.HeadDim), c: int64(ctx), b: int64(batch)}
	if m.IsMLA() {
		d.headK, d.headV = int64(m.KVLoraRank+m.QKRopeHeadDim), int64(m.KVLoraRank)
	}
	d.embHead = d.emb / max(d.heads, 1)
	bpe := ollamaKVBytes[kvType]
	if bpe == 0 {
		bpe = 2
	}
	kv = make([]int64, m.Layers)
	for i := range kv {
		kv[i] = int64(float64(d.c*(d.headK+d.headV)*d.headsKV) * bpe)
	}
	arch := strings.ToLower(m.Arch)
	if arch == "gemma3" && m.SlidingWindow > 0 {
		window := int64(parallel)*int64(m.SlidingWindow) + d.b
		for i := range kv {
			if (i+1)%6 != 0 {
				kv[i] = int64(float64(window*(d.headK+d.headV)*d.headsKV) * bpe)
			}
		}
	}
	for _, g := range ollamaGraphFormulas {
		if g.arch(arch) {
			partial, full = g.size(d)
			break
		}
	}
	return kv, partial, full
}

// ollamaKVBytes is Ollama's bytes per KV element by KV type (f16: 2).
var ollamaKVBytes = map[KVDtype]float64{KVQ8_0: 1, KVQ4_0: 0.5}

// ollamaDims are the model's dimensions Ollama's graph formulas read:
// embedding, heads, KV heads, vocabulary, K and V head widths, embedding
// per head, context and batch.
type ollamaDims struct {
	m                           *modelspec.Spec
	emb, heads, headsKV, vocab  int64
	headK, headV, embHead, c, b int64
}

// ollamaGraphFormula is one architecture's graph sizes in GraphSize
// (fs/ggml/ggml.go): which architectures it is for, and the partial and
// full graph bytes.
type ollamaGraphFormula struct {
	arch func(arch string) bool
	size func(d ollamaDims) (partial, full int64)
}

// archIn matches any of the architectures names.
func archIn(names ...string) func(string) bool {
	return func(a string) bool { return slices.Contains(names, a) }
}

// ollamaGraphFormulas are GraphSize's formulas, in its order.
var ollamaGraphFormulas = []ollamaGraphFormula{
	{archIn("llama", "mistral", "mixtral"), func(d ollamaDims) (int64, int64) {
		emb, heads, headsKV, vocab, embHead, c, b := d.emb, d.heads, d.headsKV, d.vocab, d.embHead, d.c, d.b
		full := max(4*b*(1+4*emb+c*(1+heads)), 4*b*(emb+vocab))
		partial := 4*b*emb + max(4*b*(1+emb+max(c, emb))+emb*emb*9/16+4*c*(b*heads+embHead*headsKV),
			4*b*(emb+vocab)+emb*vocab*105/128)
		if d.m.IsMoE() {
			// Mixtral 8x22b-style files (ffn_gate_exps): the expert gate
			// tensor's size enters the partial graph
			gateExps := int64(float64(int64(d.m.Experts)*emb*int64(d.m.MoEIntermediate)) * 34 / 32)
			ff := int64(d.m.MoEIntermediate)
			partial = max(3*gateExps+4*b*(2*ff+headsKV+emb+c+embHead*headsKV),
				4*(c*b*heads+c*embHead*headsKV+b*1024+embHead*headsKV*b))
		}
		return partial, full
	}},
	{func(a string) bool { return strings.HasPrefix(a, "gemma") }, func(d ollamaDims) (int64, int64) {
		emb, heads, vocab, headK, c, b := d.emb, d.heads, d.vocab, d.headK, d.c, d.b
		full := max(4*b*(emb+vocab), 4*b*(2+c+c*heads+2*emb+2*headK*heads))
		partial := max(4*emb*b+emb*vocab*105/128+4*vocab*b,
			4*b*(2*emb+1+2*headK*heads+c+c*heads)+4*headK*c*8+emb*headK*heads*9/16)
		return partial, full
	}},
	{archIn("command-r", "cohere"), func(d ollamaDims) (int64, int64) {
		emb, heads, vocab, c, b := d.emb, d.heads, d.vocab, d.c, d.b
		full := max(4*b*(emb+vocab), 4*b*(2+4*emb+c*(1+heads)))
		partial := max(4*b*(emb+vocab)+emb*vocab*105/128, 4*b*(1+2*emb+c*(1+heads))+4*emb*c+emb*emb*9/16)
		return partial, full
	}},
	{archIn("qwen2"), func(d ollamaDims) (int64, int64) {
		emb, heads, vocab, c, b := d.emb, d.heads, d.vocab, d.c, d.b
		full := max(4*b*(emb+vocab), 4*b*(1+2*emb+c+c*heads))
		partial := max(4*b*(emb+vocab)+emb*vocab*105/128, 4*(b*(1+2*emb+c*(1+heads))+emb*(1+c)))
		return partial, full
	}},
	{archIn("phi2"), func(d ollamaDims) (int64, int64) {
		emb, heads, vocab, c, b := d.emb, d.heads, d.vocab, d.c, d.b
		full := max(4*b*(emb+vocab), 4*b*(1+4*emb+c+c*heads))
		partial := max(4*b*(2*emb+vocab)+emb*vocab*105/128, 4*b*(2+3*emb+c+c*heads))
		return partial, full
	}},
	{archIn("stablelm"), func(d ollamaDims) (int64, int64) {
		emb, heads, vocab, c, b := d.emb, d.heads, d.vocab, d.c, d.b
		full := 4 * b * (c*(1+heads) + 3*emb + 2)
		return max(4*b*(vocab+2*emb), full), full
	}},
	{archIn("deepseek2", "deepseek_v3", "deepseek_v2"), func(d ollamaDims) (int64, int64) {
		emb, headsKV, vocab, headK, c, b := d.emb, d.headsKV, d.vocab, d.headK, d.c, d.b
		full := max(4*b*(3*emb+vocab), 4*b*(3*emb+2+c*(1+headsKV)+2*headK*headsKV))
		partial := max(4*b*(3*emb+vocab)+emb*vocab*105/128,
			4*b*(2*emb+1+2*headK*headsKV+c+c*headsKV)+4*headK*c*headsKV+emb*headK*headsKV*9/16)
		return partial, full
	}},
}

// ollamaGraphs are the KV bytes per layer and in all, and the partial
// and full graph sizes as EstimateGPULayers takes them: an architecture
// without a graph formula gets heads/kv_heads × KV / 6 as its partial
// graph, the full graph defaults to the partial one, and on several GPUs
// (gpus > 1) the full graph is the partial one.
func ollamaGraphs(m *modelspec.Spec, ctx, parallel int, kvType KVDtype, gpus int) (kv []int64, kvTotal, partial, full int64) {
	kv, partial, full = ollamaGraphSize(m, ctx, min(ctx, ollamaBatch), parallel, kvType)
	for _, k := range kv {
		kvTotal += k
	}
	if partial == 0 {
		partial = int64(m.Heads/max(m.KVHeads, 1)) * kvTotal / 6
	}
	if full == 0 || gpus > 1 {
		full = partial
	}
	return kv, kvTotal, partial, full
}

// ollamaEstimate is EstimateGPULayers (llm/memory.go, v0.6.5) for one
// set of GPUs of free memory free (bytes each): a buffer of one layer
// (blk.0 and its KV) on every GPU that can take the graph, the minimum
// memory and two layers; layers dealt round-robin over those GPUs while
// each keeps room for the larger graph; the output layer (output_norm
// and output, or token_embd when tied) last; then the full graph when
// everything fits, else the partial one (always the partial one on
// several GPUs). numGPU ≥ 0 is a num_gpu limit; < 0 is none.
func ollamaEstimate(m *modelspec.Spec, layerW []int64, outputW int64, ctx, parallel int, kvType KVDtype, free []int64, minimum int64, numGPU int) OllamaEstimate {
	kv, kvTotal, partial, full := ollamaGraphs(m, ctx, parallel, kvType, len(free))
	e := OllamaEstimate{Parallel: parallel, Ctx: ctx, ModelLayers: m.Layers + 1, KVBytes: kvTotal, GraphFullBytes: full, GraphPartialBytes: partial, WeightsNonRepeatingBytes: outputW}
	graph := max(partial, full)
	layerSize := int64(0)
	if len(layerW) > 0 {
		layerSize = layerW[0] + kv[0]
	}
	type gpu struct {
		i    int
		free int64
	}
	var withSpace []gpu
	alloc := make([]int64, len(free))
	counts := make([]int, len(free))
	for i, f := range free {
		if f < graph+minimum+2*layerSize {
			continue
		}
		withSpace = append(withSpace, gpu{i, f})
		alloc[i] += minimum + layerSize
	}
	layerCount := 0
	for i := 0; i < m.Layers; i++ {
		layerSize = layerW[i] + kv[i]
		e.WeightsRepeatingBytes += layerW[i]
		if numGPU >= 0 && layerCount >= numGPU {
			continue
		}
		for j := len(withSpace); j > 0; j-- {
			g := withSpace[i%j]
			if g.free > alloc[g.i]+graph+layerSize {
				alloc[g.i] += layerSize
				counts[g.i]++
				layerCount++
				break
			}
			withSpace = append(withSpace[:i%j], withSpace[i%j+1:]...)
		}
	}
	var overflow int64
	e.FullyLoaded = layerCount >= m.Layers
	if !e.FullyLoaded {
		overflow += int64(m.Layers-layerCount) * layerSize
	}
	if outputW > 0 && (numGPU < 0 || layerCount < numGPU) {
		for j := len(withSpace); j > 0; j-- {
			g := withSpace[layerCount%j]
			if g.free > alloc[g.i]+graph+outputW {
				alloc[g.i] += outputW
				counts[g.i]++
				layerCount++
				break
			}
		}
		if layerCount < m.Layers+1 {
			e.FullyLoaded = false
			overflow += outputW
		}
	}
	g := partial
	if e.FullyLoaded {
		g = full
	}
	for i := range alloc {
		if counts[i] > 0 {
			alloc[i] += g
		}
		e.RequiredPartialBytes += alloc[i]
	}
	e.RequiredFullBytes = e.RequiredPartialBytes + overflow
	e.GPUAllocations = alloc
	if len(free) > 1 {
		e.TensorSplit = counts
	}
	e.Layers = layerCount
	return e
}
