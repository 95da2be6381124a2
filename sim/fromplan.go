package sim

// This file is the only one that imports the planner packages (hardware:
// the GPU catalog; modelspec: presets; plan: weight formats, KV dtypes and
// capacity models): the rest of sim speaks its own types.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
)

// Spec is a server to simulate, as a person or a document describes it.
// Zero values mean the family's defaults.
type Spec struct {
	// Backend is the server family.
	Backend backend.Kind
	// GPU is a catalog name ("RTX 5070 Ti", "NVIDIA GeForce RTX 4090");
	// GPUGiB, GPUBandwidthGBs (GB/s) and GPUTFLOPS (dense FP16 tensor
	// with FP32 accumulate) override its figures when > 0. Without a
	// name, the three describe a custom board.
	GPU                        string
	GPUGiB                     float64
	GPUBandwidthGBs, GPUTFLOPS float64
	// Model is a preset name or a name that resolves to one
	// ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5:7b-instruct",
	// "/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf").
	Model string
	// Quant is the weight format ("awq", "q4_k_m", "bf16"...); "" = the
	// one the model name says, else the model's dtype.
	Quant string
	// KVDtype is the KV-cache dtype ("auto", "fp8", "q8_0"...); "" = the
	// family's default (auto; f16 for llama.cpp and Ollama).
	KVDtype string
	// GPUMemoryUtilization is vLLM's gpu_memory_utilization (SGLang's
	// mem_fraction_static); 0 = 0.9 (SGLang 0.88).
	GPUMemoryUtilization float64
	// Server holds the scheduler settings; KVBlocks > 0 overrides the
	// capacity model with the server's own figure. Its booleans are
	// ignored: vLLM and SGLang default to prefix caching, CUDA graphs and
	// (vLLM) the full-prompt admission check, which the three fields
	// below turn off.
	Server Server
	// EnforceEager turns CUDA graphs off; NoPrefixCaching prefix caching;
	// NoReserveFullPrompt vLLM's scheduler_reserve_full_isl.
	EnforceEager, NoPrefixCaching, NoReserveFullPrompt bool
	// TensorParallel is vLLM's and SGLang's --tensor-parallel-size over
	// that many GPUs alike (0 = 1); Link what their collectives travel
	// over ("" = the board's DefaultLink).
	TensorParallel int
	Link           Link
	// FlashAttention is llama.cpp's and Ollama's flash attention (-fa,
	// OLLAMA_FLASH_ATTENTION), which their quantized KV caches need; it
	// changes their compute buffers in the capacity model.
	FlashAttention bool
	// FetchModel lets a Model that is a Hugging Face id no preset
	// matches be read from the hub (HF_ENDPOINT; HF_HUB_OFFLINE=1 still
	// refuses it). Off, models resolve offline: documents' runs leave it
	// off, so a fit never reaches the network.
	FetchModel bool
	// Params overrides the calibration; nil = Defaults.
	Params *Params
}

// gpu is the board s describes: the catalog entry s.GPU names with the
// figures s overrides, or, without a name, the custom board of s's three
// figures.
func (s Spec) gpu() (GPU, error) {
	if strings.TrimSpace(s.GPU) == "" {
		if !(s.GPUGiB > 0 && s.GPUBandwidthGBs > 0 && s.GPUTFLOPS > 0) {
			return GPU{}, fmt.Errorf("%w: no GPU name, and a custom board needs its memory (GiB), bandwidth (GB/s) and dense FP16 TFLOPS", ErrUnknownGPU)
		}
		return GPU{Name: fmt.Sprintf("custom %g GiB %g GB/s %g TFLOPS", s.GPUGiB, s.GPUBandwidthGBs, s.GPUTFLOPS),
			MemoryGiB: s.GPUGiB, BandwidthBytesPerS: s.GPUBandwidthGBs * 1e9, PeakFLOPS: s.GPUTFLOPS * 1e12}, nil
	}
	g, err := LookupGPU(s.GPU)
	if err != nil {
		return GPU{}, err
	}
	if s.GPUGiB > 0 {
		g.MemoryGiB = s.GPUGiB
	}
	if s.GPUBandwidthGBs > 0 {
		g.BandwidthBytesPerS = s.GPUBandwidthGBs * 1e9
	}
	if s.GPUTFLOPS > 0 {
		g.PeakFLOPS = s.GPUTFLOPS * 1e12
	}
	return g, nil
}

// LookupGPU returns the catalog entry for name; a name the catalog does
// not hold, or that matches several boards, is an ErrUnknownGPU naming
// the candidates.
func LookupGPU(name string) (GPU, error) {
	g, err := hardware.Lookup(name)
	if err != nil {
		var ue *hardware.UnknownGPUError
		if errors.As(err, &ue) && ue.Ambiguous {
			return GPU{}, fmt.Errorf("%w: %v", ErrUnknownGPU, err)
		}
		return GPU{}, fmt.Errorf("%w %s", ErrUnknownGPU, strings.TrimPrefix(err.Error(), "unknown GPU "))
	}
	ratio := g.SustainedTensorShare()
	return GPU{Name: g.Name, MemoryGiB: g.MemoryGiB, BandwidthBytesPerS: g.BandwidthGBs * 1e9, PeakFLOPS: g.FP16FP32AccTFLOPS * 1e12, DP4AOPS: g.DP4AOPS(),
		SMCyclesPerS: g.SMCyclesPerS(), INT8OPS: g.INT8TOPS * 1e12, FP8FLOPS: g.FP8TFLOPS * 1e12,
		NVLinkBytesPerS: g.NVLinkGBs() * 1e9, PCIeBytesPerS: g.PCIeGBs() * 1e9, DefaultLink: defaultLink(g), TensorClockRatio: ratio}, nil
}

// parallel is the split of s's model m over s.TensorParallel boards g
// for family fam: each rank's KV share, the link (s.Link, else g's
// default) and its collectives (linkDefaults). vLLM refuses a size that
// does not divide the attention heads, or whose KV heads neither divide
// nor are divided by it; so does the engine.
func (s Spec) parallel(fam backend.Kind, g GPU, m *modelspec.Spec) (Parallel, error) {
	t := max(s.TensorParallel, 1)
	if t == 1 {
		if s.Link != LinkNone {
			return Parallel{}, fmt.Errorf("%w: a GPU link (%s) needs a tensor-parallel size above 1", ErrBadInput, s.Link)
		}
		return Parallel{}, nil
	}
	switch {
	case t > MaxTensorParallel:
		return Parallel{}, fmt.Errorf("%w: tensor-parallel size %d (want 1 to %d)", ErrBadInput, t, MaxTensorParallel)
	case !batched(fam):
		return Parallel{}, fmt.Errorf("%w: a tensor-parallel size is for vLLM and SGLang: %s splits layers over GPUs, not matrices", ErrBadInput, fam)
	case m.Heads%t != 0 || (!m.IsMLA() && m.KVHeads%t != 0 && t%m.KVHeads != 0):
		return Parallel{}, fmt.Errorf("%w: tensor-parallel size %d does not split %s's %d attention heads and %d KV heads", ErrBadInput, t, m.Name, m.Heads, m.KVHeads)
	}
	link := s.Link
	if link == LinkNone {
		link = g.DefaultLink
	}
	bw := g.PCIeBytesPerS
	if link == LinkNVLink {
		bw = g.NVLinkBytesPerS
	}
	d, ok := linkDefaults[link]
	if !ok || !(bw > 0) {
		return Parallel{}, fmt.Errorf("%w: %s has no %s for tensor parallelism (a catalog board names its links; else --gpu-link %s or %s)", ErrBadInput, g.Name, orNone(link), LinkPCIe, LinkHost)
	}
	share := 1.0
	if !m.IsMLA() {
		share = float64(plan.KVHeadsPerRank(m.KVHeads, t, false)) / float64(m.KVHeads)
	}
	col := func(f linkFigure) Collective { return Collective{Latency: f.latency, BusBytesPerS: f.share * bw} }
	return Parallel{TensorParallel: t, Link: link, KVShare: share, Small: col(d.small), Large: col(d.large), SmallMaxBytes: d.smallMaxBytes}, nil
}

// orNone names link l, or says there is none.
func orNone(l Link) string {
	if l == LinkNone {
		return "link"
	}
	return string(l)
}

// defaultLink is the link tensor-parallel ranks on board g use when no
// one says: NVLink where every board of its systems is on NVSwitch,
// PCIe without peer access on GeForce boards (NVIDIA's driver refuses
// it), else PCIe with it (an NVLink bridge between two PCIe boards is
// an accessory: --gpu-link nvlink says a system has one).
func defaultLink(g hardware.GPU) Link {
	switch {
	case g.SwitchedNVLink():
		return LinkNVLink
	case g.GeForce():
		return LinkHost
	}
	return LinkPCIe
}

// resolveModel finds the model a name refers to, offline: a preset, a
// config.json or GGUF file on this machine, or a name that matches a
// preset with the weight format it implies (modelspec.Resolve: offline,
// "Qwen/Qwen2.5-7B-Instruct-AWQ" is qwen2.5-7b in AWQ).
func resolveModel(name string) (modelspec.Spec, plan.Quant, error) {
	return resolveModelWith(name, false)
}

// resolveModelWith is resolveModel that, when fetch is true, also reads a
// Hugging Face id no preset matches from the hub (unless HF_HUB_OFFLINE
// says otherwise). Every error is an ErrUnknownModel or names the hub.
func resolveModelWith(name string, fetch bool) (modelspec.Spec, plan.Quant, error) {
	r, err := modelspec.Resolve(context.Background(), name, modelspec.Options{Offline: !fetch})
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), modelspec.ErrUnknownModel.Error()+" ")
		return modelspec.Spec{}, "", fmt.Errorf("%w %s", ErrUnknownModel, msg)
	}
	if r.Format == "" {
		return r.Spec, "", nil
	}
	// a format the planner does not size (a checkpoint's quant_method
	// such as "bitsandbytes") leaves the model's dtype
	q, err := plan.ParseQuant(r.Format)
	if err != nil {
		return r.Spec, "", nil
	}
	return r.Spec, q, nil
}

// modelCost derives the cost of one forward pass of m stored as q with a
// KV cache of dtype kv. Bytes read per step: plan.SplitWeights' Step
// part, every tensor at the bytes its format gives it (the lm_head
// 16-bit in Hugging Face formats, as vLLM keeps it; Q6_K or Q8_0 in
// llama.cpp's quantizations, whose token embedding is quantized too);
// the input embedding table and the vision tower are not read whole.
// Vision models (arch "*_vl") count the parameters beyond the text stack
// as their vision tower: a 448×448 image is 256 tokens after Qwen2-VL's
// 2×2 merge of 14-pixel patches, and the encoder runs 2 × vision
// parameters per patch (1024 patches).
func modelCost(m modelspec.Spec, q plan.Quant, kv plan.KVDtype) ModelCost {
	p := m.Params()
	text := textParams(&m)
	vision := float64(0)
	if strings.HasSuffix(m.Arch, "_vl") && float64(p.Total()) > text {
		vision = float64(p.Total()) - text
	}
	head := float64(p.LMHead)
	if m.TiedEmbeddings {
		head = float64(p.Embedding)
	}
	step := plan.SplitWeights(&m, q).Step
	linear := float64(p.Linear) - vision
	if m.Experts > 0 && m.MoEIntermediate > 0 {
		// a token visits ExpertsPerToken experts: the routed experts'
		// weights are all read, but only the visited ones compute.
		dense := float64(m.Layers) * float64(m.Hidden*(m.Heads*m.HeadDim)*2+2*m.Hidden*m.KVHeads*m.HeadDim)
		linear = dense + float64(m.Layers)*3*float64(m.Hidden*m.MoEIntermediate*max(m.ExpertsPerToken, 1))
	}
	c := ModelCost{
		Name:                m.Name,
		WeightBytesPerStep:  float64(step),
		FLOPsPerToken:       2 * linear,
		HeadFLOPs:           2 * head,
		AttnFLOPsPerCtx:     4 * float64(m.Layers*m.Heads*m.HeadDim),
		KVBytesPerToken:     float64(m.Layers*m.KVElementsPerToken()) * kv.BytesPerElement(m.Dtype),
		Layers:              m.Layers,
		HiddenBytesPerToken: 2 * float64(m.Hidden),
		LogitBytesPerSample: 2 * float64(m.Vocab),
	}
	switch {
	case plan.IsGGUFQuant(q):
		c.Kernel = KernelMMQ
	case q == "fp8":
		c.Kernel = KernelFP8
	}
	if m.Experts > 0 && m.MoEIntermediate > 0 && p.Experts > 0 {
		c.Experts, c.ExpertsPerToken = m.Experts, max(m.ExpertsPerToken, 1)
		c.ExpertBytes = expertBytes(&m, q, p, float64(step))
		c.ExpertColumnFLOPs = 2 * 3 * float64(m.Hidden*m.MoEIntermediate)
		for i := range m.Layers {
			if m.IsMoELayer(i) {
				c.MoELayers++
			}
		}
	}
	if vision > 0 {
		c.ImageTokens = 256
		c.ImageFLOPs = 2 * vision * 4 * 256
	}
	return c
}

// expertBytes is the routed experts' part of step, the bytes one forward
// pass reads: their parameters at the format's expert bytes (MXFP4 stores
// only the experts at 4.25 bits), or for llama.cpp's quantizations, whose
// tensor types mostly share one width, their share of the parameters read.
func expertBytes(m *modelspec.Spec, q plan.Quant, p modelspec.ParamSplit, step float64) float64 {
	if plan.IsGGUFQuant(q) {
		read := float64(p.Linear + p.LMHead + p.Other)
		if m.TiedEmbeddings {
			read += float64(p.Embedding)
		}
		return step * float64(p.Experts) / read
	}
	return min(step, float64(p.Experts)*plan.ExpertBytesPerParam(q))
}

// textParams is the parameter count of the text stack from the
// dimensions alone.
func textParams(m *modelspec.Spec) float64 {
	h, kvd, qd := float64(m.Hidden), float64(m.KVHeads*m.HeadDim), float64(m.Heads*m.HeadDim)
	per := h*qd + 2*h*kvd + qd*h + 3*h*float64(m.Intermediate) + 2*h
	emb := float64(m.Vocab) * h
	if !m.TiedEmbeddings {
		emb *= 2
	}
	return float64(m.Layers)*per + emb + h
}

// ResolvedModel returns the model s names, as the planner describes it
// (dimensions, trained context), and the weight format it runs in (s.Quant,
// else the one the name says, else the model's default): what a server
// that simulates it reports about its model (package simserve).
func (s Spec) ResolvedModel() (modelspec.Spec, string, error) {
	m, q, err := resolveModelWith(s.Model, s.FetchModel)
	if err != nil {
		return modelspec.Spec{}, "", err
	}
	if s.Quant != "" {
		if q, err = plan.ParseQuant(s.Quant); err != nil {
			return modelspec.Spec{}, "", fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	if q == "" {
		q = plan.DefaultQuant(&m)
	}
	return m, string(q), nil
}

// Config resolves s into an engine configuration: the GPU from the
// catalog, the model from the presets, the KV capacity from plan's
// capacity model for the family (or Server.KVBlocks), the server's
// default settings and the family's default Params.
func (s Spec) Config() (Config, error) {
	fam, err := ParseKind(string(s.Backend))
	if err != nil {
		return Config{}, err
	}
	g, err := s.gpu()
	if err != nil {
		return Config{}, err
	}
	m, q, err := resolveModelWith(s.Model, s.FetchModel)
	if err != nil {
		return Config{}, err
	}
	if s.Quant != "" {
		if q, err = plan.ParseQuant(s.Quant); err != nil {
			return Config{}, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	if q == "" {
		q = plan.DefaultQuant(&m)
	}
	kv, err := kvDtype(fam, s.KVDtype)
	if err != nil {
		return Config{}, err
	}
	return s.build(fam, g, m, q, kv)
}

// build is the configuration of s once its family, GPU, model, weight
// format and KV dtype are resolved.
func (s Spec) build(fam backend.Kind, g GPU, m modelspec.Spec, q plan.Quant, kv plan.KVDtype) (Config, error) {
	c := Config{Backend: fam, GPU: g, Model: modelCost(m, q, kv), Server: s.Server}
	var err error
	if c.Parallel, err = s.parallel(fam, g, &m); err != nil {
		return Config{}, err
	}
	c.Server.CUDAGraphs = batched(fam) && !s.EnforceEager
	c.Server.PrefixCaching = batched(fam) && !s.NoPrefixCaching
	c.Server.ReserveFullPrompt = fam == backend.VLLM && !s.NoReserveFullPrompt
	if err := c.capacity(m, q, kv, s.GPUMemoryUtilization, s.FlashAttention); err != nil {
		return Config{}, err
	}
	c.Params = DefaultParams(fam, g, c.Model)
	if s.Params != nil {
		c.Params = *s.Params
	}
	return c, c.check()
}

// Recommendation workload: each simulated user sends a prompt that fills
// its context less recommendOutput tokens and reads recommendOutput
// tokens back, in a closed loop; RecommendMaxUsers bounds what is
// simulated (a level of more users takes seconds per configuration).
const (
	recommendOutput = 256
	// RecommendMaxUsers is the most users CandidateConfig simulates.
	RecommendMaxUsers = 4096
)

// RecommendPerformance is plan.Recommend's ThroughputFunc on the
// simulator: each configuration that holds the users is built from its
// planner inputs (the same capacity model, GPU catalog entry and model)
// with the family's documented default efficiencies (no fit), and one
// closed-loop level of users clients is simulated in virtual time, each
// sending a prompt of the context less 256 tokens and reading 256 tokens
// back (half the context each when it is under 512). Configurations the
// engine does not model (layers split over several GPUs, a GPU the
// catalog does not know) get an error, which Recommend keeps as a note.
func RecommendPerformance(seed uint64) plan.ThroughputFunc {
	return func(c *plan.Candidate, users int) (plan.Performance, error) {
		cfg, w, err := recommendConfig(c, users)
		if err != nil {
			return plan.Performance{}, err
		}
		e, err := New(cfg)
		if err != nil {
			return plan.Performance{}, err
		}
		lr, err := RunLevel(e, w, Load{Method: load.Pool, Concurrency: users, Requests: max(2*users, 16), Seed: seed})
		if err != nil {
			return plan.Performance{}, err
		}
		tok, ok1 := metric(lr, MetricThroughput)
		ttft, ok2 := metric(lr, MetricTTFT)
		tpot, ok3 := metric(lr, MetricTPOT)
		if !ok1 || !ok2 || !ok3 {
			return plan.Performance{}, fmt.Errorf("%w: the simulated level finished no request", errNoPrediction)
		}
		regime := "closed_loop"
		if users == 1 {
			regime = "single_stream"
		}
		return plan.Performance{TokPerS: tok, TTFTP50Ms: ttft, TPOTP50Ms: tpot, Source: fmt.Sprintf(
			"simulated (servebench's simulator, documented defaults, no fit; %s), %d users in a closed loop, each sending %d prompt tokens for %d output tokens",
			AccuracyClaim(cfg.GPU.Name, regime), users, w.PromptTokens, w.OutputTokens)}, nil
	}
}

// recommendConfig is the engine configuration and workload of a
// recommended configuration.
func recommendConfig(c *plan.Candidate, users int) (Config, Workload, error) {
	in := c.Inputs
	if users > RecommendMaxUsers {
		return Config{}, Workload{}, fmt.Errorf("%w: %d users are more than the %d the recommender simulates", ErrBadInput, users, RecommendMaxUsers)
	}
	fam, err := ParseKind(string(c.Backend))
	if err != nil {
		return Config{}, Workload{}, err
	}
	if len(in.GPUs) == 0 {
		return Config{}, Workload{}, fmt.Errorf("%w: the configuration lists no GPU", ErrBadInput)
	}
	d := in.GPUs[0]
	tp := 1
	if n := len(in.GPUs); n > 1 {
		// vLLM and SGLang split a model over GPUs alike by tensor
		// parallelism; layers split over GPUs (pipeline stages,
		// llama.cpp's device split) are not simulated.
		if !batched(fam) || in.PipelineParallel > 1 || in.TensorParallel != n || !sameDevices(in.GPUs) {
			return Config{}, Workload{}, fmt.Errorf("%w: the simulator splits a model over GPUs alike by tensor parallelism only (vLLM, SGLang), not %s's %d GPUs", ErrBadInput, fam, n)
		}
		tp = n
	}
	g, err := Spec{GPU: d.Name, GPUGiB: d.MemoryGiB, GPUBandwidthGBs: d.BandwidthGBs, GPUTFLOPS: d.TFLOPS}.gpu()
	if err != nil {
		return Config{}, Workload{}, fmt.Errorf("%w (the simulator needs the GPU's bandwidth and FLOPS: name it with --gpu, or give --gpu-bandwidth and --gpu-tflops)", err)
	}
	ctx := in.Context
	s := Spec{Backend: fam, FlashAttention: in.LlamaCpp.FlashAttention, TensorParallel: tp}
	switch fam {
	case backend.VLLM, backend.SGLang:
		s.Server.MaxModelLen, s.Server.MaxNumSeqs = in.Context, in.VLLM.MaxNumSeqs
	case backend.LlamaCpp:
		s.Server.Slots, s.Server.SlotContext = max(in.LlamaCpp.Parallel, 1), in.Context/max(in.LlamaCpp.Parallel, 1)
		ctx = s.Server.SlotContext
	case backend.Ollama:
		s.Server.Slots, s.Server.SlotContext = max(in.LlamaCpp.Parallel, 1), in.Context
	}
	w := Workload{OutputTokens: recommendOutput, PromptTokens: ctx - recommendOutput}
	if ctx < 2*recommendOutput {
		w.OutputTokens = max(ctx/2, 1)
		w.PromptTokens = max(ctx-w.OutputTokens, 1)
	}
	cfg, err := s.build(fam, g, in.Model, c.Quant, c.KVDtype)
	return cfg, w, err
}

// sameDevices says whether every GPU of ds is the first's.
func sameDevices(ds []plan.Device) bool {
	for _, d := range ds {
		if d != ds[0] {
			return false
		}
	}
	return true
}

// kvDtype parses a KV dtype; llama.cpp and Ollama default to f16, the
// others to auto.
func kvDtype(f backend.Kind, s string) (plan.KVDtype, error) {
	if s == "" {
		if batched(f) {
			return plan.KVAuto, nil
		}
		return plan.KVFP16, nil
	}
	d, err := plan.ParseKVDtype(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if d == plan.KVAuto && !batched(f) {
		d = plan.KVFP16
	}
	return d, nil
}

// capacity fills the server's defaults and KV capacity from plan: the
// family's scheduling.capacity fills plan's inputs (and the engine's
// settings plan leaves alone), plan sizes the KV cache.
func (c *Config) capacity(m modelspec.Spec, q plan.Quant, kv plan.KVDtype, util float64, flashAttention bool) error {
	s := &c.Server
	in := plan.Inputs{Model: m, GPUName: c.GPU.Name, GPUGiB: c.GPU.MemoryGiB, Quant: q, KVDtypes: []plan.KVDtype{kv}, LlamaCpp: plan.LlamaCppSettings{FlashAttention: flashAttention},
		TensorParallel: c.Parallel.size()}
	if sc, ok := schedulers[c.Backend]; ok {
		sc.capacity(c, &in, util)
	}
	res, err := plan.Plan(in)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	p := res.Predictions[0]
	if !p.Fits {
		return fmt.Errorf("%w: %s needs %.2f GiB more than the %.2f GiB of %s", ErrDoesNotFit, m.Name, p.ShortfallGiB, c.GPU.MemoryGiB, boards(c, "each of "))
	}
	if batched(c.Backend) && s.KVBlocks == 0 {
		s.KVBlocks = p.Blocks
		if s.KVBlocks < 2 {
			return fmt.Errorf("%w: %s leaves no KV cache on %s", ErrDoesNotFit, m.Name, boards(c, ""))
		}
	}
	if batched(c.Backend) && (s.KVBlocks-1)*s.BlockSize < s.MaxModelLen {
		return fmt.Errorf("%w: max_model_len %d is more than the %d tokens of KV cache %s for %s (lower the context)",
			ErrDoesNotFit, s.MaxModelLen, (s.KVBlocks-1)*s.BlockSize, boards(c, "")+" holds", m.Name)
	}
	return nil
}

// boards names the GPUs c runs on: the board, or "2 × H100 80GB" over
// tensor-parallel ranks, with each before the count ("each of ") where
// a figure is one board's.
func boards(c *Config, each string) string {
	if t := c.Parallel.size(); t > 1 {
		return fmt.Sprintf("%s%d × %s", each, t, c.GPU.Name)
	}
	return c.GPU.Name
}

// CandidateConfig is the engine configuration of a configuration that
// plan.Recommend tried for users (its planner inputs, the GPU catalog
// entry, the family's documented default efficiencies, no fit), for a
// caller that drives its own load on it (plan --users' people): one GPU,
// or vLLM and SGLang over GPUs alike by tensor parallelism, as
// RecommendPerformance.
func CandidateConfig(c *plan.Candidate, users int) (Config, error) {
	cfg, _, err := recommendConfig(c, users)
	return cfg, err
}
