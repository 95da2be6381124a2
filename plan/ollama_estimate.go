package plan

import (
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
	emb, heads, headsKV := int64(m.Hidden), int64(m.Heads), int64(m.KVHeads)
	vocab := int64(m.Vocab)
	headK, headV := int64(m.HeadDim), int64(m.HeadDim)
	if m.IsMLA() {
		headK, headV = int64(m.KVLoraRank+m.QKRopeHeadDim), int64(m.KVLoraRank)
	}
	embHead := emb / max(heads, 1)
	bpe := 2.0
	switch kvType {
	case KVQ8_0:
		bpe = 1
	case KVQ4_0:
		bpe = 0.5
	}
	c, b := int64(ctx), int64(batch)
	kv = make([]int64, m.Layers)
	for i := range kv {
		kv[i] = int64(float64(c*(headK+headV)*headsKV) * bpe)
	}
	switch arch := strings.ToLower(m.Arch); {
	case arch == "llama" || arch == "mistral" || arch == "mixtral":
		full = max(4*b*(1+4*emb+c*(1+heads)), 4*b*(emb+vocab))
		partial = 4*b*emb + max(4*b*(1+emb+max(c, emb))+emb*emb*9/16+4*c*(b*heads+embHead*headsKV),
			4*b*(emb+vocab)+emb*vocab*105/128)
		if m.IsMoE() {
			// Mixtral 8x22b-style files (ffn_gate_exps): the expert gate
			// tensor's size enters the partial graph
			gateExps := int64(float64(int64(m.Experts)*emb*int64(m.MoEIntermediate)) * 34 / 32)
			ff := int64(m.MoEIntermediate)
			partial = max(3*gateExps+4*b*(2*ff+headsKV+emb+c+embHead*headsKV),
				4*(c*b*heads+c*embHead*headsKV+b*1024+embHead*headsKV*b))
		}
	case strings.HasPrefix(arch, "gemma"):
		full = max(4*b*(emb+vocab), 4*b*(2+c+c*heads+2*emb+2*headK*heads))
		partial = max(4*emb*b+emb*vocab*105/128+4*vocab*b,
			4*b*(2*emb+1+2*headK*heads+c+c*heads)+4*headK*c*8+emb*headK*heads*9/16)
		if arch == "gemma3" && m.SlidingWindow > 0 {
			window := int64(parallel)*int64(m.SlidingWindow) + b
			for i := range kv {
				if (i+1)%6 != 0 {
					kv[i] = int64(float64(window*(headK+headV)*headsKV) * bpe)
				}
			}
		}
	case arch == "command-r" || arch == "cohere":
		full = max(4*b*(emb+vocab), 4*b*(2+4*emb+c*(1+heads)))
		partial = max(4*b*(emb+vocab)+emb*vocab*105/128, 4*b*(1+2*emb+c*(1+heads))+4*emb*c+emb*emb*9/16)
	case arch == "qwen2":
		full = max(4*b*(emb+vocab), 4*b*(1+2*emb+c+c*heads))
		partial = max(4*b*(emb+vocab)+emb*vocab*105/128, 4*(b*(1+2*emb+c*(1+heads))+emb*(1+c)))
	case arch == "phi2":
		full = max(4*b*(emb+vocab), 4*b*(1+4*emb+c+c*heads))
		partial = max(4*b*(2*emb+vocab)+emb*vocab*105/128, 4*b*(2+3*emb+c+c*heads))
	case arch == "stablelm":
		full = 4 * b * (c*(1+heads) + 3*emb + 2)
		partial = max(4*b*(vocab+2*emb), full)
	case arch == "deepseek2" || arch == "deepseek_v3" || arch == "deepseek_v2":
		full = max(4*b*(3*emb+vocab), 4*b*(3*emb+2+c*(1+headsKV)+2*headK*headsKV))
		partial = max(4*b*(3*emb+vocab)+emb*vocab*105/128,
			4*b*(2*emb+1+2*headK*headsKV+c+c*headsKV)+4*headK*c*headsKV+emb*headK*headsKV*9/16)
	}
	return kv, partial, full
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
	kv, partial, full := ollamaGraphSize(m, ctx, min(ctx, ollamaBatch), parallel, kvType)
	var kvTotal int64
	for _, k := range kv {
		kvTotal += k
	}
	if partial == 0 {
		partial = int64(m.Heads/max(m.KVHeads, 1)) * kvTotal / 6
	}
	if full == 0 {
		full = partial
	}
	if len(free) > 1 {
		full = partial
	}
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
