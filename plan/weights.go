package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servebench/servebench/modelspec"
)

// Quant is a weight format for the --quant estimate of weight memory.
type Quant string

// linearBytes is the bytes per linear-layer parameter of each format;
// embeddings, lm_head, norms and biases stay 16-bit in every format but
// fp32 (vLLM keeps them unquantized in AWQ, GPTQ and FP8 checkpoints).
//
// AWQ/GPTQ int4 with group size 128: 4 bits per weight (0.5 byte) plus per
// group one fp16 scale (2/128) and one packed 4-bit zero point (0.5/128).
// GGML formats: q8_0 34/32, q4_0 18/32; q4_k_m is a mixed format whose
// size llama.cpp reports as about 4.85 bits per weight for 7B-class models
// (q5_k_m about 5.67: llama-quantize's table, 4.45 GiB for LLaMA-v1-7B).
// For these three the table gives only the bits per weight a
// recommendation shows and a vision tower's rate: SplitWeights sizes
// every other tensor at the type llama-quantize gives it.
var linearBytes = map[Quant]float64{
	"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1,
	"awq":  0.5 + 2.0/128 + 0.5/128,
	"gptq": 0.5 + 2.0/128 + 0.5/128,
	"q8_0": 34.0 / 32, "q4_0": 18.0 / 32, "q4_k_m": 4.85 / 8, "q5_k_m": 5.67 / 8,
	QuantMXFP4: 4.25 / 8,
}

// ParseQuant returns the weight format named s or an error listing them.
func ParseQuant(s string) (Quant, error) {
	q := Quant(strings.ToLower(s))
	if q == "float16" {
		q = "fp16"
	}
	if q == "bfloat16" {
		q = "bf16"
	}
	if _, ok := linearBytes[q]; ok {
		return q, nil
	}
	names := make([]string, 0, len(linearBytes))
	for k := range linearBytes {
		names = append(names, string(k))
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown weight format %q (want one of %s)", s, strings.Join(names, ", "))
}

// WeightSplit is a model's weight memory in one format, split by what a
// decode step reads: Step (every layer, the norms and the lm_head, which
// is the embedding matrix when the two are tied) is read whole each step;
// Embedding (an untied input embedding, of which a step reads a few rows)
// and Vision (the vision encoder, run on images only) are not.
type WeightSplit struct {
	Step, Embedding, Vision int64
}

// Total is the whole weight memory.
func (s WeightSplit) Total() int64 { return s.Step + s.Embedding + s.Vision }

// SplitWeights estimates the weight memory of m stored in format q.
//
// Hugging Face formats: linear parameters × the format's bytes, plus
// embeddings, lm_head and the rest at 2 bytes (4 for fp32). The vision
// encoder of a vision-language model stays 16-bit in the quantized
// formats (AWQ, GPTQ, FP8 checkpoints leave it unquantized); MXFP4
// quantizes only the routed experts.
//
// llama.cpp's quantizations (q4_k_m, q4_0, q8_0): every tensor at the
// type llama-quantize gives it (ggufTensorType: Q4_K_M is mostly Q4_K,
// with Q6_K for the output and for some layers' attn_v and ffn_down, the
// token embedding Q4_K), norms and biases in F32.
//
// Either way the parameters the published count has beyond the
// architecture's (Params) count as linear ones.
func SplitWeights(m *modelspec.Spec, q Quant) WeightSplit {
	p := m.Params()
	lb, eb, ob, vb := bytesPerParam(q)
	if isGGUFQuant(q) {
		return ggufSplit(m, q, p, vb)
	}
	dense := p.Linear - p.Experts - p.Vision
	s := WeightSplit{Vision: int64(float64(p.Vision) * vb)}
	s.Step = int64(float64(dense)*lb + float64(p.Experts)*eb + float64(p.LMHead+p.Other)*ob)
	if m.TiedEmbeddings {
		s.Step += int64(float64(p.Embedding) * ob)
	} else {
		s.Embedding = int64(float64(p.Embedding) * ob)
	}
	return s
}

// ggufSplit is SplitWeights for llama.cpp's quantizations: the tensors
// of parts at their GGUF types, the final norm and biases in F32, and the
// parameters beyond the architecture's at the file type's default type.
func ggufSplit(m *modelspec.Spec, q Quant, p modelspec.ParamSplit, vb float64) WeightSplit {
	w := parts(m, q, 1)
	s := WeightSplit{Vision: int64(float64(p.Vision) * vb)}
	for _, l := range w.layers {
		s.Step += l
	}
	qd, kvd := int64(m.Heads*m.HeadDim), int64(m.KVHeads*m.HeadDim)
	s.Step += 4 * int64(m.Hidden) // output_norm
	if m.QKVBias {
		s.Step += 4 * int64(m.Layers) * (qd + 2*kvd)
	}
	if extra := p.Linear - p.Vision - archLinear(m); extra != 0 {
		s.Step += int64(float64(extra) * ggufDefault[q].BytesPerElement())
	}
	if m.TiedEmbeddings {
		s.Step += w.embedding
	} else {
		s.Step += w.lmHead
		s.Embedding = w.embedding
	}
	return s
}

// archLinear is the linear parameters of m's layers from its dimensions
// alone (modelspec's Params before the published-count correction).
func archLinear(m *modelspec.Spec) int64 {
	h, kvd, qd := int64(m.Hidden), int64(m.KVHeads*m.HeadDim), int64(m.Heads*m.HeadDim)
	var n int64
	for i := 0; i < m.Layers; i++ {
		n += 2*h*qd + 2*h*kvd
		if m.IsMoELayer(i) {
			n += int64(m.Experts)*3*h*int64(m.MoEIntermediate) + 3*h*int64(m.SharedExpertIntermediate) + h*int64(m.Experts)
		} else {
			n += 3 * h * int64(m.Intermediate)
		}
	}
	return n
}

// WeightsBytes estimates the weight memory of m stored in format q (see
// SplitWeights).
func WeightsBytes(m *modelspec.Spec, q Quant) int64 {
	return SplitWeights(m, q).Total()
}

// DefaultQuant is the format a model's own dtype implies (bf16/fp16/fp32).
func DefaultQuant(m *modelspec.Spec) Quant {
	d := strings.ToLower(m.Dtype)
	switch {
	case strings.Contains(d, "32"):
		return "fp32"
	case d == "float16" || d == "fp16":
		return "fp16"
	}
	return "bf16"
}

// QuantMXFP4 is gpt-oss's checkpoint format: the routed experts in MXFP4
// (4-bit values with one 8-bit scale per 32: 4.25 bits per weight),
// everything else (attention, router, embeddings) in bf16, as its
// config's quantization_config.modules_to_not_convert says.
const QuantMXFP4 Quant = "mxfp4"

// bytesPerParam is how many bytes a format gives the linear, expert and
// other (embedding, norms) parameters and the vision encoder, which
// quantized checkpoints (AWQ, GPTQ, FP8, MXFP4) leave in 16 bits.
func bytesPerParam(q Quant) (linear, experts, other, vision float64) {
	linear, other, vision = linearBytes[q], 2, 2
	experts = linear
	switch q {
	case "fp32":
		other, vision = 4, 4
	case QuantMXFP4:
		linear = 2
	case "bf16", "fp16":
	default:
		if strings.HasPrefix(string(q), "q") {
			vision = linear // GGUF files quantize a vision tower too
		}
	}
	return
}

// weightParts is a model's weights split the way servers place them:
// per transformer layer (attention and MLP or experts, norms), the
// input embedding, the lm_head and the vision encoder, in bytes of a
// format (before the published-count correction WeightsBytes applies).
type weightParts struct {
	layers                    []int64
	embedding, lmHead, vision int64
}

// weightFormat gives the bytes per element of each weight tensor of a
// model in one format: in Hugging Face formats the linear, expert,
// vision and other (embedding, lm_head, norms) rates of bytesPerParam;
// in llama.cpp's quantizations the type llama-quantize picks for each
// tensor (ggufTensorType).
type weightFormat struct {
	m              *modelspec.Spec
	q              Quant
	lb, eb, ob, vb float64
	gguf           bool
	// nDown is llama-quantize's count of ffn_down tensors (a MoE layer
	// has its experts' and its shared expert's).
	nDown int
}

func newWeightFormat(m *modelspec.Spec, q Quant) weightFormat {
	f := weightFormat{m: m, q: q, gguf: isGGUFQuant(q)}
	f.lb, f.eb, f.ob, f.vb = bytesPerParam(q)
	for i := 0; i < m.Layers; i++ {
		f.nDown++
		if m.IsMoELayer(i) && m.SharedExpertIntermediate > 0 {
			f.nDown++
		}
	}
	return f
}

// bytes is the bytes per element of a tensor of role r (of the routed
// experts when expert) in layer i whose rows have ncols elements.
func (f weightFormat) bytes(r tensorRole, expert bool, i int, ncols int) float64 {
	if f.gguf {
		return ggufTensorType(f.m, f.q, r, i, f.nDown, int64(ncols)).BytesPerElement()
	}
	switch {
	case r == roleEmbedding || r == roleOutput || r == roleKeep:
		return f.ob
	case expert:
		return f.eb
	}
	return f.lb
}

// parts splits m's weights in format q per layer; tp > 1 gives one
// tensor-parallel rank's share (see rankShare).
func parts(m *modelspec.Spec, q Quant, tp int) weightParts {
	f := newWeightFormat(m, q)
	tp = max(tp, 1)
	h, hd := float64(m.Hidden), float64(m.HeadDim)
	kvRank := float64(KVHeadsPerRank(m.KVHeads, tp, false))
	if tp == 1 {
		kvRank = float64(m.KVHeads)
	}
	qd := m.Heads * m.HeadDim
	var w weightParts
	w.layers = make([]int64, m.Layers)
	for i := range w.layers {
		// q and o are split over the ranks; k and v keep max(1, kv/TP) heads
		qo := h * float64(m.Heads) * hd / float64(tp)
		kv := h * kvRank * hd
		b := qo*f.bytes(roleAttnQ, false, i, m.Hidden) + qo*f.bytes(roleAttnOut, false, i, qd) +
			kv*f.bytes(roleAttnK, false, i, m.Hidden) + kv*f.bytes(roleAttnV, false, i, m.Hidden)
		if m.IsMoELayer(i) {
			e := float64(m.Experts) * h * float64(m.MoEIntermediate) / float64(tp)
			sh := h * float64(m.SharedExpertIntermediate) / float64(tp)
			b += 2*e*f.bytes(roleFFNUpGate, true, i, m.Hidden) + e*f.bytes(roleFFNDown, true, i, m.MoEIntermediate) +
				2*sh*f.bytes(roleFFNUpGate, false, i, m.Hidden) + sh*f.bytes(roleFFNDown, false, i, m.SharedExpertIntermediate) +
				h*float64(m.Experts)*f.bytes(roleKeep, false, i, m.Hidden)
		} else {
			mlp := h * float64(m.Intermediate) / float64(tp)
			b += 2*mlp*f.bytes(roleFFNUpGate, false, i, m.Hidden) + mlp*f.bytes(roleFFNDown, false, i, m.Intermediate)
		}
		b += 2 * h * f.bytes(roleKeep, false, i, m.Hidden) // norms
		w.layers[i] = int64(b)
	}
	emb := float64(m.Vocab) * h / float64(tp)
	embRole := roleEmbedding
	if m.TiedEmbeddings {
		embRole = roleOutput // llama-quantize gives a tied token_embd the output's type
	}
	w.embedding = int64(emb * f.bytes(embRole, false, 0, m.Hidden))
	w.lmHead = int64(emb * f.bytes(roleOutput, false, 0, m.Hidden))
	if m.TiedEmbeddings {
		w.lmHead = w.embedding
	}
	if m.Vision != nil {
		w.vision = int64(float64(m.Vision.Params()) / float64(tp) * f.vb)
	}
	return w
}

// sum is the bytes of layers [first, first+n), with the embedding
// (first stage), the lm_head (last stage; a tied one only when it is not
// also the first, i.e. with pipeline parallelism) and the vision encoder
// (first stage).
func (w weightParts) sum(first, n int, firstStage, lastStage, tied bool) int64 {
	var b int64
	for i := first; i < first+n && i < len(w.layers); i++ {
		b += w.layers[i]
	}
	if firstStage {
		b += w.embedding + w.vision
	}
	if lastStage && (!tied || !firstStage) {
		b += w.lmHead
	}
	return b
}

// rankShare is the fraction of the whole model's weights that one
// vLLM/SGLang worker holds: its pipeline stage's layers [first,
// first+n), sharded over tp ranks (q, o, MLP and experts split; k and v
// of max(1, kv_heads/TP) heads, so replicated when there are fewer KV
// heads than ranks; vocabulary-parallel embedding and lm_head; the
// vision encoder on the first stage; norms and router replicated). The
// caller multiplies it by the whole model's weights, so that a GGUF
// file's real size or the published-count correction carries over.
func rankShare(m *modelspec.Spec, q Quant, tp, first, n int, firstStage, lastStage bool) float64 {
	whole := parts(m, q, 1).sum(0, m.Layers, true, true, m.TiedEmbeddings)
	if whole <= 0 {
		return 1
	}
	return float64(parts(m, q, tp).sum(first, n, firstStage, lastStage, m.TiedEmbeddings)) / float64(whole)
}

// ExpertBytesPerParam is the bytes a Hugging Face format gives a routed
// expert's parameter (MXFP4: 4.25 bits; else the linear width).
func ExpertBytesPerParam(q Quant) float64 {
	_, e, _, _ := bytesPerParam(q)
	return e
}
