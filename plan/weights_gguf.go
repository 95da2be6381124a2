package plan

import (
	"github.com/servebench/servebench/gguf"
	"github.com/servebench/servebench/modelspec"
)

// ggufDefault is the default tensor type of each GGUF file type --quant
// names (llama_ftype's default_type in llama-quantize).
var ggufDefault = map[Quant]gguf.Type{"q4_k_m": gguf.TypeQ4_K, "q5_k_m": gguf.TypeQ5_K, "q4_0": gguf.TypeQ4_0, "q8_0": gguf.TypeQ8_0}

// isGGUFQuant reports whether q is one of llama.cpp's quantizations,
// whose tensor types ggufTensorType gives.
func isGGUFQuant(q Quant) bool {
	_, ok := ggufDefault[q]
	return ok
}

// tensorRole is what a weight tensor does, as llama-quantize's type
// selection tells tensors apart (llama-quant.cpp, tensor_get_category).
type tensorRole int

const (
	roleEmbedding tensorRole = iota // token_embd
	roleOutput                      // output (the lm_head), or a tied token_embd
	roleAttnQ
	roleAttnK
	roleAttnV
	roleAttnOut
	roleFFNUpGate // ffn_up, ffn_gate (dense, expert or shared expert)
	roleFFNDown
	roleKeep // not quantized: norms, biases, the MoE router
)

// ggufTensorType is the type llama-quantize gives a tensor of role r in
// layer i (of n ffn_down tensors counted in i's order) whose rows have
// ncols elements, for file type q without an importance matrix, following
// llama-quant.cpp's llama_tensor_get_type:
//   - the output tensor (and a tied token_embd) is Q6_K, but Q8_0 stays
//     Q8_0;
//   - Q4_K_M raises attn_v and ffn_down to Q6_K in the layers
//     use_more_bits picks (the first and last eighth, and every third
//     between), and attn_v to Q5_K in a 70B Llama's other layers;
//   - with 8 experts (Mixtral) attn_v and attn_k are Q8_0, and Q4_K_M's
//     attn_output Q5_K;
//   - everything else quantized is the file type's default (token_embd
//     too), and norms, biases and the router stay F32;
//   - a type whose block does not divide ncols falls back (Q4_K to Q5_0,
//     Q5_K to Q5_1, Q6_K to Q8_0; then F16).
func ggufTensorType(m *modelspec.Spec, q Quant, r tensorRole, i, n int, ncols int64) gguf.Type {
	def := ggufDefault[q]
	t := def
	km := q == "q4_k_m" || q == "q5_k_m" // the _M mixes share their upgrades
	switch r {
	case roleKeep:
		return gguf.TypeF32
	case roleOutput:
		t = ggufOutputType(def, ncols)
	case roleAttnV:
		if km && useMoreBits(i, n) {
			t = gguf.TypeQ6_K
		}
		if km && t == gguf.TypeQ4_K && m.Arch == "llama" && m.Layers == 80 {
			t = gguf.TypeQ5_K // llama.cpp's LLM_TYPE_70B
		}
		if m.Experts == 8 {
			t = gguf.TypeQ8_0
		}
	case roleAttnK:
		if m.Experts == 8 {
			t = gguf.TypeQ8_0
		}
	case roleAttnOut:
		if km && m.Experts == 8 {
			t = gguf.TypeQ5_K
		}
	case roleFFNDown:
		if km && useMoreBits(i, n) {
			t = gguf.TypeQ6_K
		}
	}
	return ggufFallback(t, ncols)
}

// ggufOutputType is the output tensor's type for a file type of default
// type def: Q6_K, but Q8_0 stays Q8_0 and a row its block does not divide
// is Q8_0.
func ggufOutputType(def gguf.Type, ncols int64) gguf.Type {
	switch {
	case ncols%def.BlockElems() != 0 || def == gguf.TypeQ8_0:
		return gguf.TypeQ8_0
	}
	return gguf.TypeQ6_K
}

// useMoreBits is llama-quantize's choice of the layers that get more
// bits: the first and last eighth, and every third layer between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// ggufFallback is llama-quantize's tensor_type_fallback: a type whose
// block does not divide the row falls back to one of 32 elements, else
// F16.
func ggufFallback(t gguf.Type, ncols int64) gguf.Type {
	if ncols%t.BlockElems() == 0 {
		return t
	}
	switch t {
	case gguf.TypeQ4_K:
		t = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		t = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		t = gguf.TypeQ8_0
	}
	if ncols%t.BlockElems() != 0 {
		return gguf.TypeF16
	}
	return t
}

// IsGGUFQuant reports whether q is one of llama.cpp's quantizations
// (whose matrix products run ggml's MMQ/MMVQ kernels, not cuBLAS).
func IsGGUFQuant(q Quant) bool { return isGGUFQuant(q) }
