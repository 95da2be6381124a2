package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simrun"
)

// run --backend sim (way 1): the sweep runs unchanged on the simulator's
// virtual clock (sim.Virtual) and simrun's simulated client instead of a
// server; the
// flags below say what is simulated. simEngineFlags are defined once and
// shared with sim serve.

// backendSim is --backend's value for a simulated server.
const backendSim = "sim"

// simEngineFlags say which server the engine simulates and with which
// settings, as in a launch profile: the flags sim serve and run --backend
// sim share. --gpu and --model are each command's own (run's also serve
// real runs).
type simEngineFlags struct {
	scheduler, quant, kvDtype                         string
	gpuGiB, util, gpuBandwidth, gpuTFLOPS             float64
	context, maxSeqs, maxBatched, blockSize, kvBlocks int
	parallel, nBatch, ubatch, tensorParallel          int
	gpuLink                                           string
	enforceEager, noPrefixCaching, flashAttn          bool
	// offline keeps --model from the hub: a Hugging Face id must match
	// a preset (as with HF_HUB_OFFLINE=1).
	offline bool
	// names are the flags registered, for run's check that none is given
	// without --backend sim.
	names []string
}

// register defines the flags on fs; schedulerDefault says what
// --scheduler defaults to.
func (f *simEngineFlags) register(fs *flag.FlagSet, schedulerDefault string) {
	str := func(p *string, name, usage string) { fs.StringVar(p, name, "", usage); f.names = append(f.names, name) }
	num := func(p *int, name, usage string) { fs.IntVar(p, name, 0, usage); f.names = append(f.names, name) }
	str(&f.scheduler, "scheduler", "the engine's scheduler: "+backend.Or(sim.Kinds)+" ("+schedulerDefault+")")
	fs.Float64Var(&f.gpuGiB, "gpu-gib", 0, "GPU memory in GiB (overrides the catalog's)")
	fs.Float64Var(&f.gpuBandwidth, "gpu-bandwidth", 0, "GPU memory bandwidth in GB/s (overrides the catalog's; with --gpu-gib and --gpu-tflops and no --gpu, a custom board)")
	fs.Float64Var(&f.gpuTFLOPS, "gpu-tflops", 0, "GPU dense FP16 tensor TFLOPS with FP32 accumulate (overrides the catalog's)")
	str(&f.quant, "quant", "weight format: bf16, fp16, fp8, awq, gptq, q8_0, q4_0, q4_k_m (default: the model name's, else its dtype)")
	str(&f.kvDtype, "kv-dtype", "KV-cache dtype: auto, fp8, f16, q8_0, q4_0 (default auto; f16 for llama.cpp and Ollama)")
	fs.Float64Var(&f.util, "gpu-memory-utilization", 0, "vLLM gpu_memory_utilization / SGLang mem_fraction_static (default 0.9 / 0.88)")
	num(&f.context, "context", "tokens per sequence: vLLM max_model_len, Ollama num_ctx, llama.cpp -c (the total over slots)")
	num(&f.maxSeqs, "max-num-seqs", "vLLM max_num_seqs / SGLang max_running_requests (default 256)")
	num(&f.maxBatched, "max-num-batched-tokens", "vLLM max_num_batched_tokens / SGLang chunked_prefill_size (default 2048)")
	num(&f.blockSize, "block-size", "KV block size in tokens (default vLLM 16, SGLang 1)")
	num(&f.kvBlocks, "kv-blocks", "KV blocks the server has (vLLM num_gpu_blocks), instead of the planner's prediction")
	num(&f.parallel, "parallel", "llama.cpp --parallel / OLLAMA_NUM_PARALLEL slots (default 4 / 1)")
	num(&f.nBatch, "n-batch", "llama.cpp n_batch / Ollama num_batch (default 2048 / 512)")
	num(&f.ubatch, "ubatch", "llama.cpp n_ubatch (default 512)")
	num(&f.tensorParallel, "tensor-parallel-size", fmt.Sprintf("vLLM/SGLang --tensor-parallel-size: the model split over this many GPUs alike (1 to %d; default 1)", sim.MaxTensorParallel))
	str(&f.gpuLink, "gpu-link", "what tensor-parallel GPUs talk over: nvlink, pcie (peer to peer), pcie-host (no peer access, through host memory) (default: NVLink on SXM boards, pcie-host on GeForce, else pcie)")
	fs.BoolVar(&f.enforceEager, "enforce-eager", false, "vLLM --enforce-eager: no CUDA graphs")
	fs.BoolVar(&f.noPrefixCaching, "no-enable-prefix-caching", false, "vLLM/SGLang without prefix caching")
	fs.BoolVar(&f.flashAttn, "flash-attn", false, "llama.cpp/Ollama with flash attention (smaller compute buffers; needed for a quantized KV cache), as plan --users plans them")
	fs.BoolVar(&f.offline, "offline", false, offlineFlagUsage)
	f.names = append(f.names, "gpu-gib", "gpu-bandwidth", "gpu-tflops", "gpu-memory-utilization", "enforce-eager", "no-enable-prefix-caching", "flash-attn", "offline")
}

// spec is the server to simulate: gpu and model as the command took them,
// the family from --scheduler or def. Errors are usage errors naming the
// flag, prefixed with cmd.
func (f *simEngineFlags) spec(cmd, gpu, model string, def backend.Kind) (sim.Spec, error) {
	spec := sim.Spec{GPU: gpu, GPUGiB: f.gpuGiB, GPUBandwidthGBs: f.gpuBandwidth, GPUTFLOPS: f.gpuTFLOPS, Model: model, Quant: f.quant, KVDtype: f.kvDtype,
		GPUMemoryUtilization: f.util, EnforceEager: f.enforceEager, NoPrefixCaching: f.noPrefixCaching, FlashAttention: f.flashAttn, FetchModel: !f.offline}
	if f.scheduler != "" {
		var err error
		if spec.Backend, err = sim.ParseKind(f.scheduler); err != nil {
			return spec, usageOf(cmd, "--scheduler %q: want %s", f.scheduler, backend.Or(sim.Kinds))
		}
	}
	// The upper bounds are the simulator's own (sim.Config's check), here
	// before any product of two of them (blocks × block size) is taken.
	for _, n := range []struct {
		flag   string
		v, max int
	}{{"--context", f.context, 1 << 26}, {"--max-num-seqs", f.maxSeqs, 1 << 20}, {"--max-num-batched-tokens", f.maxBatched, 1 << 24},
		{"--block-size", f.blockSize, 1 << 16}, {"--kv-blocks", f.kvBlocks, 1 << 31}, {"--parallel", f.parallel, 1 << 16},
		{"--n-batch", f.nBatch, 1 << 24}, {"--ubatch", f.ubatch, 1 << 24}, {"--tensor-parallel-size", f.tensorParallel, sim.MaxTensorParallel}} {
		if n.v < 0 || n.v > n.max {
			return spec, usageOf(cmd, "%s %d: want 0 to %d", n.flag, n.v, n.max)
		}
	}
	link, err := sim.ParseLink(f.gpuLink)
	if err != nil {
		return spec, usageOf(cmd, "--gpu-link %q: want %s", f.gpuLink, sim.LinkChoices())
	}
	spec.TensorParallel, spec.Link = f.tensorParallel, link
	if f.gpuGiB < 0 || f.util < 0 || f.util > 1 {
		return spec, usageOf(cmd, "--gpu-gib must be >= 0 and --gpu-memory-utilization in (0, 1]")
	}
	for _, v := range []struct {
		flag string
		v    float64
	}{{"--gpu-gib", f.gpuGiB}, {"--gpu-bandwidth", f.gpuBandwidth}, {"--gpu-tflops", f.gpuTFLOPS}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 || v.v > 1e6 {
			return spec, usageOf(cmd, "%s %g: want a number from 0 to 1000000", v.flag, v.v)
		}
	}
	fam := spec.Backend
	if fam == "" {
		fam = def
	}
	srv := sim.Server{MaxNumSeqs: f.maxSeqs, MaxNumBatchedTokens: f.maxBatched, BlockSize: f.blockSize, KVBlocks: f.kvBlocks,
		Slots: f.parallel, NBatch: f.nBatch, NUBatch: f.ubatch}
	switch {
	case sim.Batched(fam):
		srv.MaxModelLen = f.context
	case fam == backend.Ollama:
		srv.SlotContext = f.context
	case fam == backend.LlamaCpp:
		if f.context > 0 {
			if f.parallel == 0 {
				srv.Slots = 4
			}
			srv.SlotContext = f.context / srv.Slots
		}
	}
	spec.Server = srv
	return spec, nil
}

// simTarget is the server a run --backend sim predicts: the engine's
// configuration and what it was made from.
type simTarget struct {
	Config sim.Config
	Info   record.SimInfo
}

// simRunFlags are run's flags of a simulated server: the shared engine
// flags and the fit to apply.
type simRunFlags struct {
	engine            simEngineFlags
	profile, fitLabel *string
}

func defineSimRunFlags(fs *flag.FlagSet) *simRunFlags {
	f := &simRunFlags{
		profile:  fs.String("sim-profile", "", "with --backend sim: apply the fit in `FILE` (a sim-profile.json from sim fit): its efficiencies, overheads and chosen settings"),
		fitLabel: fs.String("sim-profile-run", "", "with --sim-profile: the `LABEL` of the fitted run to apply (default: the file's only run)"),
	}
	f.engine.register(fs, "with --backend sim; default vllm")
	f.engine.names = append(f.engine.names, "sim-profile", "sim-profile-run")
	return f
}

// simConfig reads the simulated server's flags into cfg.Sim when
// --backend is sim (simConflicts refuses them otherwise, and a real
// server's flags with it). With --backend sim, --gpu names the GPU to
// simulate (not the GPU memory source) and --model the model.
func (f *runFlags) simConfig(cfg *runConfig, set map[string]bool) error {
	if strings.TrimSpace(*f.backend) != backendSim {
		return nil
	}
	gpu, model := strings.TrimSpace(*f.telemetry.gpu), strings.TrimSpace(*f.model)
	if !set["gpu"] {
		gpu = "" // telemetry's default, auto, names no board to simulate
	}
	if model == "" {
		return f.simConfigFromProfile(cfg, set, gpu)
	}
	if gpu == "" && !(set["gpu-gib"] && set["gpu-bandwidth"] && set["gpu-tflops"]) {
		return configf("--backend sim needs --gpu, a GPU from the catalog (e.g. --gpu \"RTX 4090\"), or a custom board: " + customBoardFlags)
	}
	spec, err := f.sim.engine.spec("", gpu, model, backend.VLLM)
	if err != nil {
		return err
	}
	if spec.Backend == "" {
		spec.Backend = backend.VLLM
	}
	c, err := spec.Config()
	if err != nil {
		return simSpecError("", err)
	}
	info := record.SimInfo{Scheduler: string(c.Backend), GPU: gpu, Model: model, Quant: spec.Quant, KVDtype: spec.KVDtype,
		Seed: cfg.Seed, JitterMeanMS: float64(sim.DefaultJitter) / 1e6}
	if *f.sim.profile != "" {
		if info.Profile, err = applySimProfile(&c, *f.sim.profile, *f.sim.fitLabel); err != nil {
			return err
		}
	} else if set["sim-profile-run"] {
		return configf("--sim-profile-run needs --sim-profile")
	}
	return cfg.simulate(c, info, model)
}

// simulate makes the simulated server of engine c, described by info,
// cfg's server, once it validates.
func (cfg *runConfig) simulate(c sim.Config, info record.SimInfo, model string) error {
	var err error
	if info.Engine, err = json.Marshal(c); err != nil {
		return fmt.Errorf("run: --backend sim: %w", err)
	}
	t := &simTarget{Config: c, Info: info}
	if err := t.Validate(); err != nil {
		return err
	}
	cfg.Sim = t
	cfg.Backend, cfg.Model, cfg.URL = c.Backend, model, ""
	return nil
}

// Validate checks that the engine settings make a simulated server.
func (t *simTarget) Validate() error {
	if _, err := sim.New(t.Config); err != nil {
		return simSpecError("", err)
	}
	return nil
}

// simConfigFromProfile is the simulated server of a fit whose model
// resolved to no preset (a batch document names none): its fitted model
// cost, GPU and settings are the whole server, so --sim-profile alone
// describes it. A profile of a preset's fit still needs --model, and
// other engine flags do not apply (the fit fixed the server).
func (f *runFlags) simConfigFromProfile(cfg *runConfig, set map[string]bool, gpu string) error {
	if *f.sim.profile == "" {
		return configf("--backend sim needs --model, a model preset or a name that resolves to one (e.g. --model qwen2.5-7b), or a model-less --sim-profile")
	}
	rp, err := loadSimProfile("", *f.sim.profile, *f.sim.fitLabel, "", "")
	if err != nil {
		return err
	}
	if !rp.FreeModel {
		return configf("--backend sim needs --model: sim profile run %q was fitted with the preset model %s (give --model %s)", rp.Label, rp.Cost.Name, rp.Cost.Name)
	}
	for _, n := range f.sim.engine.names {
		if set[n] && n != "sim-profile" && n != "sim-profile-run" {
			return configf("--%s does not apply with a model-less --sim-profile (the fit fixed the server) : give --model to simulate another", n)
		}
	}
	c := rp.Config()
	if gpu != "" && !strings.EqualFold(gpu, c.GPU.Name) {
		return configf("--gpu %q: sim profile run %q was fitted on %s and has no model to carry to another GPU", gpu, rp.Label, c.GPU.Name)
	}
	model := rp.Model
	if model == "" {
		model = "fitted (" + rp.Label + ")"
	}
	info := record.SimInfo{Scheduler: string(c.Backend), GPU: c.GPU.Name, Model: model,
		Seed: cfg.Seed, JitterMeanMS: float64(sim.DefaultJitter) / 1e6, Profile: *f.sim.profile + "#" + rp.Label}
	return cfg.simulate(c, info, model)
}

// applySimProfile applies the fitted run label (or the file's only run)
// of the sim profile in path to c, and names what it applied.
func applySimProfile(c *sim.Config, path, label string) (string, error) {
	rp, err := loadSimProfile("", path, label, c.Backend, "--scheduler")
	if err != nil {
		return "", err
	}
	rp.Apply(c)
	return path + "#" + rp.Label, nil
}

// customBoardFlags are the flags that describe a GPU the catalog lacks.
const customBoardFlags = "--gpu-gib N --gpu-bandwidth GB/s --gpu-tflops N"

// simSpecError turns an error of package sim into one line naming the
// flag at fault (cmd's, or "" for a shared step's, see usageOf): a usage error (exit 2) for an unknown GPU or model, a
// model that does not fit, or a setting out of range.
func simSpecError(cmd string, err error) error {
	switch {
	case errors.Is(err, sim.ErrUnknownGPU):
		return usageOf(cmd, "--gpu: %v; or describe a custom board: %s", err, customBoardFlags)
	case errors.Is(err, sim.ErrUnknownModel):
		return usageOf(cmd, "--model: %v", err)
	case errors.Is(err, sim.ErrDoesNotFit):
		return usageOf(cmd, "--model/--gpu: %v", err)
	case errors.Is(err, sim.ErrBadInput):
		return usageOf(cmd, "%v", err)
	}
	if cmd == "" {
		// a failure, not a usage error: no command names it later, and
		// run's steps fail as run
		cmd = "run"
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// newSimServer is the simulated server of a run: its client, which is
// also the sweep's clock and its levels' observer (sim.Virtual, made by simrun.New). The
// goroutine that calls it must be the one that then runs the sweep.
func newSimServer(cfg runConfig) (*sim.Virtual, error) {
	s, err := simrun.New(cfg.Sim.Config, simOptions(cfg))
	if err != nil {
		return nil, simSpecError("", err)
	}
	return s, nil
}

// simOptions are the simulated server's options for a run's settings:
// its seed, chat template and request timeout.
func simOptions(cfg runConfig) simrun.Options {
	return simrun.Options{Seed: cfg.Seed, Chat: cfg.API != backend.Completions, Timeout: cfg.Timeout}
}

// describeSimRun marks the run's header as simulated, with the engine's
// inputs and its KV-cache figures where the server would report them.
func describeSimRun(r *record.Run, t *simTarget, m load.Method) {
	r.Simulated = true
	if t.Info.Profile == "" {
		// A no-fit prediction quotes the cross-validated accuracy of its
		// GPU class and load regime (docs/accuracy.md).
		r.Warnings = append(r.Warnings, "accuracy: "+sim.AccuracyClaim(t.Config.GPU.Name, simRegime(m)))
	}
	// The simulator has no power model: energy, power and a per-kWh cost
	// stay null.
	r.Warnings = append(r.Warnings, "energy: not simulated (the simulator has no power model): energy and power figures are null")
	info := t.Info
	r.Sim = &info
	c := t.Config
	r.GPU, r.GPUGiB = &c.GPU.Name, &c.GPU.MemoryGiB
	runtime := fmt.Sprintf("servebench sim (%s scheduler)", c.Backend)
	r.Runtime = &runtime
	if c.Backend == backend.VLLM || c.Backend == backend.SGLang {
		blocks, size := c.Server.KVBlocks, c.Server.BlockSize
		r.KVCache.Blocks, r.KVCache.BlockSize = &blocks, &size
	}
	if info.KVDtype != "" {
		d := info.KVDtype
		r.KVCache.Dtype = &d
	}
}

// simRegime is the accuracy corpus's load regime of a sweep method:
// closed loop for pool and users, all-at-once burst for batch, open-loop
// rate for rate.
func simRegime(m load.Method) string {
	switch m {
	case load.Batch:
		return "burst"
	case load.Rate:
		return "rate"
	}
	return "closed_loop"
}
