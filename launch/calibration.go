package launch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/serverlog"
)

// planInputs maps a profile to the planner's inputs for the same server
// configuration: the server family, the KV dtype, and the knobs that size
// the cache (vLLM gpu_memory_utilization, max_model_len, max_num_seqs,
// max_num_batched_tokens; llama.cpp -c and -np; Ollama
// OLLAMA_CONTEXT_LENGTH per slot times OLLAMA_NUM_PARALLEL, and flash
// attention, without which Ollama keeps an f16 cache). The knobs set are
// marked given; unset ones are left to what the server's log states, else
// to the planner's defaults for the family, which are the servers'.
func planInputs(p *Profile, m modelspec.Spec, deviceGiB float64) (plan.Inputs, error) {
	in := plan.Inputs{Model: m, Server: p.Backend, GPUGiB: deviceGiB}
	l := launchers[p.Backend]
	if l.planKnobs == nil {
		return in, fmt.Errorf("no capacity model for backend %s", p.Backend)
	}
	l.planKnobs(p, &in)
	in.LlamaCpp.FlashAttention = p.FlashAttention != nil && *p.FlashAttention
	if p.KVCacheDtype != nil {
		d, err := plan.ParseKVDtype(*p.KVCacheDtype)
		if err != nil {
			return in, fmt.Errorf("kv_cache_dtype: %v", err)
		}
		in.KVDtypes, in.Given.KVDtypes = []plan.KVDtype{d}, true
	}
	return in, nil
}

// vllmPlanKnobs: max_model_len, max_num_seqs, max_num_batched_tokens,
// gpu_memory_utilization and tensor_parallel_size.
func vllmPlanKnobs(p *Profile, in *plan.Inputs) {
	in.Context = deref(p.MaxModelLen)
	in.VLLM.MaxNumSeqs = deref(p.MaxNumSeqs)
	in.VLLM.MaxNumBatchedTokens = deref(p.MaxNumBatchedTokens)
	in.TensorParallel = deref(p.TensorParallelSize)
	if p.GPUMemoryUtilization != nil {
		in.VLLM.Utilization = *p.GPUMemoryUtilization
	}
	in.Given = plan.Given{Context: p.MaxModelLen != nil, Utilization: p.GPUMemoryUtilization != nil}
}

// slotPlanKnobs: llama.cpp's -c and -np, Ollama's OLLAMA_CONTEXT_LENGTH
// and OLLAMA_NUM_PARALLEL.
func slotPlanKnobs(p *Profile, in *plan.Inputs) {
	in.Context, in.LlamaCpp.Parallel = deref(p.ContextLength), deref(p.Parallel)
	in.Given = plan.Given{Context: p.ContextLength != nil, Parallel: p.Parallel != nil}
}

func deref(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}

// planModelArg returns what the planner should load for p: PlanModel when
// set, the GGUF file for llama.cpp, and the model file Ollama's log named
// (modelFile) for Ollama; "" when there is none.
func planModelArg(p *Profile, modelFile string) string {
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
// capacity its server's log reports, as a calibration record (the seed's
// shape: predicted and actual tokens, error_pct), with plan.Calibrate,
// the calibration servebench calibrate makes of the same log. The model
// is the profile's plan_model, else the llama.cpp GGUF or the model file
// Ollama's log names; deviceGiB is the memory of the device the server
// runs on, which the log's total GPU memory replaces where it states one.
// The knobs the profile sets are given; those it leaves to the server are
// taken from the log where it states them. lg is the log read once
// (serverlog.ReadFile) from logPath; the record's source is "log <file
// name>".
func Calibrate(p *Profile, lg *serverlog.Log, logPath string, deviceGiB float64) (*record.Calibration, []string, error) {
	arg := planModelArg(p, lg.Server.ModelFile)
	if arg == "" {
		return nil, nil, fmt.Errorf("set plan_model in profile %s (a preset, config.json or GGUF) for the planner", p.Path)
	}
	// A Hugging Face id resolves as in every command, offline: a log's
	// calibration never reaches the network.
	r, err := modelspec.Resolve(context.Background(), arg, modelspec.Options{Offline: true})
	if err != nil {
		return nil, nil, fmt.Errorf("planner model %s: %v", arg, err)
	}
	m := r.Spec
	c := lg.Capacity
	in, err := planInputs(p, m, deviceGiB)
	if err != nil {
		return nil, nil, err
	}
	cal, err := plan.Calibrate(in, plan.Observed{Source: "log " + filepath.Base(logPath), Log: &c})
	var nc *plan.NoCapacityError
	switch {
	case errors.As(err, &nc):
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("planner: %v", err)
	}
	return &cal.Comparison.Record, cal.Plan.Warnings, nil
}
