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
	// defaults fills the family's own zero fields of in (after the
	// shared ones: parallelism, KV dtypes, block size).
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

func (vllmModel) defaults(in *Inputs) { in.vllmDefaults() }

func (vllmModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.GPUMemoryUtilization, o.BlockSize, o.MaxNumSeqs, o.MaxNumBatchedTokens, o.Sampler =
		in.Utilization, in.BlockSize, in.MaxNumSeqs, in.MaxNumBatchedTokens, in.Sampler
	o.VLLMVersion, o.EnforceEager, o.GraphEstimate = in.VLLMVersion.String(), in.EnforceEager, string(in.GraphEstimate)
	charged := vllmChargesGraphs(in)
	o.GraphsCharged = &charged
	return func(d KVDtype) (Prediction, []string) { return vllmPredict(in, wb, d) }
}

// sglangModel is SGLang's capacity model (sglangPredict).
type sglangModel struct{ workerFamily }

func (sglangModel) defaults(in *Inputs) { in.sglangDefaults() }

func (sglangModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.Sampler = ""
	return func(d KVDtype) (Prediction, []string) { return sglangPredict(in, wb, d) }
}

// llamaCppModel is llama-server's capacity model (llamaPredict).
type llamaCppModel struct{ layerFamily }

func (llamaCppModel) defaults(in *Inputs) { in.llamaCppDefaults() }

func (llamaCppModel) predictor(in *Inputs, wb int64, o *InputsOut, _ bool) func(KVDtype) (Prediction, []string) {
	o.Parallel, o.UBatch, o.FlashAttention = in.Parallel, in.UBatch, in.FlashAttention
	return func(d KVDtype) (Prediction, []string) { return llamaPredict(in, wb, d) }
}

// ollamaModel is Ollama's capacity model (ollamaPredict: its scheduler's
// estimate, then the llama.cpp runner it starts).
type ollamaModel struct{ layerFamily }

func (ollamaModel) defaults(in *Inputs) { in.ollamaDefaults() }

func (ollamaModel) predictor(in *Inputs, wb int64, o *InputsOut, autoParallel bool) func(KVDtype) (Prediction, []string) {
	o.Parallel, o.UBatch, o.FlashAttention = in.Parallel, in.UBatch, in.FlashAttention
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

// vllmDefaults fills vLLM's zero fields: gpu_memory_utilization 0.9,
// max_num_seqs and max_num_batched_tokens by GPU, FlashInfer's sampler,
// and the model's full context.
func (in *Inputs) vllmDefaults() {
	if in.Utilization == 0 {
		in.Utilization = 0.9
	}
	seqs, batched := vllmDefaults(in.GPUName, in.GPUGiB)
	if in.MaxNumSeqs == 0 {
		in.MaxNumSeqs = seqs
	}
	if in.MaxNumBatchedTokens == 0 {
		in.MaxNumBatchedTokens = batched
	}
	if in.Sampler == "" {
		in.Sampler = SamplerFlashInfer
	}
	if in.GraphEstimate == "" {
		in.GraphEstimate = GraphEstimateAuto
	}
	if in.Context == 0 {
		in.Context = in.Model.MaxContext
	}
}

// llamaCppDefaults fills llama-server's: one slot (-np 1), -c 4096.
func (in *Inputs) llamaCppDefaults() {
	if in.Parallel == 0 {
		in.Parallel = 1
	}
	if in.Context == 0 {
		in.Context = 4096
	}
}

// ollamaDefaults fills Ollama's: OLLAMA_NUM_PARALLEL and num_ctx.
func (in *Inputs) ollamaDefaults() {
	if in.Parallel == 0 {
		in.Parallel = ollamaDefaultParallel
	}
	if in.Context == 0 {
		in.Context = ollamaDefaultNumCtx
	}
}
