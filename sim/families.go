package sim

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/plan"
)

// scheduling is what the engine knows of one server family: whether it
// is a paged continuous batcher, its default calibration, and how its
// server's settings and KV capacity come from plan.
type scheduling struct {
	// batched: a paged continuous batcher (vLLM, SGLang: the batch
	// scheduler) rather than a slot server (llama.cpp, Ollama: the slot
	// scheduler).
	batched bool
	// params is the calibration a prediction without a fit uses on GPU g
	// with model m (defaults.go).
	params func(g GPU, m ModelCost) Params
	// capacity fills plan's inputs for c's server and the engine settings
	// plan leaves alone, before plan sizes the KV cache.
	capacity func(c *Config, in *plan.Inputs, util float64)
}

// schedulers are the families whose scheduler the engine follows, one
// table keyed by backend.Kind (set in init: the engine reads it back
// through batched).
var schedulers map[backend.Kind]scheduling

// Kinds lists the server families whose scheduler the engine follows, in
// help order (backend.Kinds'): vLLM's V1 scheduler, SGLang's, llama.cpp's
// llama-server slots and Ollama's runner (llama.cpp underneath).
var Kinds []backend.Kind

func init() {
	schedulers = map[backend.Kind]scheduling{
		backend.VLLM:     {batched: true, params: func(GPU, ModelCost) Params { return vllmDefaults }, capacity: vllmCapacity},
		backend.SGLang:   {batched: true, params: func(GPU, ModelCost) Params { return vllmDefaults }, capacity: sglangCapacity},
		backend.LlamaCpp: {params: llamaParams(false), capacity: slotCapacity},
		backend.Ollama:   {params: llamaParams(true), capacity: slotCapacity},
	}
	for _, k := range backend.Kinds {
		if _, ok := schedulers[k]; ok {
			Kinds = append(Kinds, k)
		}
	}
}

// ParseKind returns the server family named s, if the engine follows its
// scheduler.
func ParseKind(s string) (backend.Kind, error) {
	k := backend.Kind(strings.ToLower(s))
	if _, ok := schedulers[k]; ok {
		return k, nil
	}
	return "", fmt.Errorf("%w: backend %q (want %s)", ErrBadInput, s, backend.Or(Kinds))
}

// batched reports whether f is a paged continuous batcher (vLLM, SGLang)
// rather than a slot server (llama.cpp, Ollama).
func batched(f backend.Kind) bool { return schedulers[f].batched }

// Batched reports whether the engine schedules family f as a paged
// continuous batcher (vLLM, SGLang: a max_model_len and a KV block pool)
// rather than as slots (llama.cpp, Ollama: a per-slot context).
func Batched(f backend.Kind) bool { return batched(f) }

// vllmCapacity: plan's vLLM model with gpu_memory_utilization util and
// the engine's max_model_len, max_num_seqs, max_num_batched_tokens and
// block size, its defaults written back.
func vllmCapacity(c *Config, in *plan.Inputs, util float64) {
	s := &c.Server
	in.Server, in.VLLM.Utilization = backend.VLLM, util
	in.Context, in.VLLM.MaxNumSeqs, in.VLLM.MaxNumBatchedTokens = s.MaxModelLen, s.MaxNumSeqs, s.MaxNumBatchedTokens
	in.VLLM.BlockSize = s.BlockSize
	in.Defaults()
	s.MaxNumSeqs, s.MaxNumBatchedTokens, s.BlockSize, s.MaxModelLen = in.VLLM.MaxNumSeqs, in.VLLM.MaxNumBatchedTokens, in.VLLM.BlockSize, in.Context
}

// sglangCapacity: plan's SGLang capacity model
// (model_runner.profile_max_num_token with server_args.py's defaults for
// the GPU's memory): mem_fraction_static, chunked_prefill_size and
// page_size as SGLang derives them unless given.
func sglangCapacity(c *Config, in *plan.Inputs, util float64) {
	s := &c.Server
	in.Server = backend.SGLang
	in.SGLang = plan.SGLangSettings{MemFractionStatic: util, ChunkedPrefillSize: s.MaxNumBatchedTokens, PageSize: s.BlockSize}
	in.Context = s.MaxModelLen
	in.Defaults()
	s.MaxNumBatchedTokens, s.BlockSize, s.MaxModelLen = in.SGLang.ChunkedPrefillSize, in.SGLang.PageSize, in.Context
	if s.MaxNumSeqs == 0 {
		// max_running_requests: SGLang derives it from the pool
		// (max_total_num_tokens / 2, capped by the request pool); the
		// engine keeps vLLM's 256 below 70 GiB, which no workload of
		// this size reaches first.
		v := plan.Inputs{Server: backend.VLLM, GPUName: c.GPU.Name, GPUGiB: c.GPU.MemoryGiB}
		v.Defaults()
		s.MaxNumSeqs = v.VLLM.MaxNumSeqs
	}
}

// slotCapacity: plan's llama.cpp or Ollama model with the engine's slots
// and per-slot context, and the servers' batch defaults.
func slotCapacity(c *Config, in *plan.Inputs, _ float64) {
	s := &c.Server
	in.Server = c.Backend
	unified := false
	if s.Slots == 0 {
		// llama-server's -np default is auto: 4 slots sharing one
		// unified KV cache (ggml-org/llama.cpp#16736); Ollama's
		// OLLAMA_NUM_PARALLEL defaults to 1 (ollama/ollama#11330).
		s.Slots = 4
		if c.Backend == backend.Ollama {
			s.Slots = 1
		}
		if s.SlotContext == 0 {
			// unified: each slot may use the whole default context
			// (llama-server -c 4096; Ollama num_ctx 4096)
			s.SlotContext = 4096
			unified = true
		}
	}
	if s.SlotContext == 0 {
		s.SlotContext = 4096
		if c.Backend == backend.LlamaCpp {
			s.SlotContext = 4096 / s.Slots
		}
	}
	in.LlamaCpp.Parallel, in.Context = s.Slots, s.SlotContext
	if c.Backend == backend.LlamaCpp && !unified {
		// -c is the total over the slots; a unified cache holds -c cells
		// that every slot may fill, so it is sized once, not per slot
		in.Context = s.SlotContext * s.Slots
	}
	in.LlamaCpp.UBatch = s.NUBatch
	in.Defaults()
	if s.NBatch == 0 {
		s.NBatch = 2048 // llama-server's n_batch
		if c.Backend == backend.Ollama {
			s.NBatch = 512 // Ollama's num_batch
		}
	}
	if s.NUBatch == 0 {
		s.NUBatch = min(512, s.NBatch)
	}
}
