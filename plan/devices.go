package plan

import (
	"fmt"
	"strings"
)

// Device is one GPU a server runs on.
type Device struct {
	// Name is the GPU's name, for display ("" when only its memory is
	// known).
	Name string `json:"name,omitempty"`
	// MemoryGiB is its total memory as the CUDA driver reports it.
	MemoryGiB float64 `json:"memory_gib"`
	// BandwidthGBs (GB/s) and TFLOPS (dense FP16 tensor with FP32
	// accumulate) describe a board the catalog lacks, or override its
	// figures, for the simulated throughput of plan --users; 0 = the
	// catalog's.
	BandwidthGBs float64 `json:"bandwidth_gb_s,omitempty"`
	TFLOPS       float64 `json:"fp16_fp32acc_dense_tflops,omitempty"`
}

// DeviceShare is what one GPU holds in a plan: for vLLM and SGLang one
// entry per worker (rank = pipeline stage × tensor-parallel size + tensor
// rank, vLLM's order), for llama.cpp and Ollama one per GPU the layers
// are split across. The simulator reads it for multi-GPU servers: the
// weights each GPU streams per step and its share of the KV cache.
type DeviceShare struct {
	// Device is the GPU.
	Device
	// Rank, Stage and TensorRank place a vLLM/SGLang worker; for
	// llama.cpp and Ollama Rank is the device index and the others 0.
	Rank       int `json:"rank"`
	Stage      int `json:"pp_stage,omitempty"`
	TensorRank int `json:"tp_rank,omitempty"`
	// Layers is how many transformer layers this GPU computes (its
	// pipeline stage's, or llama.cpp's layers on it); FirstLayer the
	// first of them.
	Layers     int `json:"layers"`
	FirstLayer int `json:"first_layer"`
	// KVHeads is the KV heads this GPU caches per layer (vLLM/SGLang:
	// max(1, kv_heads / TP), replicated when there are fewer KV heads
	// than ranks; an MLA latent counts as 1 and is replicated on every
	// rank).
	KVHeads int `json:"kv_heads,omitempty"`
	// WeightsGiB are the weights on this GPU (sharded layers, replicated
	// parts, LoRA buffers); KVGiB its KV cache; ActivationGiB the peak of
	// the server's profiling run on it (vLLM), CommGiB the
	// communication buffers it charges for tensor/pipeline parallelism,
	// VisionGiB the vision encoder's profiling peak, LoRAGiB the stacked
	// LoRA weights (inside WeightsGiB), ComputeBufferMiB llama.cpp's
	// compute buffer.
	WeightsGiB       float64 `json:"weights_gib"`
	KVGiB            float64 `json:"kv_gib"`
	ActivationGiB    float64 `json:"activation_peak_gib,omitempty"`
	CommGiB          float64 `json:"comm_gib,omitempty"`
	VisionGiB        float64 `json:"vision_encoder_gib,omitempty"`
	LoRAGiB          float64 `json:"lora_gib,omitempty"`
	ComputeBufferMiB float64 `json:"compute_buffer_mib,omitempty"`
	// KVMiB is, for llama.cpp and Ollama, this GPU's "KV buffer size" as
	// llama.cpp logs it.
	KVMiB float64 `json:"kv_mib,omitempty"`
	// AvailableKVGiB is, for vLLM and SGLang, the memory this worker
	// offers the KV cache before the blocks are made equal across
	// workers (the smallest decides).
	AvailableKVGiB float64 `json:"available_kv_gib,omitempty"`
	// Blocks is how many KV blocks this worker alone could hold (vLLM);
	// the server uses the smallest over workers.
	Blocks int `json:"blocks,omitempty"`
	// FreeGiB is what is left on the GPU once weights, KV cache and
	// buffers are placed (llama.cpp, Ollama), negative when it does not
	// fit.
	FreeGiB float64 `json:"free_gib,omitempty"`
}

// HostShare is what llama.cpp and Ollama keep in system memory: the
// layers not offloaded (their weights and KV cache) and the input
// embedding, which llama.cpp always keeps on the CPU.
type HostShare struct {
	// Layers is the repeating layers computed on the CPU; Output whether
	// the output layer is among them.
	Layers int  `json:"layers"`
	Output bool `json:"output_layer,omitempty"`
	// WeightsGiB and KVGiB are their memory; RAMGiB the system memory
	// given (0 = not checked) and Fits whether they fit it.
	WeightsGiB float64 `json:"weights_gib"`
	KVGiB      float64 `json:"kv_gib"`
	KVMiB      float64 `json:"kv_mib"`
	RAMGiB     float64 `json:"ram_gib,omitempty"`
	Fits       bool    `json:"fits"`
}

// devices is the list of GPUs in uses: GPUs when given, else one GPU of
// GPUName and GPUGiB.
// devices is the list of GPUs in uses: GPUs when given, else GPUName and
// GPUGiB once, or once per worker for a tensor/pipeline-parallel vLLM or
// SGLang server.
func (in *Inputs) devices() []Device {
	if len(in.GPUs) > 0 {
		return in.GPUs
	}
	n := 1
	if in.tensorParallel() {
		n = max(in.TensorParallel, 1) * max(in.PipelineParallel, 1)
	}
	ds := make([]Device, n)
	for i := range ds {
		ds[i] = Device{Name: in.GPUName, MemoryGiB: in.GPUGiB}
	}
	return ds
}

// DevicesTitle names a list of GPUs for display: "2 × RTX 4090" when they
// are alike, else their names joined with " + ".
func DevicesTitle(ds []Device) string {
	if len(ds) == 0 {
		return ""
	}
	same := true
	for _, d := range ds {
		same = same && d == ds[0]
	}
	short := func(d Device) string {
		if d.Name == "" {
			return fmt.Sprintf("%.2f GiB GPU", d.MemoryGiB)
		}
		return strings.TrimPrefix(strings.TrimPrefix(d.Name, "NVIDIA "), "GeForce ")
	}
	if same {
		if len(ds) == 1 {
			return short(ds[0])
		}
		return fmt.Sprintf("%d × %s", len(ds), short(ds[0]))
	}
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = short(d)
	}
	return strings.Join(names, " + ")
}

// ppPartition splits layers over pp pipeline stages as vLLM does
// (vllm/distributed/utils.py, get_pp_indices, without
// VLLM_PP_LAYER_PARTITION): layers / pp each, and the remainder one more
// each to the stages before the last, the second-to-last first.
func ppPartition(layers, pp int) []int {
	pp = max(pp, 1)
	parts := make([]int, pp)
	for i := range parts {
		parts[i] = layers / pp
	}
	for i := 2; i < layers%pp+2; i++ {
		parts[pp-i]++
	}
	return parts
}

// KVHeadsPerRank is the KV heads one tensor-parallel rank caches: vLLM
// and SGLang give each rank max(1, kv_heads / TP), so that with fewer KV
// heads than ranks each head is replicated on TP / kv_heads ranks. An MLA
// latent is one "head" that every rank keeps whole.
func KVHeadsPerRank(kvHeads, tp int, mla bool) int {
	if mla {
		return 1
	}
	return max(1, kvHeads/max(tp, 1))
}
