package plan

import (
	"github.com/servebench/servebench/backend"
)

// capacityModel is what plan knows of one server family beside its
// backend.Descriptor: how it splits a model over GPUs, which KV dtypes it
// tries, its defaults and its prediction. Each family is one
// implementation (vllmModel, sglangModel, llamaCppModel, ollamaModel).
type capacityModel interface {
	// tensorParallel: the family splits a model over GPUs by tensor and
	// pipeline parallelism, one worker per GPU (vLLM, SGLang), rather
	// than by layers over the GPUs of one process (llama.cpp, Ollama).
	tensorParallel() bool
	// kvDtypes are the KV dtypes tried when none is given.
	kvDtypes() []KVDtype
	// defaults fills the family's own zero fields of in, its nested
	// settings and its default context (after the shared ones:
	// parallelism, KV dtypes).
	defaults(in *Inputs)
	// predictor writes the family's settings into o and returns its
	// prediction for one KV dtype; autoParallel tells that Ollama's
	// parallelism was left to the server.
	predictor(in *Inputs, wb int64, o *InputsOut, autoParallel bool) func(KVDtype) (Prediction, []string)
}

// ggmlKV are the KV dtypes llama.cpp and Ollama try (their quantized
// caches need flash attention); hfKV those vLLM and SGLang try.
var (
	ggmlKV = []KVDtype{KVFP16, KVQ8_0, KVQ4_0}
	hfKV   = []KVDtype{KVAuto, KVFP8}
)

// workerFamily is what vLLM and SGLang share: one worker per GPU, and
// the Hugging Face KV dtypes.
type workerFamily struct{}

func (workerFamily) tensorParallel() bool { return true }
func (workerFamily) kvDtypes() []KVDtype  { return hfKV }

// layerFamily is what llama.cpp and Ollama share: layers over the GPUs
// of one process, and GGML's KV types.
type layerFamily struct{}

func (layerFamily) tensorParallel() bool { return false }
func (layerFamily) kvDtypes() []KVDtype  { return ggmlKV }

// vllmModel is vLLM's capacity model (vllmPredict).
type vllmModel struct{ workerFamily }

// defaults: vLLM's settings (VLLMSettings.defaults) and the model's full
// context (max_model_len).
func (vllmModel) defaults(in *Inputs) {
	in.VLLM.defaults(in.GPUName, in.GPUGiB)
	if in.Context == 0 {
		in.Context = in.Model.MaxContext
	}
}

func (vllmModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.GPUMemoryUtilization, o.BlockSize, o.MaxNumSeqs, o.MaxNumBatchedTokens, o.Sampler =
		in.VLLM.Utilization, in.VLLM.BlockSize, in.VLLM.MaxNumSeqs, in.VLLM.MaxNumBatchedTokens, in.VLLM.Sampler
	o.VLLMVersion, o.EnforceEager, o.GraphEstimate = in.VLLM.VLLMVersion.String(), in.VLLM.EnforceEager, string(in.VLLM.GraphEstimate)
	charged := vllmChargesGraphs(in)
	o.GraphsCharged = &charged
	return func(d KVDtype) (Prediction, []string) { return vllmPredict(in, wb, d) }
}

// sglangModel is SGLang's capacity model (sglangPredict).
type sglangModel struct{ workerFamily }

// defaults: SGLang's settings as it derives them from the GPU's memory
// and the parallelism (SGLangSettings.defaults), and the model's full
// context.
func (sglangModel) defaults(in *Inputs) {
	in.SGLang.defaults(in.GPUGiB, in.TensorParallel, in.PipelineParallel)
	if in.Context == 0 {
		in.Context = in.Model.MaxContext
	}
}

func (sglangModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.Sampler = ""
	return func(d KVDtype) (Prediction, []string) { return sglangPredict(in, wb, d) }
}

// llamaCppModel is llama-server's capacity model (llamaPredict).
type llamaCppModel struct{ layerFamily }

// defaults: llama-server's one slot (-np 1) and n_ubatch 512
// (LlamaCppSettings.defaults), and -c 4096.
func (llamaCppModel) defaults(in *Inputs) {
	in.LlamaCpp.defaults(1)
	if in.Context == 0 {
		in.Context = 4096
	}
}

func (llamaCppModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.Parallel, o.UBatch, o.FlashAttention = in.LlamaCpp.Parallel, in.LlamaCpp.UBatch, in.LlamaCpp.FlashAttention
	return func(d KVDtype) (Prediction, []string) { return llamaPredict(in, wb, d) }
}

// ollamaModel is Ollama's capacity model (ollamaPredict: its scheduler's
// estimate, then the llama.cpp runner it starts).
type ollamaModel struct{ layerFamily }

// defaults: Ollama's OLLAMA_NUM_PARALLEL and n_ubatch 512
// (LlamaCppSettings.defaults), and its num_ctx.
func (ollamaModel) defaults(in *Inputs) {
	in.LlamaCpp.defaults(ollamaDefaultParallel)
	if in.Context == 0 {
		in.Context = ollamaDefaultNumCtx
	}
}

func (ollamaModel) predictor(in *Inputs, wb int64, o *InputsOut, autoParallel bool) func(KVDtype) (Prediction, []string) {
	o.Parallel, o.UBatch, o.FlashAttention = in.LlamaCpp.Parallel, in.LlamaCpp.UBatch, in.LlamaCpp.FlashAttention
	return func(d KVDtype) (Prediction, []string) { return ollamaPredict(in, wb, d, autoParallel) }
}

// capacityModels are the families plan has a capacity model for, one
// table keyed by backend.Kind.
var capacityModels = map[backend.Kind]capacityModel{
	backend.VLLM:     vllmModel{},
	backend.SGLang:   sglangModel{},
	backend.LlamaCpp: llamaCppModel{},
	backend.Ollama:   ollamaModel{},
}

// Servers lists the server families plan has a capacity model for, in
// help order (backend.Kinds').
var Servers []backend.Kind

func init() {
	for _, k := range backend.Kinds {
		if _, ok := capacityModels[k]; ok {
			Servers = append(Servers, k)
		}
	}
}

// tensorParallel tells whether in's family splits over GPUs by tensor and
// pipeline parallelism (capacityModel.tensorParallel).
func (in *Inputs) tensorParallel() bool {
	m, ok := capacityModels[in.Server]
	return ok && m.tensorParallel()
}
