package sim

import (
	"math"
	"testing"
)

// TestMMQTileWidth follows mul_mat_q_case's choice of mmq_x: the first
// width of fewest tiles, in steps of 8 below 48 and 16 from there, at
// most 128.
func TestMMQTileWidth(t *testing.T) {
	for _, tc := range []struct{ cols, want int }{
		{1, 8}, {9, 16}, {20, 24}, {40, 40}, {41, 48}, {50, 64}, {64, 64},
		{100, 112}, {128, 128}, {129, 80}, {488, 128}, {512, 128},
	} {
		if got := mmqTileWidth(tc.cols); got != tc.want {
			t.Errorf("mmqTileWidth(%d) = %d, want %d", tc.cols, got, tc.want)
		}
	}
}

// TestExpertPadFLOPs checks the padding against hand counts for
// Qwen3-30B-A3B (128 experts, 8 per token, 48 MoE layers): at 512
// tokens every expert gets one 128-column tile for 32 tokens on average,
// four times the work; a dense model and the batched servers pay none.
func TestExpertPadFLOPs(t *testing.T) {
	moe := llamaConfig(t, "RTX 4090", "qwen3-30b-a3b", "q4_0")
	cm := newCostModel(&moe)
	m := moe.Model
	work := 512.0 * 8 * m.ExpertColumnFLOPs * float64(m.MoELayers)
	touched := cm.touched(512)
	want := (128*128*touched - 512*8) * m.ExpertColumnFLOPs * float64(m.MoELayers)
	got := cm.expertPadFLOPs(512)
	if math.Abs(got/want-1) > 1e-9 {
		t.Errorf("qwen3-30b-a3b, 512 tokens: pad %.4g FLOPs, want %.4g", got, want)
	}
	if r := (got + work) / work; r < 3.9 || r > 4.0 {
		t.Errorf("qwen3-30b-a3b, 512 tokens: padded/active expert FLOPs %.2f, want about 4", r)
	}
	dense := llamaConfig(t, "RTX 4090", "llama-3.1-8b", "q4_0")
	if got := newCostModel(&dense).expertPadFLOPs(512); got != 0 {
		t.Errorf("dense model: pad %g FLOPs, want 0", got)
	}
	v, err := Spec{Backend: "vllm", GPU: "H100 80GB", Model: "qwen3-30b-a3b", Quant: "bf16"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if newCostModel(&v).expertTiles {
		t.Error("vLLM: expert tile padding on, want off (fused_moe is not MMQ)")
	}
}
