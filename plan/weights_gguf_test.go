package plan

import (
	"math"
	"testing"

	"github.com/servebench/servebench/modelspec"
)

// TestGGUFWeightsPublished holds the planner's GGUF weight sizes, from
// llama-quantize's per-tensor types, to published files' sizes within 2%.
func TestGGUFWeightsPublished(t *testing.T) {
	for _, c := range []struct {
		model string
		q     Quant
		bytes float64
		page  string
	}{
		// bartowski's file listing: Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf
		// 4.92 GB (4.58 GiB; runyard.dev/blog/q4-k-m-vs-q5-k-m-vs-q6-k-vs-q8-0-quantization-quality-loss
		// gives 4.57), -Q5_K_M.gguf 5.73 GB, -Q8_0.gguf 8.54 GB.
		{"llama-3.1-8b", "q4_k_m", 4.92e9, "huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"},
		{"llama-3.1-8b", "q5_k_m", 5.73e9, "huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"},
		{"llama-3.1-8b", "q8_0", 8.54e9, "huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"},
	} {
		m, err := modelspec.Preset(c.model)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(WeightsBytes(&m, c.q))
		t.Logf("%s %s: %.3f GiB planned, %.3f GiB published (%s)", c.model, c.q, got/GiB, c.bytes/GiB, c.page)
		if d := got/c.bytes - 1; math.Abs(d) > 0.02 {
			t.Errorf("%s %s: planned %.3f GiB, published %.3f GiB (%+.1f%%)", c.model, c.q, got/GiB, c.bytes/GiB, d*100)
		}
	}
}

// TestGGUFTensorTypes: llama-quantize's Q4_K_M mix for Llama-3.1-8B (32
// layers): use_more_bits picks 16 layers' attn_v and ffn_down for Q6_K;
// the output is Q6_K, token_embd Q4_K; a row not a multiple of 256 falls
// back to Q5_0.
func TestGGUFTensorTypes(t *testing.T) {
	m, err := modelspec.Preset("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	six := 0
	for i := 0; i < 32; i++ {
		if useMoreBits(i, 32) {
			six++
		}
	}
	if six != 16 {
		t.Errorf("use_more_bits picks %d of 32 layers, want 16", six)
	}
	for _, c := range []struct {
		r     tensorRole
		i     int
		ncols int64
		want  string
	}{
		{roleOutput, 0, 4096, "Q6_K"}, {roleEmbedding, 0, 4096, "Q4_K"}, {roleAttnV, 0, 4096, "Q6_K"},
		{roleAttnV, 4, 4096, "Q4_K"}, {roleFFNDown, 6, 14336, "Q6_K"}, {roleFFNDown, 7, 14336, "Q4_K"},
		{roleAttnQ, 3, 4096, "Q4_K"}, {roleAttnQ, 3, 896, "Q5_0"}, {roleKeep, 0, 4096, "F32"},
	} {
		got := ggufTensorType(&m, "q4_k_m", c.r, c.i, 32, c.ncols)
		names := map[string]float64{"Q6_K": 210.0 / 256, "Q4_K": 144.0 / 256, "Q5_0": 22.0 / 32, "F32": 4}
		if got.BytesPerElement() != names[c.want] {
			t.Errorf("role %d layer %d ncols %d: type %d, want %s", c.r, c.i, c.ncols, got, c.want)
		}
	}
	if got := ggufTensorType(&m, "q8_0", roleOutput, 0, 32, 4096); got.BytesPerElement() != 34.0/32 {
		t.Errorf("q8_0 output: type %d, want Q8_0", got)
	}
}
