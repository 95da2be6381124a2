package plan

import (
	"cmp"
	"fmt"
	"slices"
)

// Ollama defaults (server envconfig of Ollama v0.6.x, the testbed's
// version): num_ctx 2048 (OLLAMA_CONTEXT_LENGTH; newer releases default to
// 4096, pass --context), OLLAMA_NUM_PARALLEL 4 where memory allows (its
// auto choice; 1 otherwise), OLLAMA_KV_CACHE_TYPE f16, flash attention off.
const (
	ollamaDefaultNumCtx   = 2048
	ollamaDefaultParallel = 4
)

// ollamaKVType returns the KV type Ollama really uses for the requested
// OLLAMA_KV_CACHE_TYPE: it accepts f16, q8_0 and q4_0, and only with
// OLLAMA_FLASH_ATTENTION=1; otherwise it falls back to f16.
func ollamaKVType(in *Inputs, d KVDtype) (KVDtype, []string) {
	switch d {
	case KVFP16:
		return d, nil
	case KVQ8_0, KVQ4_0:
		if !in.LlamaCpp.FlashAttention {
			return KVFP16, []string{"Ollama uses OLLAMA_KV_CACHE_TYPE=" + string(d) + " only with OLLAMA_FLASH_ATTENTION=1 (--flash-attn); without it the cache is f16"}
		}
		return d, nil
	}
	return KVFP16, []string{"Ollama accepts OLLAMA_KV_CACHE_TYPE f16, q8_0 or q4_0; " + string(d) + " falls back to f16"}
}

// ollamaPredict is Ollama's capacity: its scheduler's choice of
// OLLAMA_NUM_PARALLEL (unset: 4 when the model then fits the GPUs whole,
// first on the single GPU with the most memory, then on all of them;
// else 1, server/sched.go pickBestFullFitByLibrary and
// pickBestPartialFitByLibrary), its memory estimate's number of layers to
// offload and their split over the GPUs (ollamaEstimate), and then what
// the llama.cpp runner it starts with --n-gpu-layers and --tensor-split
// allocates (llamaPredict). A num_gpu (--n-gpu-layers) caps the layers.
// Free memory is taken to be each GPU's total: Ollama reads the free
// memory, so other programs on the GPU lower it.
func ollamaPredict(in *Inputs, weightsBytes int64, d KVDtype, autoParallel bool) (Prediction, []string) {
	m := &in.Model
	eff := d
	if eff == KVAuto || eff == KVFP8 {
		eff = KVFP16
	}
	eff, _ = ollamaKVType(in, eff)
	layerW, outW, _ := llamaLayerWeights(m, in.Quant, weightsBytes)
	devs := in.devices()
	numGPU := -1
	if in.LlamaCpp.NGPULayers != nil {
		numGPU = *in.LlamaCpp.NGPULayers
	}
	tries := []int{max(in.LlamaCpp.Parallel, 1)}
	if autoParallel {
		tries = []int{ollamaDefaultParallel, 1}
	}
	estimate := func(p int, ds []Device) OllamaEstimate {
		free := make([]int64, len(ds))
		for i, dv := range ds {
			free[i] = int64(dv.MemoryGiB * GiB)
		}
		return ollamaEstimate(m, layerW, outW, in.Context*p, p, eff, free, ollamaCUDAMinimumMemory, numGPU)
	}
	fits := func(e OllamaEstimate) bool {
		if numGPU < 0 {
			return e.Layers > 0 && e.Layers >= m.Layers+1
		}
		return e.Layers > 0 && e.Layers >= numGPU
	}
	chosen, est := ollamaChoose(devs, tries, estimate, fits)
	run := ollamaRunner(in, chosen, est)
	p, warns := llamaPredict(&run, weightsBytes, d)
	p.Ollama = &est
	if autoParallel {
		warns = append(warns, fmt.Sprintf("OLLAMA_NUM_PARALLEL unset: Ollama v0.6.5 picks %d (4 when the model then fits the GPUs whole, else 1)", est.Parallel))
	}
	if est.Layers < m.Layers+1 {
		warns = append(warns, fmt.Sprintf("Ollama's estimate offloads %d of %d layers (num_ctx %d × %d slots)", est.Layers, m.Layers+1, in.Context, est.Parallel))
	}
	return p, warns
}

// ollamaChoose is Ollama's scheduler's pick of GPUs and its estimate:
// the first single GPU, by most memory, that takes the whole model (at
// each parallelism tried in turn), else all the GPUs when several take it
// together, else all of them at the last parallelism tried.
func ollamaChoose(devs []Device, tries []int, estimate func(p int, ds []Device) OllamaEstimate, fits func(OllamaEstimate) bool) ([]Device, OllamaEstimate) {
	byMemory := append([]Device(nil), devs...)
	slices.SortStableFunc(byMemory, func(a, b Device) int { return cmp.Compare(b.MemoryGiB, a.MemoryGiB) })
	for _, p := range tries {
		for _, dv := range byMemory {
			if e := estimate(p, []Device{dv}); fits(e) {
				return []Device{dv}, e
			}
		}
	}
	if len(devs) > 1 {
		for _, p := range tries {
			if e := estimate(p, byMemory); fits(e) {
				return byMemory, e
			}
		}
	}
	return byMemory, estimate(tries[len(tries)-1], byMemory)
}

// ollamaRunner is what Ollama starts its llama.cpp runner with: the
// parallelism, GPUs, layers and tensor split of its estimate.
func ollamaRunner(in *Inputs, chosen []Device, est OllamaEstimate) Inputs {
	run := *in
	run.LlamaCpp.Parallel, run.GPUs = est.Parallel, chosen
	layers := est.Layers
	run.LlamaCpp.NGPULayers = &layers
	run.LlamaCpp.TensorSplit = nil
	if len(est.TensorSplit) > 0 {
		run.LlamaCpp.TensorSplit = make([]float64, len(est.TensorSplit))
		for i, c := range est.TensorSplit {
			run.LlamaCpp.TensorSplit[i] = float64(c)
		}
	}
	return run
}
