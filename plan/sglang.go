package plan

import (
	"fmt"
	"math"
)

// SGLangSettings are SGLang's memory settings (--mem-fraction-static,
// --max-total-tokens, --chunked-prefill-size, --cuda-graph-max-bs,
// --page-size). Zero values take SGLang's defaults (see defaults).
type SGLangSettings struct {
	// MemFractionStatic is the fraction of the GPU memory free at start
	// that weights and the KV pool may take.
	MemFractionStatic float64 `json:"mem_fraction_static"`
	// MaxTotalTokens caps the KV pool (0 = no cap).
	MaxTotalTokens int `json:"max_total_tokens,omitempty"`
	// ChunkedPrefillSize is the prefill chunk (-1 = no chunking).
	ChunkedPrefillSize int `json:"chunked_prefill_size"`
	// CUDAGraphMaxBS is the largest batch captured as a CUDA graph;
	// CUDAGraphBS the batch sizes captured.
	CUDAGraphMaxBS int   `json:"cuda_graph_max_bs"`
	CUDAGraphBS    []int `json:"cuda_graph_bs,omitempty"`
	// PageSize is the KV pool's page in tokens (1).
	PageSize int `json:"page_size"`
}

// check checks SGLang's settings against their ranges (zero: its
// default). validate calls it whichever family is planned, so that a
// setting out of range is refused even where it is not used.
func (s *SGLangSettings) check() error {
	switch {
	case !(s.MemFractionStatic >= 0 && s.MemFractionStatic <= 1):
		return &InputError{FieldMemFractionStatic, s.MemFractionStatic, "must be in [0, 1] (0: the default)"}
	case s.MaxTotalTokens < 0 || s.MaxTotalTokens > MaxTotalTokens:
		return &InputError{FieldMaxTotalTokens, s.MaxTotalTokens, fmt.Sprintf("must be in 0..%d", MaxTotalTokens)}
	case s.ChunkedPrefillSize < -1 || s.ChunkedPrefillSize > MaxChunkedTokens:
		return &InputError{FieldChunkedPrefill, s.ChunkedPrefillSize, fmt.Sprintf("must be -1 (off) or in 0..%d", MaxChunkedTokens)}
	case s.CUDAGraphMaxBS < 0 || s.CUDAGraphMaxBS > MaxCUDAGraphBS:
		return &InputError{FieldCUDAGraphMaxBS, s.CUDAGraphMaxBS, fmt.Sprintf("must be in 0..%d", MaxCUDAGraphBS)}
	case s.PageSize < 0 || s.PageSize > 1<<16:
		return &InputError{FieldPageSize, s.PageSize, "must be in 0..65536"}
	}
	return nil
}

// SGLang's start-up overheads below the free memory it measures before
// loading weights (model_runner.py: total_gpu_memory is what
// get_available_gpu_memory returns after torch.distributed is set up).
// The CUDA context and PyTorch's own allocations take about 0.45 GiB: a
// published RTX 4090 start-up (sgl-project/sglang#3419) logs "Load weight
// begin. avail mem=23.16 GB" on a 23.63 GiB card. With tensor
// parallelism NCCL's initialisation takes 0.13 GiB more ("Init torch
// distributed ends. mem usage=0.13 GB" in the QwQ-32B TP=4 start-up of
// plan/testdata/multi-gpu-logs.json).
const (
	sglangContextGiB = 0.45
	sglangNCCLGiB    = 0.13
)

// defaults fills SGLang's defaults as server_args.py
// (_handle_gpu_memory_settings, SGLang v0.5.x) derives them from the GPU
// memory in MiB: chunked_prefill_size 2048 below 35 GB, 4096 below 60,
// 8192 below 160, else 16384; cuda_graph_max_bs 8 below 20 GB, 24 (80
// from TP=4) below 35, 32 (160) below 60, 256 (512) below 160, else 512;
// and mem_fraction_static = (gpu_mem − reserved) / gpu_mem with reserved
// = 512 + max(chunked_prefill_size, 2048) × 1.5 + cuda_graph_max_bs × 2 +
// TP × PP / 8 × 1024 MiB, at least 10 GiB above 60 GB, rounded to three
// decimals. (SGLang up to 0.4.x used 0.88, 0.87 at TP=2, 0.85 at TP=4,
// 0.81 at TP=8 instead: pass --mem-fraction-static for those.) gpuGiB
// is the GPU's memory, tp and pp the tensor and pipeline parallel sizes
// (0 = 1).
func (s *SGLangSettings) defaults(gpuGiB float64, tp, pp int) {
	gpuMiB := gpuGiB * 1024
	tp4 := tp >= 4
	pick := func(small, large int) int {
		if tp4 {
			return large
		}
		return small
	}
	var chunk, bs int
	switch {
	case gpuMiB < 20*1024:
		chunk, bs = 2048, 8
	case gpuMiB < 35*1024:
		chunk, bs = 2048, pick(24, 80)
	case gpuMiB < 60*1024:
		chunk, bs = 4096, pick(32, 160)
	case gpuMiB < 160*1024:
		chunk, bs = 8192, pick(256, 512)
	default:
		chunk, bs = 16384, 512
	}
	if s.ChunkedPrefillSize == 0 {
		s.ChunkedPrefillSize = chunk
	}
	if s.CUDAGraphMaxBS == 0 {
		s.CUDAGraphMaxBS = bs
	}
	if len(s.CUDAGraphBS) == 0 {
		s.CUDAGraphBS = sglangGraphBatchSizes(s.CUDAGraphMaxBS)
	}
	if s.PageSize == 0 {
		s.PageSize = 1
	}
	if s.MemFractionStatic == 0 {
		reserved := 512 + float64(max(s.ChunkedPrefillSize, 2048))*1.5 + float64(s.CUDAGraphMaxBS)*2 +
			float64(max(tp, 1)*max(pp, 1))/8*1024
		if gpuMiB > 60*1024 {
			reserved = max(reserved, 10*1024)
		}
		if gpuMiB > reserved {
			s.MemFractionStatic = math.Round((gpuMiB-reserved)/gpuMiB*1000) / 1000
		} else {
			s.MemFractionStatic = 0.88
		}
	}
}

// sglangGraphBatchSizes is the CUDA-graph batch sizes SGLang captures up
// to max (server_args.py _generate_cuda_graph_batch_sizes without
// speculative decoding): 1, 2, 4, 8, 12, 16 to 256 by 8, 272 to 496 by
// 16, then 512 up by 32.
func sglangGraphBatchSizes(maxBS int) []int {
	var out []int
	add := func(b int) {
		if b <= maxBS {
			out = append(out, b)
		}
	}
	for _, b := range []int{1, 2, 4, 8, 12} {
		add(b)
	}
	for b := 16; b <= 256; b += 8 {
		add(b)
	}
	for b := 272; b < 512; b += 16 {
		add(b)
	}
	for b := 512; b <= maxBS; b += 32 {
		add(b)
	}
	return out
}

// sglangPredict follows SGLang's model_runner.profile_max_num_token (the
// same arithmetic since SGLang 0.2): with total the GPU memory free before
// loading weights and available what is free after,
//
//	rest  = available − total × (1 − mem_fraction_static)
//	cell  = layers × max(1, kv_heads/TP) × head_dim × 2 × dtype bytes
//	        (MLA: (kv_lora_rank + qk_rope_head_dim) × layers × dtype bytes)
//	max_total_num_tokens = ⌊rest / cell⌋, capped by --max-total-tokens,
//	        rounded down to the page size,
//
// the smallest over the tensor-parallel ranks (get_available_gpu_memory
// with distributed=True). total is the GPU memory less the CUDA context
// (and NCCL with TP); available is total less the rank's weights.
// Activations and CUDA graphs are not subtracted: they live in the
// (1 − mem_fraction_static) SGLang keeps back.
func sglangPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	m := &in.Model
	var warns []string
	if d.isGGMLQuant() {
		warns = append(warns, "SGLang has no "+string(d)+" KV cache (use auto, bf16 or fp8)")
	}
	if hasLocalLayers(m) {
		warns = append(warns, "sliding-window and chunked layers are counted as full attention (SGLang's separate SWA pool is not modelled): the figure is a lower bound for such models")
	}
	s := in.SGLang
	tp, pp := max(in.TensorParallel, 1), max(in.PipelineParallel, 1)
	kb := d.BytesPerElement(m.Dtype)
	stages := ppPartition(m.Layers, pp)
	p := Prediction{KVCacheDtype: string(d), BytesPerElement: kb, BlockSize: s.PageSize, Context: in.Context, Fits: true,
		BytesPerToken: float64(m.Layers*vllmPerLayerElems(m, tp)) * kb, SGLang: &s}
	tokens, limiting, short := math.MaxInt, 0, 0.0
	devs := in.devices()
	first := 0
	for st := 0; st < pp; st++ {
		n := stages[st]
		cell := float64(n*vllmPerLayerElems(m, tp)) * kb
		for r := 0; r < tp; r++ {
			rank := st*tp + r
			dev := devs[min(rank, len(devs)-1)]
			total := dev.MemoryGiB - sglangContextGiB
			if tp*pp > 1 {
				total -= sglangNCCLGiB
			}
			w := in.WeightsGiB
			if w == 0 {
				w = float64(weightsBytes) * rankShare(m, in.Quant, tp, first, n, st == 0, st == pp-1) / GiB
			}
			rest := sglangRest(total, w, s.MemFractionStatic)
			share := DeviceShare{Device: dev, Rank: rank, Stage: st, TensorRank: r, Layers: n, FirstLayer: first,
				KVHeads: KVHeadsPerRank(m.KVHeads, tp, m.IsMLA()), WeightsGiB: round(w, 3), AvailableKVGiB: round(rest, 3),
				CommGiB: round(total-dev.MemoryGiB+sglangContextGiB, 3)}
			if rest <= 0 {
				p.Fits, short = false, max(short, -rest)
			}
			t := sglangTokens(rest, cell)
			if t < tokens {
				tokens, limiting = t, rank
				p.WeightsGiB, p.RequestedGiB, p.NonTorchGiB = round(w, 3), round(total*s.MemFractionStatic, 3), round(dev.MemoryGiB-total, 3)
			}
			p.Devices = append(p.Devices, share)
		}
		first += n
	}
	if !p.Fits {
		p.ShortfallGiB = round(short, 2)
		return p, warns
	}
	if s.MaxTotalTokens > 0 && s.MaxTotalTokens < tokens {
		tokens = s.MaxTotalTokens
	}
	tokens = tokens / s.PageSize * s.PageSize
	p.PredictedTokens, p.Blocks = tokens, tokens/s.PageSize
	for i := range p.Devices {
		cell := float64(p.Devices[i].Layers*vllmPerLayerElems(m, tp)) * kb
		p.Devices[i].KVGiB = round(float64(tokens)*cell/GiB, 3)
	}
	p.KVGiB = p.Devices[limiting].KVGiB
	p.MaxConcurrency = round(concurrency(tokens, in.Context), 2)
	if tokens < in.Context {
		warns = append(warns, "one sequence of the full context does not fit the KV pool; SGLang caps the context at max_total_num_tokens")
	}
	return p, warns
}

// sglangRest is profile_max_num_token's rest_memory (GiB): the memory
// free after loading weights less the (1 − mem_fraction_static) share
// of the memory free before, which SGLang keeps back.
func sglangRest(freeBefore, weights, memFractionStatic float64) float64 {
	return freeBefore - weights - freeBefore*(1-memFractionStatic)
}

// sglangTokens is max_num_token = rest_memory × 2³⁰ // cell_size.
func sglangTokens(restGiB, cellBytes float64) int {
	return int(math.Floor(max(restGiB, 0) * GiB / cellBytes))
}
