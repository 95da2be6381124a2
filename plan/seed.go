package plan

import (
	"math"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/modelspec"
)

// Seed planner constants (examples/multi-backend-sweep.json "planner").
const (
	// seedOverheadGiB is the seed's fixed allowance for everything but
	// weights and KV cache.
	seedOverheadGiB = 1.5
	// seedUtilization is the seed's gpu_memory_utilization.
	seedUtilization = 0.9
	// seedBlockSize is the seed's KV block size in tokens.
	seedBlockSize = 16
)

// seedPredict is the seed planner of examples/multi-backend-sweep.json,
// exactly:
//
//	tokens = ⌊(gpu_gib × utilization − weights_gib − overhead_gib) × GiB /
//	         (block_size × bytes_per_token)⌋ × block_size
//	bytes_per_token = 2 × n_layers × n_kv_heads × head_dim × kv_bytes(dtype)
//
// The seed recorded weights_gib to three decimals (5.188 for Qwen2.5-7B
// AWQ); this computes with that rounded figure too, so that the record's
// weights_gib and tokens agree. (For the seed's two records the unrounded
// 5.18816 GiB gives the same 143,040 and 286,096 tokens.)
func seedPredict(in *Inputs, weightsBytes int64, d KVDtype) (Prediction, []string) {
	var warns []string
	if d != KVAuto && d != KVFP8 {
		warns = append(warns, "seed planner knows kv_bytes for auto and fp8 only; "+string(d)+" uses the dtype's bytes per element")
	}
	if in.Model.IsMLA() || in.Model.SlidingWindow > 0 {
		warns = append(warns, "seed planner ignores MLA and sliding windows: it counts 2 × layers × kv_heads × head_dim per token")
	}
	weightsGiB := round(float64(weightsBytes)/GiB, 3)
	kb := d.BytesPerElement(in.Model.Dtype)
	bpt := 2 * float64(in.Model.Layers*in.Model.KVHeads*in.Model.HeadDim) * kb
	free := in.GPUGiB*in.VLLM.Utilization - weightsGiB - seedOverheadGiB
	p := Prediction{
		KVCacheDtype: string(d), BytesPerElement: kb, BlockSize: in.VLLM.BlockSize,
		WeightsGiB: weightsGiB, BytesPerToken: bpt, Context: in.Context,
		RequestedGiB: round(in.GPUGiB*in.VLLM.Utilization, 4), OverheadGiB: seedOverheadGiB, Fits: true,
	}
	if free <= 0 {
		p.Fits, p.ShortfallGiB = false, round(-free, 2)
		return p, warns
	}
	p.Blocks = int(math.Floor(free * GiB / (float64(in.VLLM.BlockSize) * bpt)))
	p.PredictedTokens = p.Blocks * in.VLLM.BlockSize
	p.KVGiB = round(float64(p.PredictedTokens)*bpt/GiB, 3)
	p.MaxConcurrency = round(concurrency(p.PredictedTokens, in.Context), 2)
	return p, warns
}

// seedPlanner returns the seed planner block (document.Planner) with the
// seed's constants and the given models' table rows.
func seedPlanner(models ...modelspec.Spec) *document.Planner {
	pl := &document.Planner{
		GiB:                  GiB,
		KVBytes:              map[string]float64{"auto": 2.0, "fp8": 1.0},
		GPUMemoryUtilization: seedUtilization,
		OverheadGiB:          seedOverheadGiB,
		BlockSize:            seedBlockSize,
		Models:               map[string]document.PlannerModel{},
	}
	for _, m := range models {
		pl.Models[m.Name] = plannerModel(&m)
	}
	return pl
}

// plannerModel is m as a row of the seed planner's model table.
func plannerModel(m *modelspec.Spec) document.PlannerModel {
	pb := m.ParamsB
	if pb == 0 {
		pb = round(float64(m.Params().Total())/1e9, 2)
	}
	return document.PlannerModel{NLayers: m.Layers, NKVHeads: m.KVHeads, HeadDim: m.HeadDim, ParamsB: pb}
}
