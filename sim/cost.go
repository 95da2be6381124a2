package sim

import (
	"math"
	"time"

	"github.com/servebench/servebench/backend"
)

// mmvqMaxBatch is the largest micro-batch ggml's CUDA backend multiplies
// with its vector kernels (MMVQ_MAX_BATCH_SIZE in ggml-cuda/mmvq.cuh):
// there each extra column costs about as much again in arithmetic, which
// the sequence cost models for llama.cpp and Ollama.
const mmvqMaxBatch = 8

// shape is the work of one step (vLLM, SGLang) or one micro-batch
// (llama.cpp, Ollama).
type shape struct {
	// tokens is the input tokens computed.
	tokens int
	// seqs is the sequences with tokens in it; samples those that sample
	// a token at its end.
	seqs, samples int
	// ctx is Σ over sequences of the context tokens whose KV is read.
	ctx float64
	// attn is Σ over sequences of query × key pairs: n·ctx + n(n+1)/2 for
	// n new tokens after ctx cached ones.
	attn float64
	// images is the images whose encoder runs in it.
	images int
}

// add counts one sequence of n new tokens after ctx cached ones.
func (s *shape) add(n, ctx int, samples bool) {
	s.tokens += n
	s.seqs++
	if samples {
		s.samples++
	}
	s.ctx += float64(ctx)
	s.attn += float64(n)*float64(ctx) + float64(n)*float64(n+1)/2
}

// costModel turns shapes into durations: the roofline of the package doc.
type costModel struct {
	secPerByte, secPerFLOP float64
	// vectorSecPerByte is what a weight byte costs in a micro-batch of at
	// most mmvqMaxBatch tokens, streamed by ggml's vector kernels at
	// vectorBandwidth (llama.cpp and Ollama; 0 for the batched servers,
	// whose weights stream at secPerByte): seconds.
	vectorSecPerByte float64
	m                ModelCost
	step, seq        float64 // seconds
	// expertFloor is the least time one selected expert's products take
	// in an MoE layer of a micro-batch of at most mmvqMaxBatch tokens
	// (llama.cpp and Ollama; 0 for the batched servers, whose fused_moe is
	// in the roofline): seconds.
	expertFloor float64
	// expertFloorStep is what the expert floor adds to each small
	// micro-batch (expertFloorTime), fixed by the model: seconds.
	expertFloorStep float64
	// layerFloorStep is what the layers' kernel chain adds to every
	// micro-batch (Layers × llamaDefaults.layerFloor; llama.cpp and
	// Ollama): seconds.
	layerFloorStep float64
	// expertTiles says whether an MoE micro-batch above mmvqMaxBatch
	// tokens pays MMQ's per-expert tile padding (llama.cpp and Ollama with
	// a quantized model: expertPadFLOPs).
	expertTiles bool
	// padSizes are the CUDA-graph capture sizes a step's token count is
	// padded up to (ascending); nil = no padding.
	padSizes []int
	// comm is the tensor-parallel ranks' collectives (nil on one GPU).
	comm *commModel
}

func newCostModel(c *Config) *costModel {
	p := c.Params
	cm := &costModel{
		secPerByte: 1 / (c.GPU.BandwidthBytesPerS * p.MemoryEfficiency),
		secPerFLOP: 1 / (c.GPU.kernelPeak(c.Model.Kernel) * p.ComputeEfficiency),
		m:          c.Model.shard(c.Parallel.size(), c.Parallel.KVShare),
		step:       p.StepOverhead.Seconds(),
		seq:        p.SeqCost.Seconds(),
		comm:       newCommModel(c),
	}
	if !batched(c.Backend) {
		cm.vectorSecPerByte = 1 / (vectorBandwidth(c.GPU) * p.MemoryEfficiency)
		cm.expertFloor = llamaDefaults.expertFloor.Seconds()
		cm.expertTiles = c.Model.Kernel == KernelMMQ
		cm.expertFloorStep = cm.expertFloorTime()
		cm.layerFloorStep = float64(c.Model.Layers) * llamaDefaults.layerFloor.Seconds()
	}
	if c.Server.CUDAGraphs && batched(c.Backend) {
		cm.padSizes = captureSizes(c.Backend, c.Server.MaxNumSeqs, c.Server.MaxNumBatchedTokens)
	}
	return cm
}

// captureSizes are the batch sizes a server captures CUDA graphs for.
// vLLM (vllm/config/vllm.py, _set_cudagraph_sizes): [1, 2, 4] +
// range(8, 256, 8) + range(256, max+1, 16) with max = min(2 ×
// max_num_seqs, 512, max_num_batched_tokens). SGLang
// (server_args.py, cuda_graph_bs): the same ladder up to 160 by default on
// GPUs of this class.
func captureSizes(f backend.Kind, seqs, batched int) []int {
	top := min(2*seqs, 512, batched)
	if f == backend.SGLang {
		top = min(seqs, 160)
	}
	var out []int
	for s := 1; s <= top; s++ {
		if s == 1 || s == 2 || s == 4 || (s < 256 && s%8 == 0) || (s >= 256 && s%16 == 0) {
			out = append(out, s)
		}
	}
	return out
}

// pad is n rounded up to the next capture size, or n past the largest.
func (c *costModel) pad(n int) int {
	if len(c.padSizes) == 0 || n > c.padSizes[len(c.padSizes)-1] {
		return n
	}
	lo, hi := 0, len(c.padSizes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if c.padSizes[mid] >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return c.padSizes[lo]
}

// roofline is max(memory time, compute time) of s in seconds, without
// overheads, its matrices computed for tok tokens (s.tokens, or as
// padded to a CUDA-graph size).
func (c *costModel) roofline(s *shape, tok int) float64 {
	memory := c.weightBytes(s.tokens)*c.weightSecPerByte(s.tokens) +
		(s.ctx+float64(s.tokens))*c.m.KVBytesPerToken*c.secPerByte
	flops := float64(tok)*c.m.FLOPsPerToken + float64(s.samples)*c.m.HeadFLOPs +
		s.attn*c.m.AttnFLOPsPerCtx + float64(s.images)*c.m.ImageFLOPs
	if c.expertTiles && s.tokens > mmvqMaxBatch {
		flops += c.expertPadFLOPs(s.tokens)
	}
	return math.Max(memory, flops*c.secPerFLOP)
}

// weightSecPerByte is what a weight byte costs in a step of tokens
// tokens: vectorSecPerByte where ggml's vector kernels stream the
// weights, else secPerByte.
func (c *costModel) weightSecPerByte(tokens int) float64 {
	if c.vectorSecPerByte > 0 && tokens <= mmvqMaxBatch {
		return c.vectorSecPerByte
	}
	return c.secPerByte
}

// vectorBandwidth is the bandwidth ggml's vector kernels (MMVQ for the
// quantized types, its F16 mat-vec kernel) stream weights at on g,
// before the memory efficiency: the board's, or
// llamaDefaults.vectorBytesPerSMCycle per SM cycle where that is less.
// Each SM keeps a bounded number of weight loads in flight and unpacks
// what arrives on its integer lanes, so a board whose bandwidth per SM
// cycle is high (A100 80GB 13.4 B, H100 SXM 13.9 B, H200 19.9 B against
// 3.1 on an RTX 4090 and 6.7 on an RTX 3090) reaches only part of it.
// A board of unknown composition (SMCyclesPerS 0) streams at its
// bandwidth.
func vectorBandwidth(g GPU) float64 {
	bw := g.BandwidthBytesPerS
	if g.SMCyclesPerS > 0 {
		bw = min(bw, g.SMCyclesPerS*llamaDefaults.vectorBytesPerSMCycle)
	}
	return bw
}

// weightBytes is the weight bytes a step of tokens tokens reads: all of
// them for a dense model; for a mixture of experts the dense part and the
// experts its tokens visit, E(1 − (1 − k/E)^tokens) of E in expectation
// when each token picks k of E experts uniformly (routers are trained to
// balance the load).
func (c *costModel) weightBytes(tokens int) float64 {
	m := &c.m
	if m.Experts <= 0 || m.ExpertBytes <= 0 || tokens <= 0 {
		return m.WeightBytesPerStep
	}
	return m.WeightBytesPerStep - m.ExpertBytes*(1-c.touched(tokens))
}

// touched is the expected share of a layer's routed experts that tokens
// tokens visit, 1 − (1 − k/E)^tokens (0 for a dense model).
func (c *costModel) touched(tokens int) float64 {
	m := &c.m
	if m.Experts <= 0 || tokens <= 0 {
		return 0
	}
	miss := 1 - float64(min(m.ExpertsPerToken, m.Experts))/float64(m.Experts)
	return 1 - math.Pow(miss, float64(tokens))
}

// expertFloorTime is what the latency floor of ggml's expert products
// adds to a micro-batch of at most mmvqMaxBatch tokens: for each of the k
// expert slots of each MoE layer, the floor less the time the roofline
// already gives that expert's bytes (its share of ExpertBytes), where
// that is less. A small expert (Qwen3-30B-A3B's 768 × 2048 products,
// 2.6 MB a slot at Q4_0) reads in a few microseconds, under the floor; a
// large one (gpt-oss-20b's 13 MB) reads in more than it, and adds
// nothing. 0 for a dense model.
func (c *costModel) expertFloorTime() float64 {
	m := &c.m
	if m.MoELayers <= 0 || m.Experts <= 0 || c.expertFloor <= 0 {
		return 0
	}
	perExpert := m.ExpertBytes / float64(m.MoELayers*m.Experts) * c.weightSecPerByte(1)
	slots := float64(m.MoELayers) * float64(min(m.ExpertsPerToken, m.Experts))
	return slots * max(c.expertFloor-perExpert, 0)
}

// mmqMaxTileWidth is the widest column tile ggml's MMQ kernel uses on
// GPUs with Turing-or-later tensor cores (mmq_x_max in mul_mat_q_case,
// ggml-cuda/mmq.cuh).
const mmqMaxTileWidth = 128

// mmqTileWidth is the column tile (mmq_x) MMQ picks for a product of
// cols columns: mul_mat_q_case tries 8, 16, … up to mmqMaxTileWidth (in
// steps of 16 from 48 on tensor-core GPUs) and keeps the first that
// gives the fewest tiles of ncols_max columns.
func mmqTileWidth(cols int) int {
	best, bestTiles := 0, math.MaxInt
	for x := 8; x <= mmqMaxTileWidth && bestTiles > 1; x += 8 {
		if x >= 48 && x%16 != 0 {
			continue
		}
		if t := (cols + x - 1) / x; t < bestTiles {
			best, bestTiles = x, t
		}
	}
	return best
}

// expertPadFLOPs is the arithmetic MMQ's expert products add over the
// roofline's active FLOPs in a micro-batch of tokens tokens of a mixture
// of experts. ggml's mul_mat_id (ggml_cuda_mul_mat_q with expert
// bounds) picks one tile width for the whole micro-batch, from its token
// count (ncols_max = ne12, mmqTileWidth), and runs each expert's columns
// as whole tiles of that width: at 512 tokens the tile is 128 columns
// while each of Qwen3-30B-A3B's 128 experts gets 32 tokens on average
// (k = 8), so the tensor cores do four times the expert arithmetic. Per
// MoE layer the tiles are E × max(touched share, mean columns per expert
// / width), each of width columns, against n × k columns of work.
func (c *costModel) expertPadFLOPs(tokens int) float64 {
	m := &c.m
	if m.MoELayers <= 0 || m.Experts <= 0 || m.ExpertColumnFLOPs <= 0 {
		return 0
	}
	k := min(m.ExpertsPerToken, m.Experts)
	width := float64(mmqTileWidth(tokens))
	work := float64(tokens * k)
	tiles := float64(m.Experts) * max(c.touched(tokens), work/float64(m.Experts)/width)
	pad := tiles*width - work
	if pad <= 0 {
		return 0
	}
	return pad * m.ExpertColumnFLOPs * float64(m.MoELayers)
}

// mmqOpsPerSMCycle is the dense INT8 mma rate of one SM per clock from
// Turing to RTX Blackwell (four tensor cores of 256 multiply-adds: every
// GeForce and RTX board in the catalog, the T4, A10, L4 and L40S; the
// L40's datasheet states half), the rate ggml's MMQ
// efficiency was fitted at. MMQ reaches about a fifth of it
// (llamaDefaults.mmqEfficiency): its tiles are bound by loading and
// unpacking the quantized blocks on each SM, not by the tensor cores, so
// the 2× and 4× wider tensor cores of A100 and H100 SMs do not speed it
// up. One 9B Q8_0 file's pp512 on an H100 SXM (8,106 t/s) matched an
// L40S's (8,355) although the H100's INT8 peak is 2.7× the L40S's
// (testdata/published-llamacpp-llama-bench.json, decode_hbm).
const mmqOpsPerSMCycle = 2048

// kernelPeak is the tensor rate kernel k runs at on g: INT8 for ggml's
// MMQ, FP8 for CUTLASS scaled_mm, else (or where the board lacks the
// rate) dense FP16 with FP32 accumulate; each at the clock the board
// sustains under tensor load (TensorClockRatio, relative to the GeForce
// boards the efficiencies were fitted on). MMQ's rate is besides at most
// mmqOpsPerSMCycle per SM cycle at the boost clock: that bound is the
// SM's loading and unpacking, not its tensor cores, so the tensor
// cores' clock share does not apply to it.
func (g GPU) kernelPeak(k Kernel) float64 {
	r := g.TensorClockRatio
	if !(r > 0) {
		r = 1
	}
	switch {
	case k == KernelMMQ && g.INT8OPS > 0:
		if g.SMCyclesPerS > 0 {
			return min(g.INT8OPS*r, mmqOpsPerSMCycle*g.SMCyclesPerS)
		}
		return g.INT8OPS * r
	case k == KernelFP8 && g.FP8FLOPS > 0:
		return g.FP8FLOPS * r
	}
	return g.PeakFLOPS * r
}

// batchStep is the time of one vLLM or SGLang step; decodeOnly says
// whether every sequence in it decodes one token (SGLang pads only those).
// On several GPUs it is one rank's roofline (the model's cost sharded)
// and the collectives of the padded batch.
func (c *costModel) batchStep(s *shape, decodeOnly bool, f backend.Kind) float64 {
	padded := f == backend.VLLM || decodeOnly
	tok := s.tokens
	if padded {
		tok = c.pad(tok)
	}
	return c.roofline(s, tok) + c.step + float64(s.seqs)*c.seq + c.comm.step(tok, s.samples)
}

// microBatch is the time of one llama.cpp or Ollama micro-batch: the
// roofline, the step overhead, the layers' kernel floor (layerFloorStep)
// and, for micro-batches small enough for ggml's vector kernels, the
// sequence cost per column (token) after the first (mmvqExtraColumns)
// and, for a mixture of experts, the expert floor (expertFloorTime):
// ggml's mul_mat_id runs each selected expert's matrix-vector products
// as blocks of their own, which take no less than a latency floor
// however few bytes they read, once per micro-batch however few tokens
// share them; so a decode step of a 3B-active MoE with small experts
// costs far more than its active bytes.
func (c *costModel) microBatch(s *shape) float64 {
	t := c.roofline(s, s.tokens) + c.step + c.layerFloorStep
	if s.tokens <= mmvqMaxBatch {
		t += float64(mmvqExtraColumns(s.tokens))*c.seq + c.expertFloorStep
	}
	return t
}

// mmvqExtraColumns is the columns of a micro-batch of tokens tokens whose
// dot products ggml's vector kernel (mmvq) adds to the time of its weight
// read: all but the first. With one column the kernel is bound by the
// read (its dp4a work takes under a fifth of the read's time on an RTX
// 3090) and the arithmetic hides under it; each further column adds its
// dot products to the same pass over the weights.
func mmvqExtraColumns(tokens int) int { return max(tokens-1, 0) }

// dur converts seconds to a Duration of at least one nanosecond.
func dur(sec float64) time.Duration {
	d := time.Duration(math.Round(sec * 1e9))
	return max(d, 1)
}
