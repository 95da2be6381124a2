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
// the rest at 2 bytes (4 for fp32).
func WeightsBytes(m *modelspec.Spec, q Quant) int64 {
	p := m.Params()
	other := 2.0
	if q == "fp32" {
		other = 4
	}
	return int64(float64(p.Linear)*linearBytes[q] + float64(p.Embedding+p.LMHead+p.Other)*other)
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
