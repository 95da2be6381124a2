package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/servebench/servebench/workload"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/report/plantext"
)

// breadthFlags are plan's and calibrate's flags for several GPUs, CPU
// offload, LoRA, vision-language models and SGLang. Numeric
// ones have written limits (breadthLimits), listed in --help and checked
// before anything else, one error line naming the flag.
type breadthFlags struct {
	gpus, tp, pp, nGPULayers                       int
	ramGiB, memFractionStatic                      float64
	tensorSplit, loraTargets                       string
	enableLoRA, disableHybridKV                    bool
	maxLoRAs, maxLoRARank, images                  int
	maxTotalTokens, chunkedPrefill, cudaGraphMaxBS int
}

// breadthLimit is a numeric flag's written range; unset is the value the
// flag has when not given, which means "the default".
type breadthLimit struct {
	min, max, unset float64
}

// breadthLimits are the limits of the numeric breadth flags.
var breadthLimits = map[string]breadthLimit{
	"gpus":                   {1, plan.MaxGPUs, 0},
	"tensor-parallel-size":   {1, plan.MaxGPUs, 0},
	"pipeline-parallel-size": {1, plan.MaxGPUs, 0},
	"n-gpu-layers":           {0, plan.MaxGPULayers, -1},
	"ram-gib":                {0.001, plan.MaxRAMGiB, 0},
	"max-loras":              {1, 1024, 0},
	"max-lora-rank":          {1, 512, 0},
	"limit-images":           {0, plan.MaxImages, -1},
	"mem-fraction-static":    {0.001, 1, 0},
	"max-total-tokens":       {1, plan.MaxTotalTokens, 0},
	"chunked-prefill-size":   {-1, plan.MaxChunkedTokens, 0},
	"cuda-graph-max-bs":      {1, plan.MaxCUDAGraphBS, 0},
	"users":                  {1, 1 << 20, 0},
}

// limitText is a numeric flag's help with its range.
func limitText(usage, name string) string {
	l := breadthLimits[name]
	return fmt.Sprintf("%s; %s to %s", usage, strconv.FormatFloat(l.min, 'f', -1, 64), strconv.FormatFloat(l.max, 'f', -1, 64))
}

func (f *breadthFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.IntVar(&f.gpus, "gpus", 0, limitText("number of --gpu (a list in --gpu names each GPU); vLLM/SGLang default to tensor parallel over them, llama.cpp/Ollama split layers", "gpus"))
	fs.IntVar(&f.tp, "tensor-parallel-size", 0, limitText("vLLM/SGLang --tensor-parallel-size (default: the GPU count)", "tensor-parallel-size"))
	fs.IntVar(&f.pp, "pipeline-parallel-size", 0, limitText("vLLM/SGLang --pipeline-parallel-size (default 1)", "pipeline-parallel-size"))
	fs.IntVar(&f.nGPULayers, "n-gpu-layers", -1, limitText("llama.cpp --n-gpu-layers / Ollama num_gpu, the output layer counting as the last (default -1: llama.cpp all, Ollama its own estimate)", "n-gpu-layers"))
	fs.StringVar(&f.tensorSplit, "tensor-split", "", "llama.cpp --tensor-split: comma-separated share per GPU, each 0 to 1000000 (default: by GPU memory)")
	fs.Float64Var(&f.ramGiB, "ram-gib", 0, limitText("system memory in GiB for the layers llama.cpp/Ollama keep on the CPU (default: not checked)", "ram-gib"))
	fs.BoolVar(&f.enableLoRA, "enable-lora", false, "vLLM --enable-lora: count the stacked LoRA adapter weights")
	fs.IntVar(&f.maxLoRAs, "max-loras", 0, limitText("vLLM --max-loras (default 1)", "max-loras"))
	fs.IntVar(&f.maxLoRARank, "max-lora-rank", 0, limitText("vLLM --max-lora-rank (default 16)", "max-lora-rank"))
	fs.StringVar(&f.loraTargets, "lora-target-modules", "", "LoRA-wrapped projections, comma-separated ("+strings.Join(plan.LoRAModules, ", ")+"; default all)")
	fs.IntVar(&f.images, "limit-images", -1, limitText("vLLM --limit-mm-per-prompt image=N for a vision-language model; 0 = text only (default: vLLM's)", "limit-images"))
	fs.BoolVar(&f.disableHybridKV, "disable-hybrid-kv-cache-manager", false, "vLLM --disable-hybrid-kv-cache-manager: sliding-window and chunked layers keep full-length KV")
	fs.Float64Var(&f.memFractionStatic, "mem-fraction-static", 0, limitText("SGLang --mem-fraction-static (default: SGLang's from GPU memory and TP)", "mem-fraction-static"))
	fs.IntVar(&f.maxTotalTokens, "max-total-tokens", 0, limitText("SGLang --max-total-tokens cap (default none)", "max-total-tokens"))
	fs.IntVar(&f.chunkedPrefill, "chunked-prefill-size", 0, limitText("SGLang --chunked-prefill-size, -1 = off (default: SGLang's from GPU memory)", "chunked-prefill-size"))
	fs.IntVar(&f.cudaGraphMaxBS, "cuda-graph-max-bs", 0, limitText("SGLang --cuda-graph-max-bs (default: SGLang's from GPU memory and TP)", "cuda-graph-max-bs"))
}

// check checks every numeric breadth flag against its limit: NaN and
// infinities too (one error line naming the flag, exit 2).
func (f *breadthFlags) check(cmd string) error {
	for _, c := range []struct {
		name string
		v    float64
	}{
		{"gpus", float64(f.gpus)}, {"tensor-parallel-size", float64(f.tp)}, {"pipeline-parallel-size", float64(f.pp)},
		{"n-gpu-layers", float64(f.nGPULayers)}, {"ram-gib", f.ramGiB}, {"max-loras", float64(f.maxLoRAs)},
		{"max-lora-rank", float64(f.maxLoRARank)}, {"limit-images", float64(f.images)}, {"mem-fraction-static", f.memFractionStatic},
		{"max-total-tokens", float64(f.maxTotalTokens)}, {"chunked-prefill-size", float64(f.chunkedPrefill)},
		{"cuda-graph-max-bs", float64(f.cudaGraphMaxBS)},
	} {
		if err := checkLimit(cmd, c.name, c.v); err != nil {
			return err
		}
	}
	if (f.maxLoRAs != 0 || f.maxLoRARank != 0 || f.loraTargets != "") && !f.enableLoRA {
		return usagef("%s: --max-loras, --max-lora-rank and --lora-target-modules need --enable-lora", cmd)
	}
	return nil
}

// checkLimit checks one numeric flag's value against its limit.
func checkLimit(cmd, name string, v float64) error {
	l := breadthLimits[name]
	if v == l.unset {
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < l.min || v > l.max {
		shown := strconv.FormatFloat(v, 'g', -1, 64)
		if v == math.Trunc(v) && math.Abs(v) < 1e21 {
			shown = strconv.FormatFloat(v, 'f', -1, 64)
		}
		if math.IsInf(v, 1) {
			shown = "+Inf"
		}
		return usagef("%s: --%s %s is out of range: want %s to %s", cmd, name, shown,
			strconv.FormatFloat(l.min, 'f', -1, 64), strconv.FormatFloat(l.max, 'f', -1, 64))
	}
	return nil
}

// apply sets the breadth inputs of in from the flags; gpuFlag is --gpu
// (a catalog name, a comma-separated list of them, or ""), gpuGiB
// --gpu-gib.
func (f *breadthFlags) apply(cmd, gpuFlag string, gpuGiB float64, in *plan.Inputs) error {
	if err := f.applyGPUs(cmd, gpuFlag, gpuGiB, in); err != nil {
		return err
	}
	in.TensorParallel, in.PipelineParallel = f.tp, f.pp
	if f.nGPULayers >= 0 {
		n := f.nGPULayers
		in.LlamaCpp.NGPULayers = &n
	}
	if f.tensorSplit != "" {
		for _, s := range strings.Split(f.tensorSplit, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e6 {
				return usagef("%s: --tensor-split %q: want comma-separated numbers, each 0 to 1000000", cmd, f.tensorSplit)
			}
			in.LlamaCpp.TensorSplit = append(in.LlamaCpp.TensorSplit, v)
		}
	}
	in.LlamaCpp.RAMGiB = f.ramGiB
	if f.enableLoRA {
		l, err := f.lora(cmd)
		if err != nil {
			return err
		}
		in.VLLM.LoRA = l
	}
	if f.images >= 0 {
		n := f.images
		in.VLLM.ImagesPerPrompt = &n
	}
	in.VLLM.DisableHybridKV = f.disableHybridKV
	in.SGLang = plan.SGLangSettings{MemFractionStatic: f.memFractionStatic, MaxTotalTokens: f.maxTotalTokens,
		ChunkedPrefillSize: f.chunkedPrefill, CUDAGraphMaxBS: f.cudaGraphMaxBS}
	return nil
}

// applyGPUs sets the GPUs of in: a list of catalog names in --gpu (each
// of --gpu-gib's memory when given), or --gpus N of the one --gpu.
func (f *breadthFlags) applyGPUs(cmd, gpuFlag string, gpuGiB float64, in *plan.Inputs) error {
	if !strings.Contains(gpuFlag, ",") {
		for i := 0; f.gpus > 1 && i < f.gpus; i++ {
			in.GPUs = append(in.GPUs, plan.Device{Name: in.GPUName, MemoryGiB: in.GPUGiB})
		}
		return nil
	}
	if f.gpus != 0 {
		return usagef("%s: give --gpus N with one --gpu name, or a list in --gpu, not both", cmd)
	}
	for _, name := range strings.Split(gpuFlag, ",") {
		g, err := hardware.Lookup(strings.TrimSpace(name))
		var unknown *hardware.UnknownGPUError
		if errors.As(err, &unknown) {
			return gpuLookupError(cmd, unknown)
		}
		if err != nil {
			return usagef("%s: --gpu: %v", cmd, err)
		}
		mem := g.MemoryGiB
		if gpuGiB > 0 {
			mem = gpuGiB
		}
		in.GPUs = append(in.GPUs, plan.Device{Name: g.Name, MemoryGiB: mem})
	}
	in.GPUName, in.GPUGiB = in.GPUs[0].Name, in.GPUs[0].MemoryGiB
	return nil
}

// lora is vLLM's LoRA settings from the flags: --max-loras and
// --max-lora-rank (vLLM's defaults when 0) and the target modules.
func (f *breadthFlags) lora(cmd string) (*plan.LoRA, error) {
	l := &plan.LoRA{MaxLoRAs: f.maxLoRAs, MaxRank: f.maxLoRARank}
	if l.MaxLoRAs == 0 {
		l.MaxLoRAs = plan.LoRADefaultMaxLoRAs
	}
	if l.MaxRank == 0 {
		l.MaxRank = plan.LoRADefaultMaxRank
	}
	if f.loraTargets != "" {
		t, err := plan.ParseLoRATargets(f.loraTargets)
		if err != nil {
			return nil, usagef("%s: --lora-target-modules: %v", cmd, err)
		}
		l.TargetModules = t
	}
	return l, nil
}

// breadthFlagOf is the flag that sets a breadth input ("" for none).
func breadthFlagOf(f plan.Field) string {
	return map[plan.Field]string{
		plan.FieldGPUs: "--gpu/--gpus", plan.FieldTensorParallel: "--tensor-parallel-size", plan.FieldPipelineParallel: "--pipeline-parallel-size",
		plan.FieldNGPULayers: "--n-gpu-layers", plan.FieldTensorSplit: "--tensor-split", plan.FieldRAMGiB: "--ram-gib",
		plan.FieldMaxLoRAs: "--max-loras", plan.FieldMaxLoRARank: "--max-lora-rank", plan.FieldLoRATargets: "--lora-target-modules",
		plan.FieldImagesPerPrompt: "--limit-images", plan.FieldMemFractionStatic: "--mem-fraction-static",
		plan.FieldMaxTotalTokens: "--max-total-tokens", plan.FieldChunkedPrefill: "--chunked-prefill-size",
		plan.FieldCUDAGraphMaxBS: "--cuda-graph-max-bs", plan.FieldUsers: "--users",
	}[f]
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// runRecommend is plan --users: "what should I run?" over the
// configurations --backend, --quant and --kv-dtype leave open.
// recommendFormat narrows req to the weight format --quant names, refusing
// one that the --backend asked for does not load (llama.cpp and Ollama
// load GGUF: awq is their q4_k_m), and to one GPU unless --gpus or a --gpu
// list asks for more.
func recommendFormat(fs *flag.FlagSet, in plan.Inputs, req *plan.Request) error {
	if in.Quant != "" {
		if g := plan.FormatFor(in.Server, in.Quant); flagGiven(fs, "backend") && g != in.Quant {
			return usagef("plan: --quant %s: %s does not load %s weights; its equivalent is --quant %s", in.Quant, in.Server, in.Quant, g)
		}
		req.Quants = []plan.Quant{in.Quant}
	}
	if !flagGiven(fs, "gpus") && len(in.GPUs) == 0 {
		req.MaxGPUs = 1
	}
	return nil
}

// recommendArgs are plan --users' own flags.
type recommendArgs struct {
	users   int
	profile workload.Profile
	asJSON  bool
}

func runRecommend(ctx context.Context, fs *flag.FlagSet, f *planFlags, ra recommendArgs, stdout io.Writer) error {
	users, asJSON := ra.users, ra.asJSON
	if err := checkLimit("plan", "users", float64(users)); err != nil {
		return err
	}
	if users == 0 {
		return usagef("plan: --users %d is out of range: want 1 to %d", users, 1<<20)
	}
	if !flagGiven(fs, "context") {
		return usagef("plan: --users needs --context (the tokens of each user's sequence)")
	}
	in, err := f.inputs(ctx, "plan", nil)
	if err != nil {
		return err
	}
	req := plan.Request{Model: in.Model, GPU: plan.Device{Name: in.GPUName, MemoryGiB: in.GPUGiB}, MaxGPUs: f.breadth.gpus,
		Context: in.Context, Users: users, VLLMVersion: in.VLLM.VLLMVersion,
		// the KV the people hold: the p95 of one conversation's tokens
		SequenceTokens: ra.profile.HeldTokensP95(1)}
	if len(in.GPUs) > 0 {
		for _, g := range in.GPUs {
			if g != in.GPUs[0] {
				return usagef("plan: --users ranks configurations of one kind of GPU; --gpu lists several")
			}
		}
		req.GPU, req.MaxGPUs = in.GPUs[0], len(in.GPUs)
	}
	for _, v := range []struct {
		flag string
		v    float64
	}{{"--gpu-bandwidth", f.gpuBandwidth}, {"--gpu-tflops", f.gpuTFLOPS}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 || v.v > 1e6 {
			return usagef("plan: %s %g: want a number from 0 to 1000000", v.flag, v.v)
		}
	}
	req.GPU.BandwidthGBs, req.GPU.TFLOPS = f.gpuBandwidth, f.gpuTFLOPS
	if flagGiven(fs, "backend") {
		req.Backends = []backend.Kind{in.Server}
	}
	if err := recommendFormat(fs, in, &req); err != nil {
		return err
	}
	if flagGiven(fs, "kv-dtype") {
		req.KVDtypes = in.KVDtypes
	}
	// Throughput, latency and the SLO verdict of each fitting
	// configuration: its people simulated as run --backend sim --users
	// sends them, said so in the output.
	// the first probe of capacity's simulated search, from the users
	// asked for to 16 times them, whose answer is the capacity in users
	// of each that holds them
	us := newUsersSearches(ctx, ra.profile, 1)
	req.Throughput, req.Capacity = us.performance, us.capacity
	rec, err := plan.Recommend(req)
	if err != nil {
		return planError("plan", err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	}
	return plantext.WriteRecommendation(stdout, rec)
}
