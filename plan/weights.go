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
// (an average, not exact: use a GGUF file for exact weights).
var linearBytes = map[Quant]float64{
	"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1,
	"awq":  0.5 + 2.0/128 + 0.5/128,
	"gptq": 0.5 + 2.0/128 + 0.5/128,
	"q8_0": 34.0 / 32, "q4_0": 18.0 / 32, "q4_k_m": 4.85 / 8,
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

// WeightsBytes estimates the weight memory of m stored in format q:
// linear parameters × the format's bytes, plus embeddings, lm_head and
// the rest at 2 bytes (4 for fp32). The vision encoder of a
// vision-language model stays 16-bit in the Hugging Face quantized
// formats (AWQ, GPTQ, FP8 checkpoints leave it unquantized); MXFP4
// quantizes only the routed experts.
func WeightsBytes(m *modelspec.Spec, q Quant) int64 {
	p := m.Params()
	lb, eb, ob, vb := bytesPerParam(q)
	dense := p.Linear - p.Experts - p.Vision
	return int64(float64(dense)*lb + float64(p.Experts)*eb + float64(p.Vision)*vb + float64(p.Embedding+p.LMHead+p.Other)*ob)
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

// parts splits m's weights in format q per layer; tp > 1 gives one
// tensor-parallel rank's share (see rankShare).
func parts(m *modelspec.Spec, q Quant, tp int) weightParts {
	lb, eb, ob, vb := bytesPerParam(q)
	tp = max(tp, 1)
	h, hd := float64(m.Hidden), float64(m.HeadDim)
	kvRank := float64(kvHeadsPerRank(m.KVHeads, tp, false))
	if tp == 1 {
		kvRank = float64(m.KVHeads)
	}
	var w weightParts
	w.layers = make([]int64, m.Layers)
	for i := range w.layers {
		// q and o are split over the ranks; k and v keep max(1, kv/TP) heads
		attn := 2*h*float64(m.Heads)*hd/float64(tp) + 2*h*kvRank*hd
		b := attn * lb
		if m.IsMoELayer(i) {
			b += float64(m.Experts)*3*h*float64(m.MoEIntermediate)/float64(tp)*eb +
				3*h*float64(m.SharedExpertIntermediate)/float64(tp)*lb + h*float64(m.Experts)*ob
		} else {
			b += 3 * h * float64(m.Intermediate) / float64(tp) * lb
		}
		b += 2 * h * ob // norms
		w.layers[i] = int64(b)
	}
	emb := float64(m.Vocab) * h / float64(tp) * ob
	w.embedding = int64(emb)
	w.lmHead = int64(emb)
	if m.Vision != nil {
		w.vision = int64(float64(m.Vision.Params()) / float64(tp) * vb)
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
