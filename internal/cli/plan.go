package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/telemetry"
)

// planFlags are the flags plan and calibrate share.
type planFlags struct {
	model, backend, gpu, quant, kvDtype, sampler, calibration string
	vllmVersion, graphEstimate                                string
	gpuGiB, util, weightsGiB                                  float64
	context, blockSize, maxSeqs, maxBatched, parallel, ubatch int
	flashAttn, enforceEager                                   bool
}

func (f *planFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}, defaultBackend string) {
	fs.StringVar(&f.model, "model", "", "preset name ("+strings.Join(plan.PresetNames(), ", ")+"), a config.json or its folder, or a .gguf file")
	fs.StringVar(&f.backend, "backend", defaultBackend, "capacity model: seed, vllm, llamacpp, ollama")
	fs.StringVar(&f.gpu, "gpu", "", "GPU from the catalog (e.g. \"RTX 5070 Ti\", \"H100 80GB\"), or auto (NVML / nvidia-smi)")
	fs.Float64Var(&f.gpuGiB, "gpu-gib", 0, "GPU memory in GiB (overrides the catalog's)")
	fs.Float64Var(&f.util, "gpu-memory-utilization", 0, "vLLM gpu_memory_utilization (default 0.9)")
	fs.Float64Var(&f.weightsGiB, "weights-gib", 0, "weight memory in GiB (instead of an estimate)")
	fs.StringVar(&f.quant, "quant", "", "weight format for the estimate: bf16, fp16, fp8, int8, awq, gptq, q8_0, q4_0, q4_k_m")
	fs.StringVar(&f.kvDtype, "kv-dtype", "", "KV-cache dtypes, comma-separated (vllm/seed default auto,fp8; llamacpp/ollama f16,q8_0,q4_0)")
	fs.IntVar(&f.context, "context", 0, "tokens per sequence (vLLM max_model_len; Ollama num_ctx; llama.cpp -c, the total over slots)")
	fs.IntVar(&f.blockSize, "block-size", 16, "vLLM KV block size in tokens")
	fs.IntVar(&f.maxSeqs, "max-num-seqs", 0, "vLLM max_num_seqs (default 256)")
	fs.IntVar(&f.maxBatched, "max-num-batched-tokens", 0, "vLLM max_num_batched_tokens (default 2048)")
	fs.StringVar(&f.vllmVersion, "vllm-version", "latest", "vLLM release whose memory accounting to follow (from 0.21.0 it charges its CUDA-graph estimate to the KV cache)")
	fs.BoolVar(&f.enforceEager, "enforce-eager", false, "vLLM --enforce-eager: no CUDA graphs, so nothing is charged for them")
	fs.StringVar(&f.graphEstimate, "graph-estimate", "auto", "vLLM VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: auto (on from 0.21.0), on (=1) or off (=0)")
	fs.StringVar(&f.sampler, "sampler", "", "vLLM sampler in profiling: flashinfer (V1 default) or pytorch (V0, or V1 without FlashInfer)")
	fs.IntVar(&f.parallel, "parallel", 0, "llama.cpp --parallel / OLLAMA_NUM_PARALLEL slots (default 1 / 4)")
	fs.IntVar(&f.ubatch, "ubatch", 0, "llama.cpp n_ubatch (default 512)")
	fs.BoolVar(&f.flashAttn, "flash-attn", false, "llama.cpp -fa / OLLAMA_FLASH_ATTENTION=1 (needed for quantized KV)")
	fs.StringVar(&f.calibration, "calibration", "", "calibration `FILE` whose corrections plan applies (calibrate --fit writes it)")
}

// inputs turns the flags into plan.Inputs; errors are usage errors naming
// the flag.
// modelInfo, when not nil, is GGUF metadata from a live server that
// stands in for --model.
func (f *planFlags) inputs(ctx context.Context, cmd string, modelInfo map[string]any) (plan.Inputs, error) {
	var in plan.Inputs
	var (
		m   plan.ModelSpec
		err error
	)
	switch {
	case modelInfo != nil:
		if m, err = plan.SpecFromModelInfo(f.model, modelInfo); err != nil {
			return in, fmt.Errorf("%s: model_info of %s: %v", cmd, f.model, err)
		}
	case f.model == "":
		return in, usagef("%s: --model is required", cmd)
	default:
		if m, err = plan.LoadModel(f.model); err != nil {
			return in, usagef("%s: --model: %v", cmd, err)
		}
	}
	in.Model = m
	if in.Backend, err = plan.ParseBackend(f.backend); err != nil {
		return in, usagef("%s: %v", cmd, err)
	}
	if err := f.resolveGPU(ctx, cmd, &in); err != nil {
		return in, err
	}
	in.Utilization, in.WeightsGiB = f.util, f.weightsGiB
	if f.quant != "" {
		if in.Quant, err = plan.ParseQuant(f.quant); err != nil {
			return in, usagef("%s: %v", cmd, err)
		}
	}
	if f.kvDtype != "" {
		if in.KVDtypes, err = plan.ParseKVDtypes(f.kvDtype); err != nil {
			return in, usagef("%s: --kv-dtype: %v", cmd, err)
		}
	}
	switch f.sampler {
	case "", string(plan.SamplerFlashInfer), string(plan.SamplerPyTorch):
		in.Sampler = plan.Sampler(f.sampler)
	default:
		return in, usagef("%s: --sampler %q: want flashinfer or pytorch", cmd, f.sampler)
	}
	if in.VLLMVersion, err = plan.ParseVLLMVersion(f.vllmVersion); err != nil {
		return in, usagef("%s: %v", cmd, err)
	}
	if in.GraphEstimate, err = plan.ParseGraphEstimate(f.graphEstimate); err != nil {
		return in, usagef("%s: %v", cmd, err)
	}
	in.EnforceEager = f.enforceEager
	in.Context, in.BlockSize, in.MaxNumSeqs, in.MaxNumBatchedTokens = f.context, f.blockSize, f.maxSeqs, f.maxBatched
	in.Parallel, in.UBatch, in.FlashAttention = f.parallel, f.ubatch, f.flashAttn
	if f.calibration != "" {
		if in.Corrections, err = plan.LoadCalibration(f.calibration); err != nil {
			return in, usagef("%s: --calibration: %v", cmd, err)
		}
	}
	in.Defaults()
	if err := in.Validate(); err != nil {
		return in, usagef("%s: %v", cmd, err)
	}
	return in, nil
}

// resolveGPU sets the GPU name and memory from --gpu and --gpu-gib.
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
	case f.gpu != "":
		g, err := plan.LookupGPU(f.gpu)
		if err != nil {
			return usagef("%s: %v", cmd, err)
		}
		in.GPUName, in.GPUGiB = g.Name, g.MemoryGiB
	case f.gpuGiB == 0:
		return usagef("%s: give --gpu NAME, --gpu auto or --gpu-gib N", cmd)
	}
	if f.gpuGiB != 0 {
		if !(f.gpuGiB > 0) {
			return usagef("%s: --gpu-gib %v must be > 0", cmd, f.gpuGiB)
		}
		in.GPUGiB = f.gpuGiB
	}
	return nil
}

func runPlan(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("plan", "plan --model M [--backend seed|vllm|llamacpp|ollama] [--gpu NAME|auto | --gpu-gib N] [--quant F | --weights-gib N] [--kv-dtype auto,fp8] [--context N] [--json]", stdout)
	var f planFlags
	f.register(fs, "vllm")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("plan: unexpected argument %q", fs.Arg(0))
	}
	in, err := f.inputs(ctx, "plan", nil)
	if err != nil {
		return err
	}
	res, err := plan.Plan(in)
	if err != nil {
		return usagef("plan: %v", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(stdout)
}
