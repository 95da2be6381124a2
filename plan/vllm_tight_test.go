package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/modelspec"
)

// TestQwen3_32BH100At40960 (issue 23): Qwen3-32B in BF16 on one H100 80GB
// at its default max_model_len 40,960, vLLM's defaults otherwise
// (gpu_memory_utilization 0.9, max_num_seqs 1024, max_num_batched_tokens
// 8192 on a ≥ 70 GiB non-A100 GPU). The issue reported that vLLM 0.11
// served this setup; the planner says vLLM refuses it, and vLLM's own
// accounting agrees, so the test pins the refusal rather than a fit.
//
// vLLM V1 (vllm/v1/worker/gpu_worker.py, determine_available_memory)
// gives the KV cache requested_memory − non_kv_cache_memory, where
// requested_memory = total × utilization and non_kv_cache_memory =
// weights + torch_peak_increase + non_torch_increase (vllm/utils,
// memory_profiling); vllm/v1/core/kv_cache_utils.py,
// check_enough_kv_cache_memory, raises "To serve at least one request with
// the models's max seq len (40960), (10.00 GiB KV cache is needed, ..."
// when that is less than one sequence. One sequence is 40,960 × 256 KiB =
// 10.00 GiB; the weights are 61.02 GiB (vLLM logs "Model loading took
// 61.03 GiB" for Qwen3-32B). So the activation peak and non-torch memory
// together must stay under 72.00 − 61.02 − 10.00 = 0.98 GiB at the
// catalog's nominal 80.00 GiB, and under 0.24 GiB at the 79.19 GiB an
// H100 80GB reports to CUDA. The profiling forward pass alone
// (gpu_model_runner.profile_run → _dummy_run(max_num_tokens=8192)) keeps
// a 5,120-wide residual and the MLP's 2 × 25,600 gate_up and 25,600
// activation alive for 8,192 tokens, 1.25 GiB in 16-bit, before the
// sampler runs. Neither total leaves room; no term of the planner is
// over-counted by enough to change the answer.
func TestQwen3_32BH100At40960(t *testing.T) {
	m, err := modelspec.Preset("qwen3-32b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("H100 80GB")
	if err != nil {
		t.Fatal(err)
	}
	const ctx = 40960
	perSeqGiB := float64(ctx) * float64(m.Layers*2*m.KVHeads*m.HeadDim*2) / GiB
	if math.Abs(perSeqGiB-10.0) > 1e-9 {
		t.Fatalf("one %d-token sequence %.4f GiB, want 10.00", ctx, perSeqGiB)
	}
	for _, ver := range []string{"latest", "0.11.0"} {
		v, err := ParseVLLMVersion(ver)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Plan(Inputs{Model: m, Server: backend.VLLM, GPUName: g.Name, GPUGiB: g.MemoryGiB,
			KVDtypes: []KVDtype{KVAuto}, Context: ctx, VLLM: VLLMSettings{VLLMVersion: v}})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Predictions[0]
		fwd, smp := vllmActivation(&m, res.Inputs.MaxNumBatchedTokens, res.Inputs.MaxNumSeqs, SamplerFlashInfer, 1)
		headroom := p.RequestedGiB - p.WeightsGiB - perSeqGiB
		t.Logf("vLLM %s: requested %.3f, weights %.3f, activation %.3f (forward %.3f, sampler %.3f), non-torch %.2f → KV %.3f GiB, %d tokens, %.2f sequences; one sequence needs %.2f GiB, %.3f short; headroom for activation + non-torch %.3f GiB",
			ver, p.RequestedGiB, p.WeightsGiB, p.ActivationGiB, float64(fwd)/GiB, float64(smp)/GiB, p.NonTorchGiB,
			p.KVGiB, p.PredictedTokens, p.MaxConcurrency, perSeqGiB, perSeqGiB-p.KVGiB, headroom)
		if res.Inputs.MaxNumSeqs != 1024 || res.Inputs.MaxNumBatchedTokens != 8192 {
			t.Errorf("H100 defaults: max_num_seqs %d, max_num_batched_tokens %d; want 1024, 8192", res.Inputs.MaxNumSeqs, res.Inputs.MaxNumBatchedTokens)
		}
		if p.MaxConcurrency >= 1 {
			t.Errorf("%.2f sequences: vLLM's accounting leaves less than one", p.MaxConcurrency)
		}
		warned := false
		for _, w := range res.Warnings {
			warned = warned || strings.Contains(w, "vLLM refuses to start")
		}
		if !warned {
			t.Errorf("no refusal warning: %q", res.Warnings)
		}
		// The forward pass alone outgrows the headroom, at the catalog's
		// 80.00 GiB and at the 79.19 GiB CUDA reports: no smaller sampler
		// or non-torch term could make the sequence fit.
		for _, total := range []float64{g.MemoryGiB, 79.19} {
			room := total*0.9 - p.WeightsGiB - perSeqGiB
			if float64(fwd)/GiB <= room {
				t.Errorf("total %.2f GiB: forward pass %.3f GiB fits the %.3f GiB headroom", total, float64(fwd)/GiB, room)
			}
		}
	}
}
