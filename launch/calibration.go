package launch

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
)

// PlanInputs maps a profile to the planner's inputs for the same server
// configuration: the capacity model of the family, the KV dtype, and the
// knobs that size the cache (vLLM gpu_memory_utilization, max_model_len,
// max_num_seqs, max_num_batched_tokens; llama.cpp -c and -np; Ollama
// OLLAMA_CONTEXT_LENGTH per slot times OLLAMA_NUM_PARALLEL, and flash
// attention, without which Ollama keeps an f16 cache). Unset knobs are
// left to the planner's defaults for the family, which are the servers'.
func PlanInputs(p *Profile, m modelspec.Spec, deviceGiB float64) (plan.Inputs, error) {
	in := plan.Inputs{Model: m, Server: p.Backend, GPUGiB: deviceGiB}
	switch p.Backend {
	case backend.VLLM:
		in.Context = deref(p.MaxModelLen)
		in.MaxNumSeqs = deref(p.MaxNumSeqs)
		in.MaxNumBatchedTokens = deref(p.MaxNumBatchedTokens)
		if p.GPUMemoryUtilization != nil {
			in.Utilization = *p.GPUMemoryUtilization
		}
	case backend.LlamaCpp, backend.Ollama:
		in.Context, in.Parallel = deref(p.ContextLength), deref(p.Parallel)
	default:
		return in, fmt.Errorf("no capacity model for backend %s", p.Backend)
	}
	in.FlashAttention = p.FlashAttention != nil && *p.FlashAttention
	if p.KVCacheDtype != nil {
		d, err := plan.ParseKVDtype(*p.KVCacheDtype)
		if err != nil {
			return in, fmt.Errorf("kv_cache_dtype: %v", err)
		}
		in.KVDtypes = []plan.KVDtype{d}
	} else if p.Backend == backend.VLLM {
		in.KVDtypes = []plan.KVDtype{plan.KVAuto}
	} else {
		in.KVDtypes = []plan.KVDtype{plan.KVFP16}
	}
	return in, nil
}

func deref(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}

// PlanModelArg returns what the planner should load for p: PlanModel when
// set, the GGUF file for llama.cpp, and the model file Ollama's log named
// (modelFile) for Ollama; "" when there is none.
func PlanModelArg(p *Profile, modelFile string) string {
	switch {
	case p.PlanModel != "":
		return p.PlanModel
	case p.Backend == backend.LlamaCpp:
		return p.Model
	case p.Backend == backend.Ollama:
		return modelFile
	}
	return ""
}

// Calibrate holds the planner's prediction for profile p against the
// capacity c the server's log reported, as a calibration record (the
// seed's shape: predicted and actual tokens, error_pct). Actual tokens are
// the logged token count (vLLM "GPU KV cache size") or cell count
// (llama.cpp "N cells"); where the server logs only the KV size in MiB
// (Ollama v0.6 "KV self size"), they are that size divided by the
// predicted bytes per token, and both sizes are in the record. logName
// names the log in the record's source.
func Calibrate(p *Profile, m modelspec.Spec, deviceGiB float64, c *document.Capacity, logName string) (*document.Calibration, []string, error) {
	in, err := PlanInputs(p, m, deviceGiB)
	if err != nil {
		return nil, nil, err
	}
	res, err := plan.Plan(in)
	if err != nil {
		return nil, nil, fmt.Errorf("planner: %v", err)
	}
	if len(res.Predictions) != 1 {
		return nil, nil, errors.New("planner gave no prediction")
	}
	pr := &res.Predictions[0]
	actual, how := actualTokens(c, pr)
	if actual <= 0 {
		return nil, res.Warnings, errors.New("the log's capacity has no tokens, cells or KV size to compare")
	}
	rec := plan.CalibrationRecord(m.Name, "", &res.Inputs, pr, actual, filepath.Base(logName)+": "+how)
	if c.KVMiB != nil && pr.KVMiB > 0 {
		predicted, got := round2(pr.KVMiB), *c.KVMiB
		rec.PredictedKVMiB, rec.ActualKVMiB = &predicted, &got
	}
	return &rec, res.Warnings, nil
}

func actualTokens(c *document.Capacity, pr *plan.Prediction) (int, string) {
	switch {
	case c.Tokens != nil:
		return *c.Tokens, "logged KV cache tokens"
	case c.Blocks != nil && pr.BlockSize > 0:
		return *c.Blocks * pr.BlockSize, fmt.Sprintf("logged KV cache blocks × %d", pr.BlockSize)
	case c.Cells != nil:
		return *c.Cells, "logged KV cache cells"
	case c.KVMiB != nil && pr.BytesPerToken > 0:
		n := int(math.Round(*c.KVMiB * plan.MiB / pr.BytesPerToken))
		return n, fmt.Sprintf("logged KV size %.2f MiB / %.0f predicted bytes per token", *c.KVMiB, pr.BytesPerToken)
	}
	return 0, ""
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
