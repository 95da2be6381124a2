package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/servebench/servebench/workload"
	"io"
	"strconv"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/report/plantext"
	"github.com/servebench/servebench/telemetry"
)

// planFlags are the flags plan and calibrate share.
type planFlags struct {
	model, backend, capacityModel, gpu, quant, kvDtype, sampler, calibration string
	vllmVersion, graphEstimate                                               string
	gpuGiB, util, weightsGiB                                                 float64
	// gpuBandwidth and gpuTFLOPS are plan's --gpu-bandwidth and
	// --gpu-tflops: a custom board's figures for plan --users.
	gpuBandwidth, gpuTFLOPS                                   float64
	context, blockSize, maxSeqs, maxBatched, parallel, ubatch int
	flashAttn, enforceEager                                   bool
	// offline refuses fetching a --model that is a Hugging Face id no
	// preset matches (as HF_HUB_OFFLINE=1 does).
	offline bool
	// breadth are the flags of several GPUs, offload, LoRA, images and
	// SGLang.
	breadth breadthFlags
	// calibrationMayBeNew lets --calibration name a file that does not
	// exist yet (calibrate --fit creates it); for plan it must exist.
	calibrationMayBeNew bool
}

func (f *planFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}, defaultBackend string) {
	fs.StringVar(&f.model, "model", "", modelFlagUsage)
	fs.BoolVar(&f.offline, "offline", false, offlineFlagUsage)
	fs.StringVar(&f.backend, "backend", defaultBackend, "server family: "+backend.Or(plan.Servers)+" (seed is the deprecated spelling of --backend vllm --capacity-model seed)")
	fs.StringVar(&f.capacityModel, "capacity-model", string(plan.ServerAccounting), "formula for the KV capacity: server (the --backend's own memory accounting) or seed (the seed planner's formula, for vllm)")
	fs.StringVar(&f.gpu, "gpu", "", "GPU from the catalog (e.g. \"RTX 5070 Ti\", \"H100 80GB\"), a comma-separated list of different ones, or auto (NVML / nvidia-smi)")
	fs.Float64Var(&f.gpuGiB, "gpu-gib", 0, limited("GPU memory in GiB (overrides the catalog's)", "gpu-gib"))
	fs.Float64Var(&f.util, "gpu-memory-utilization", 0, limited("vLLM gpu_memory_utilization (default 0.9)", "gpu-memory-utilization"))
	fs.Float64Var(&f.weightsGiB, "weights-gib", 0, limited("weight memory in GiB (instead of an estimate)", "weights-gib"))
	fs.StringVar(&f.quant, "quant", "", "weight format for the estimate: bf16, fp16, fp8, int8, awq, gptq, q8_0, q4_0, q4_k_m")
	fs.StringVar(&f.kvDtype, "kv-dtype", "", "KV-cache dtypes, comma-separated (vllm/seed default auto,fp8; llamacpp/ollama f16,q8_0,q4_0)")
	fs.IntVar(&f.context, "context", 0, limited("tokens per sequence (vLLM max_model_len; Ollama num_ctx; llama.cpp -c, the total over slots)", "context"))
	fs.IntVar(&f.blockSize, "block-size", 16, limited("vLLM KV block size in tokens", "block-size"))
	fs.IntVar(&f.maxSeqs, "max-num-seqs", 0, limited("vLLM max_num_seqs (default 256)", "max-num-seqs"))
	fs.IntVar(&f.maxBatched, "max-num-batched-tokens", 0, limited("vLLM max_num_batched_tokens (default 2048)", "max-num-batched-tokens"))
	fs.StringVar(&f.vllmVersion, "vllm-version", "latest", "vLLM release whose memory accounting to follow (from 0.21.0 it charges its CUDA-graph estimate to the KV cache); MAJOR.MINOR[.PATCH], each part 0 to "+strconv.Itoa(plan.MaxVersionPart))
	fs.BoolVar(&f.enforceEager, "enforce-eager", false, "vLLM --enforce-eager: no CUDA graphs, so nothing is charged for them")
	fs.StringVar(&f.graphEstimate, "graph-estimate", "auto", "vLLM VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: auto (on from 0.21.0), on (=1) or off (=0)")
	fs.StringVar(&f.sampler, "sampler", "", "vLLM sampler in profiling: flashinfer (V1 default) or pytorch (V0; V1 without FlashInfer; V1 from v0.11.1, where vLLM PR #26859 made FlashInfer's sampler opt-in, until a Triton sampler replaced PyTorch's)")
	fs.IntVar(&f.parallel, "parallel", 0, limited("llama.cpp --parallel / OLLAMA_NUM_PARALLEL slots (default 1 / 4)", "parallel"))
	fs.IntVar(&f.ubatch, "ubatch", 0, limited("llama.cpp n_ubatch (default 512)", "ubatch"))
	fs.BoolVar(&f.flashAttn, "flash-attn", false, "llama.cpp -fa / OLLAMA_FLASH_ATTENTION=1 (needed for quantized KV)")
	fs.StringVar(&f.calibration, "calibration", "", "calibration `FILE` whose corrections plan applies (calibrate --fit writes it)")
	f.breadth.register(fs)
}

// numericFlagLimits are the written limits of the numeric flags of plan
// and calibrate, plan's limits of the inputs they set. --help lists them
// (limited) and inputs checks them before anything else (checkLimits).
var numericFlagLimits = map[string]plan.Limit{
	"gpu-gib":                plan.LimitGPUGiB,
	"gpu-memory-utilization": plan.LimitUtilization,
	"weights-gib":            plan.LimitWeightsGiB,
	"context":                plan.LimitContext,
	"block-size":             plan.LimitBlockSize,
	"max-num-seqs":           plan.LimitMaxNumSeqs,
	"max-num-batched-tokens": plan.LimitMaxNumBatchedTokens,
	"parallel":               plan.LimitParallel,
	"ubatch":                 plan.LimitUBatch,
}

// limited is a numeric flag's help text with its limit.
func limited(usage, flagName string) string {
	l := numericFlagLimits[flagName]
	switch flagName {
	case "gpu-gib":
		return usage + "; " + strings.TrimSuffix(l.Range(), ", or 0 for the default") + ", or 0 for --gpu's"
	case "weights-gib":
		return usage + "; " + strings.TrimSuffix(l.Range(), ", or 0 for the default") + ", or 0 for the estimate"
	}
	return usage + "; " + l.Range()
}

// checkLimits checks every numeric flag against its limit: one usage
// error naming the flag, its value and the range. A flag left at 0 means
// its default (for --gpu-gib: --gpu's memory).
func (f *planFlags) checkLimits(cmd string) error {
	for _, c := range []struct {
		name string
		v    float64
	}{
		{"gpu-gib", f.gpuGiB}, {"gpu-memory-utilization", f.util}, {"weights-gib", f.weightsGiB},
		{"context", float64(f.context)}, {"block-size", float64(f.blockSize)}, {"max-num-seqs", float64(f.maxSeqs)},
		{"max-num-batched-tokens", float64(f.maxBatched)}, {"parallel", float64(f.parallel)}, {"ubatch", float64(f.ubatch)},
	} {
		if c.v == 0 {
			continue
		}
		var ie *plan.InputError
		if err := numericFlagLimits[c.name].Check(c.v); errors.As(err, &ie) {
			return usagef("%s: --%s %v %s", cmd, c.name, ie.Value, ie.Want)
		}
	}
	return nil
}

// given says which planner inputs the command line set: what a server
// states does not override them (plan.Calibrate). Each case names the
// flags register defines for the input; TestGivenCoversEveryFlag checks
// that every plan.Given field has one.
func (f *planFlags) given(fs *flag.FlagSet) plan.Given {
	var g plan.Given
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "gpu", "gpu-gib":
			g.GPUMemory = true
		case "gpu-memory-utilization":
			g.Utilization = true
		case "context":
			g.Context = true
		case "parallel":
			g.Parallel = true
		case "kv-dtype":
			g.KVDtypes = true
		case "block-size":
			g.BlockSize = true
		case "vllm-version":
			g.VLLMVersion = true
		case "graph-estimate":
			g.GraphEstimate = true
		case "enforce-eager":
			g.EnforceEager = true
		}
	})
	return g
}

// inputs turns the flags into plan.Inputs, their zero values left for
// plan to default; errors are usage errors naming the flag. modelInfo,
// when not nil, is GGUF metadata from a live server that stands in for
// --model.
func (f *planFlags) inputs(ctx context.Context, cmd string, modelInfo map[string]any) (plan.Inputs, error) {
	var in plan.Inputs
	if err := f.checkLimits(cmd); err != nil {
		return in, err
	}
	if err := f.breadth.check(cmd); err != nil {
		return in, err
	}
	var (
		m   modelspec.Spec
		err error
	)
	switch {
	case modelInfo != nil:
		if m, err = modelspec.FromModelInfo(f.model, modelInfo); err != nil {
			return in, fmt.Errorf("%s: model_info of %s: %v", cmd, f.model, err)
		}
	case f.model == "":
		return in, usagef("%s: --model is required", cmd)
	default:
		r, err := modelspec.Resolve(ctx, f.model, modelspec.Options{Offline: f.offline})
		if err != nil {
			return in, usagef("%s: --model: %v", cmd, err)
		}
		m = r.Spec
		in.Quant, in.QuantFrom = impliedQuant(r)
	}
	in.Model = m
	if in.Server, in.CapacityModel, err = f.server(cmd); err != nil {
		return in, err
	}
	if err := f.resolveGPU(ctx, cmd, &in); err != nil {
		return in, err
	}
	if err := f.breadth.apply(cmd, f.gpu, f.gpuGiB, &in); err != nil {
		return in, err
	}
	in.VLLM.Utilization, in.WeightsGiB = f.util, f.weightsGiB
	if f.quant != "" {
		in.QuantFrom = ""
		if in.Quant, err = plan.ParseQuant(f.quant); err != nil {
			return in, usagef("%s: --quant: %v", cmd, err)
		}
	}
	if f.kvDtype != "" {
		if in.KVDtypes, err = plan.ParseKVDtypes(f.kvDtype); err != nil {
			return in, usagef("%s: --kv-dtype: %v", cmd, err)
		}
	}
	switch f.sampler {
	case "", string(plan.SamplerFlashInfer), string(plan.SamplerPyTorch):
		in.VLLM.Sampler = plan.Sampler(f.sampler)
	default:
		return in, usagef("%s: --sampler %q: want flashinfer or pytorch", cmd, f.sampler)
	}
	if in.VLLM.VLLMVersion, err = plan.ParseVLLMVersion(f.vllmVersion); err != nil {
		return in, usagef("%s: --vllm-version: %v", cmd, err)
	}
	if in.VLLM.GraphEstimate, err = plan.ParseGraphEstimate(f.graphEstimate); err != nil {
		return in, usagef("%s: --graph-estimate: %v", cmd, err)
	}
	in.VLLM.EnforceEager = f.enforceEager
	in.Context, in.VLLM.BlockSize, in.VLLM.MaxNumSeqs, in.VLLM.MaxNumBatchedTokens = f.context, f.blockSize, f.maxSeqs, f.maxBatched
	in.LlamaCpp.Parallel, in.LlamaCpp.UBatch, in.LlamaCpp.FlashAttention = f.parallel, f.ubatch, f.flashAttn
	if f.calibration != "" {
		load := plan.LoadCalibration
		if f.calibrationMayBeNew {
			load = plan.LoadOrNewCalibration
		}
		if in.Corrections, err = load(f.calibration); err != nil {
			return in, usagef("%s: --calibration: %v", cmd, err)
		}
	}
	return in, nil
}

// modelFlagUsage and offlineFlagUsage are the help of --model and
// --offline, the same in every command that takes a model.
var (
	modelFlagUsage   = "model: a preset (" + strings.Join(modelspec.PresetNames(), ", ") + "), a Hugging Face id (one whose name matches a preset, e.g. Qwen/Qwen2.5-14B-Instruct-AWQ, resolves offline; any other is fetched from $HF_ENDPOINT), a config.json or its folder, or a .gguf file"
	offlineFlagUsage = "never fetch a --model from the hub (as HF_HUB_OFFLINE=1): a Hugging Face id must match a preset"
)

// impliedQuant is the weight format a resolved model states, and where
// it states it, for the estimate when --quant is not given: the format
// word of a name that matched a preset, or a fetched config.json's
// quant_method when the hub gave no exact tensor sizes. A format the
// planner does not size is left out ("", "").
func impliedQuant(r modelspec.Resolved) (plan.Quant, string) {
	if r.Format == "" || r.Spec.WeightsBytes > 0 {
		return "", ""
	}
	q, err := plan.ParseQuant(r.Format)
	if err != nil {
		return "", ""
	}
	if r.From == modelspec.FromHub {
		return q, "config.json's quantization_config"
	}
	return q, "the model name"
}

// deprecatedSeedBackend is --backend seed, which named the seed formula
// when --backend named capacity models; it stands for --backend vllm
// --capacity-model seed.
const deprecatedSeedBackend = "seed"

// server resolves --backend and --capacity-model into the server family
// and the capacity model.
func (f *planFlags) server(cmd string) (backend.Kind, plan.CapacityModel, error) {
	cm, err := plan.ParseCapacityModel(f.capacityModel)
	if err != nil {
		return "", "", usagef("%s: --capacity-model: %v", cmd, err)
	}
	name := strings.ToLower(strings.TrimSpace(f.backend))
	if name == deprecatedSeedBackend {
		return backend.VLLM, plan.SeedFormula, nil
	}
	for _, k := range plan.Servers {
		if string(k) == name {
			return k, cm, nil
		}
	}
	return "", "", usagef("%s: unknown --backend %q (want %s)", cmd, f.backend, backend.Or(plan.Servers))
}

// deprecations are the warnings the flags as given call for: --backend
// seed names a formula where --backend now names a server family.
func (f *planFlags) deprecations() []string {
	if strings.EqualFold(strings.TrimSpace(f.backend), deprecatedSeedBackend) {
		return []string{"--backend seed is deprecated: use --backend vllm --capacity-model seed"}
	}
	return nil
}

// flagOf is the flag that sets planner input f ("" for none).
func flagOf(f plan.Field) string {
	switch f {
	case plan.FieldServer:
		return "--backend"
	case plan.FieldCapacityModel:
		return "--capacity-model"
	case plan.FieldGPUGiB:
		return "--gpu-gib"
	case plan.FieldUtilization:
		return "--gpu-memory-utilization"
	case plan.FieldWeightsGiB:
		return "--weights-gib"
	case plan.FieldContext:
		return "--context"
	case plan.FieldBlockSize:
		return "--block-size"
	case plan.FieldMaxNumSeqs:
		return "--max-num-seqs"
	case plan.FieldMaxNumBatchedTokens:
		return "--max-num-batched-tokens"
	case plan.FieldParallel:
		return "--parallel"
	case plan.FieldUBatch:
		return "--ubatch"
	}
	return breadthFlagOf(f)
}

// planError is a usage error for an error of plan: an input out of range
// is named by its flag.
func planError(cmd string, err error) error {
	var ie *plan.InputError
	if errors.As(err, &ie) && ie.Field == plan.FieldGPUGiB && ie.Value == 0.0 {
		return usagef("%s: give --gpu NAME, --gpu auto or --gpu-gib N", cmd)
	}
	if errors.As(err, &ie) {
		if name := flagOf(ie.Field); name != "" {
			return usagef("%s: %s %v %s", cmd, name, ie.Value, ie.Want)
		}
	}
	return usagef("%s: %v", cmd, err)
}

// resolveGPU sets the GPU name and memory from --gpu and --gpu-gib. With
// neither, the memory stays 0: calibrate may take it from the server's
// log, and plan reports it missing (planError).
func (f *planFlags) resolveGPU(ctx context.Context, cmd string, in *plan.Inputs) error {
	switch {
	case f.gpu == "auto":
		s, warns := telemetry.OpenGPU(ctx, telemetry.GPUConfig{Mode: telemetry.GPUAuto})
		dev, ok := s.Device()
		s.Close()
		if !ok {
			return fmt.Errorf("%s: --gpu auto: no GPU found (%s); give --gpu NAME or --gpu-gib N", cmd, strings.Join(warns, "; "))
		}
		in.GPUName, in.GPUGiB = dev.Name, dev.TotalMiB/1024
	case strings.Contains(f.gpu, ","):
		// a list of GPUs: breadthFlags.apply looks each one up
	case f.gpu != "":
		g, err := hardware.Lookup(f.gpu)
		var unknown *hardware.UnknownGPUError
		if errors.As(err, &unknown) {
			return gpuLookupError(cmd, unknown)
		}
		if err != nil {
			return usagef("%s: --gpu: %v", cmd, err)
		}
		in.GPUName, in.GPUGiB = g.Name, g.MemoryGiB
	}
	if f.gpuGiB != 0 && !strings.Contains(f.gpu, ",") {
		in.GPUGiB = f.gpuGiB // checkLimits checked it
	}
	return nil
}

// gpuLookupError is the one line for a --gpu the catalog does not
// resolve: the candidates, and the flags that describe a custom board.
func gpuLookupError(cmd string, e *hardware.UnknownGPUError) error {
	what := "unknown --gpu %q; closest: %s"
	if e.Ambiguous {
		what = "--gpu %q matches several boards: %s; name one"
	}
	return usagef("%s: "+what+" (or describe a custom board: %s)", cmd, e.Name, strings.Join(e.Closest, ", "), customBoardFlags)
}

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", "plan --model M [--backend vllm|sglang|llamacpp|ollama] [--capacity-model server|seed] [--gpu NAME[,NAME…]|auto | --gpu-gib N] [--gpus N] [--quant F | --weights-gib N] [--kv-dtype auto,fp8] [--context N] [--users N] [--json]", stdout)
	var f planFlags
	f.register(fs, "vllm")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Float64Var(&f.gpuBandwidth, "gpu-bandwidth", 0, "GPU memory bandwidth in GB/s, for plan --users' simulated throughput (overrides the catalog's; with --gpu-gib and --gpu-tflops, a board the catalog lacks)")
	fs.Float64Var(&f.gpuTFLOPS, "gpu-tflops", 0, "GPU dense FP16 tensor TFLOPS with FP32 accumulate, for plan --users (overrides the catalog's)")
	users := fs.Int("users", 0, limitText("what should I run: rank the configurations (backend × weight format × KV dtype × GPU count, up to --gpus, default 8) that hold this many sequences of --context tokens, first those whose simulated people (--user-profile) are served within "+DefaultCapacitySLO+"; --backend, --quant and --kv-dtype narrow the search", "users"))
	profile := fs.String("user-profile", string(workload.ChatProfile), "what plan --users' simulated people send and how long they think: chat, rag, code or agent (docs/users.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("plan: unexpected argument %q", fs.Arg(0))
	}
	if flagGiven(fs, "users") {
		p, err := workload.LookupProfile(*profile)
		if err != nil {
			return usagef("plan: --user-profile: %v", err)
		}
		return runRecommend(ctx, fs, &f, recommendArgs{users: *users, profile: p, asJSON: *asJSON}, stdout)
	}
	if flagGiven(fs, "user-profile") {
		return usagef("plan: --user-profile applies only with --users")
	}
	in, err := f.inputs(ctx, "plan", nil)
	if err != nil {
		return err
	}
	res, err := plan.Plan(in)
	if err != nil {
		return planError("plan", err)
	}
	deprecated := f.deprecations()
	for _, w := range deprecated {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if *asJSON {
		res.Warnings = append(deprecated, res.Warnings...)
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return plantext.WriteText(stdout, res)
}
