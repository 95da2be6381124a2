package record

import "encoding/json"

// Run describes a run in the header of its records file: what was asked
// (label, server, model, workload, method), what the server said about
// itself (identity, runtime, KV-cache settings, capacity), the machine (GPU)
// and, for a server run launched, its profile and the planner's prediction
// beside the capacity its log reported. It is written before the first
// request; summary makes it the run of the report document, with the
// levels rebuilt from the Results. Values not known are null, never zero.
type Run struct {
	Label        string   `json:"label"`
	Backend      string   `json:"backend"`
	Model        string   `json:"model"`
	Scenario     string   `json:"scenario"`
	PromptTokens int      `json:"prompt_tokens"`
	MaxTokens    int      `json:"max_tokens"`
	StartedAt    string   `json:"started_at"`
	GPU          *string  `json:"gpu"`
	GPUGiB       *float64 `json:"gpu_gib"`
	KVCache      KVCache  `json:"kv_cache"`

	// Method is the load method, by its name in package load (load.Method:
	// "pool", "batch" or "rate"); a string here, so that a records file
	// written by a build with other methods still reads.
	Method string `json:"method,omitempty"`
	// API is the request API used: "chat", "completions", "generate".
	API string `json:"api,omitempty"`
	// URL is the server's base URL (never carries credentials).
	URL string `json:"url,omitempty"`
	// Connection is how requests used connections, which sets where
	// their clock started (docs/metrics.md, "The request clock"):
	// "keep-alive" or "per-request".
	Connection string `json:"connection,omitempty"`
	// Runtime is the server's name and version as it reported them.
	Runtime *string `json:"runtime,omitempty"`
	// Server is what the server said about itself when probed.
	Server *ServerInfo `json:"server,omitempty"`
	// Profile is the launch profile the server ran under, if servebench
	// launched it.
	Profile *Profile `json:"profile,omitempty"`
	// Capacity is the KV capacity parsed from the server's log, if any.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Calibration is the planner's prediction for the launch profile held
	// against Capacity.
	Calibration *Calibration `json:"calibration,omitempty"`
	// Warnings are findings about the whole run, as data.
	Warnings []string `json:"warnings,omitempty"`

	// Sessions and shared prefixes.

	// Turns is the number of turns of each session (multiturn scenario).
	Turns int `json:"turns,omitempty"`
	// ThinkTime is the law of the pause between a session's turns, as
	// given ("const:1s", "exp:2s", "uniform:0.5s-3s").
	ThinkTime string `json:"think_time,omitempty"`
	// SharedPrefixTokens is the length of the system prompt shared by
	// requests, and PrefixGroups how many different ones there are.
	SharedPrefixTokens int `json:"shared_prefix_tokens,omitempty"`
	PrefixGroups       int `json:"prefix_groups,omitempty"`

	// Workloads like real traffic: the trace the run replayed
	// (run --trace) and the request classes it mixed (run --mix); nil
	// otherwise.
	Trace *TraceInfo `json:"trace,omitempty"`
	Mix   []MixClass `json:"mix,omitempty"`
	// Dataset is the prompt dataset the run sent (run --dataset): its
	// file's name and layout and its rows, never their texts; nil
	// otherwise.
	Dataset *DatasetInfo `json:"dataset,omitempty"`
	// Headers are the extra headers sent (run --header), as "Name:
	// [redacted]": their values are never written. Sampling lists the
	// user's request parameters (sampling, ignore-EOS, the extra body's
	// keys), empty when servebench's defaults were sent.
	Headers  []string `json:"headers,omitempty"`
	Sampling string   `json:"sampling,omitempty"`
	// PricePerHour and PricePerKWh are the run's price in US dollars
	// (run --price-per-hour: a rented GPU; --price-per-kwh: your own),
	// from which each level's cost per million output tokens comes; 0
	// when not given.
	PricePerHour float64 `json:"price_per_hour_usd,omitempty"`
	PricePerKWh  float64 `json:"price_per_kwh_usd,omitempty"`
	// SLO is the latency budget given to run or find (--slo), in its
	// canonical spelling, and GoodputBudget its per-request bounds: the
	// ones each level's goodput counts requests against. Both
	// absent without --slo.
	SLO           string         `json:"slo,omitempty"`
	GoodputBudget *GoodputBudget `json:"goodput_budget,omitempty"`
	// CIConfidence is the confidence of the levels' intervals when the
	// run asked for other than the default 0.95 (--confidence).
	CIConfidence float64 `json:"ci_confidence,omitempty"`

	// Simulation (run --backend sim): Simulated is true when no
	// server was measured — package sim's engine predicted every record
	// in virtual time — and Sim holds the engine's inputs and constants.
	Simulated bool     `json:"simulated,omitempty"`
	Sim       *SimInfo `json:"sim,omitempty"`
}

// SimInfo is what a simulated run was predicted from (run --backend sim,
// docs/metrics.md "Simulated runs").
type SimInfo struct {
	// Scheduler is the server family whose scheduler the engine followed
	// (vllm, sglang, llamacpp, ollama).
	Scheduler string `json:"scheduler"`
	// GPU, Model, Quant and KVDtype are the inputs as given (--gpu,
	// --model, --quant, --kv-dtype; empty: the default).
	GPU     string `json:"gpu"`
	Model   string `json:"model"`
	Quant   string `json:"quant,omitempty"`
	KVDtype string `json:"kv_dtype,omitempty"`
	// Profile names the fit applied (--sim-profile FILE and the label of
	// its run); empty: the documented defaults.
	Profile string `json:"profile,omitempty"`
	// Seed seeds the simulated clients' send delays, whose mean is
	// JitterMeanMS milliseconds (before each request's clock starts).
	Seed         int64   `json:"seed"`
	JitterMeanMS float64 `json:"jitter_mean_ms"`
	// Engine is the engine's whole configuration as package sim writes it
	// (sim.Config: the GPU's bandwidth and FLOP/s, the model's bytes and
	// FLOPs per step, the server settings, the efficiencies and
	// overheads), units in its field names.
	Engine json.RawMessage `json:"engine"`
}

// TraceInfo describes a replayed trace: where it came from and which part
// of it was replayed how fast.
type TraceInfo struct {
	// File is the trace's path as given; Format its layout ("servebench",
	// "azure", "burstgpt", "mooncake").
	File   string `json:"file"`
	Format string `json:"format"`
	// Rows is the number of requests replayed (after the window).
	Rows int `json:"rows"`
	// Speed divides the trace's times (--trace-speed; 1: as recorded).
	Speed float64 `json:"speed"`
	// WindowStartSeconds and WindowSeconds are the slice replayed
	// (--trace-window), in the trace's own time; 0 and 0: all of it.
	WindowStartSeconds float64 `json:"window_start_seconds,omitempty"`
	WindowSeconds      float64 `json:"window_seconds,omitempty"`
	// SpanSeconds is the replay's first to last arrival, after Speed.
	SpanSeconds float64 `json:"span_seconds"`
	// MeanInputTokens and MeanOutputTokens are the rows' mean lengths.
	MeanInputTokens  float64 `json:"mean_input_tokens"`
	MeanOutputTokens float64 `json:"mean_output_tokens"`
}

// MixClass is one request class of a mix and its share of the requests.
type MixClass struct {
	// Class is the scenario the class's requests are built from.
	Class string `json:"class"`
	// Weight is the class's share, 0–1; the weights of a mix sum to 1.
	Weight float64 `json:"weight"`
}

// GoodputBudget is the per-request part of an SLO, as vLLM's --goodput
// defines it: a request is good when it succeeded and each bound given is
// met by that request's own TTFT, TPOT and E2E latency. Nil fields are
// not bounded.
type GoodputBudget struct {
	TTFTMs *float64 `json:"ttft_ms,omitempty"`
	TPOTMs *float64 `json:"tpot_ms,omitempty"`
	E2EMs  *float64 `json:"e2e_ms,omitempty"`
}

// KVCache is the server's KV-cache configuration as it reported it; every
// field is null where the server does not say.
type KVCache struct {
	Dtype                *string  `json:"dtype"`
	Blocks               *int     `json:"blocks"`
	BlockSize            *int     `json:"block_size"`
	GPUMemoryUtilization *float64 `json:"gpu_memory_utilization"`
}

// ServerInfo is the server's identity as probed once per run.
type ServerInfo struct {
	Version       *string           `json:"version,omitempty"`
	Model         *string           `json:"model,omitempty"`
	ContextLength *int              `json:"context_length,omitempty"`
	Slots         *int              `json:"slots,omitempty"`
	SizeBytes     *int64            `json:"size_bytes,omitempty"`
	SizeVRAMBytes *int64            `json:"size_vram_bytes,omitempty"`
	Details       map[string]string `json:"details,omitempty"`

	// Discovered is what run found by itself because --backend, --url or
	// --model was not given; nil when all three were (the first-five-
	// minutes feature, docs/metrics.md "Per run and per document").
	Discovered *Discovery `json:"discovered,omitempty"`
}

// Discovery says what run found by itself and how. Each field is set only
// for what was found: a flag given is never overridden.
type Discovery struct {
	// Server names what answered, e.g. "Ollama 0.6.5".
	Server string `json:"server"`
	// URL is the address found by looking at the usual loopback ports
	// (no --url); Scanned are the addresses looked at.
	URL     string   `json:"url,omitempty"`
	Scanned []string `json:"scanned,omitempty"`
	// Backend is the family recognised (no --backend); BackendBy is the
	// answer that recognised it, e.g. "GET /api/version".
	Backend   string `json:"backend,omitempty"`
	BackendBy string `json:"backend_by,omitempty"`
	// Model is the server's only model (no --model); ModelBy is the
	// request that listed it, e.g. "GET /api/tags".
	Model   string `json:"model,omitempty"`
	ModelBy string `json:"model_by,omitempty"`
}

// Capacity is the KV-cache capacity a server logged at start-up.
type Capacity struct {
	Tokens         *int     `json:"tokens,omitempty"`
	Blocks         *int     `json:"blocks,omitempty"`
	KVMiB          *float64 `json:"kv_mib,omitempty"`
	Cells          *int     `json:"cells,omitempty"`
	MaxConcurrency *float64 `json:"max_concurrency,omitempty"`
	Source         string   `json:"source,omitempty"`
}

// Profile is a server configuration: the knobs of the reference profile
// (vllm-text-image-example.json). Null fields were not set.
type Profile struct {
	MaxModelLen          *int           `json:"max_model_len,omitempty"`
	MaxNumSeqs           *int           `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  *int           `json:"max_num_batched_tokens,omitempty"`
	GPUMemoryUtilization *float64       `json:"gpu_memory_utilization,omitempty"`
	CUDAGraphs           *bool          `json:"cuda_graphs,omitempty"`
	PrefixCaching        *bool          `json:"prefix_caching,omitempty"`
	LimitMMPerPrompt     map[string]int `json:"limit_mm_per_prompt,omitempty"`
	KVCacheDtype         *string        `json:"kv_cache_dtype,omitempty"`
	Parallel             *int           `json:"parallel,omitempty"`
	ContextLength        *int           `json:"context_length,omitempty"`
	FlashAttention       *bool          `json:"flash_attention,omitempty"`
	// TensorParallelSize is the GPUs vLLM splits the model over
	// (--tensor-parallel-size); nil: one.
	TensorParallelSize *int `json:"tensor_parallel_size,omitempty"`
}

// Calibration holds one planner prediction against the capacity a real
// server reported. ErrorPct = (Predicted − Actual) / Actual × 100, rounded
// to one decimal.
type Calibration struct {
	Model                string  `json:"model"`
	Preset               string  `json:"preset"`
	KVCacheDtype         string  `json:"kv_cache_dtype"`
	GPUGiB               float64 `json:"gpu_gib"`
	WeightsGiB           float64 `json:"weights_gib"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	PredictedTokens      int     `json:"predicted_tokens"`
	ActualTokens         int     `json:"actual_tokens"`
	ErrorPct             float64 `json:"error_pct"`

	// Backend is the capacity model used ("seed", "vllm", ...).
	Backend string `json:"backend,omitempty"`
	// Source says where ActualTokens came from (a log file, a live server).
	Source string `json:"source,omitempty"`
	// PredictedKVMiB and ActualKVMiB are the KV-cache sizes in MiB, for
	// servers that log a size (llama.cpp, Ollama: "KV self size").
	PredictedKVMiB *float64 `json:"predicted_kv_mib,omitempty"`
	ActualKVMiB    *float64 `json:"actual_kv_mib,omitempty"`
}

// Observations are the fields of a level measured from outside its
// requests (telemetry: server metrics, GPU memory; a launched server's
// exit), as the level_end line of a records file carries them. Each is
// null where nothing measured it.
type Observations struct {
	// PeakVRAMGiB is the level's peak GPU memory in GiB (2^30 bytes).
	PeakVRAMGiB *float64 `json:"peak_vram_gib"`
	// PeakKVCacheUsage is the server's peak KV-cache usage, 0–1.
	PeakKVCacheUsage *float64 `json:"peak_kv_cache_usage"`
	// Preemptions is the server's preemption counter's rise over the level.
	Preemptions *float64 `json:"preemptions"`
	// PeakRequestsRunning and PeakRequestsWaiting are the server's peaks.
	PeakRequestsRunning *float64 `json:"peak_requests_running,omitempty"`
	PeakRequestsWaiting *float64 `json:"peak_requests_waiting,omitempty"`
	// Warnings are findings about this level, as data.
	Warnings []string `json:"warnings,omitempty"`
	// RequestsWaitingRise is how much the server's waiting-requests gauge
	// rose over the level along its least-squares trend (requests), from
	// the scrapes of the level; null where the server exports no queue (a
	// queue that keeps growing is a sign of saturation).
	RequestsWaitingRise *float64 `json:"requests_waiting_rise,omitempty"`

	// PrefixCacheHitRate is the server's own prefix-cache hit rate over
	// the level, from its metrics (vLLM Δprefix_cache_hits /
	// Δprefix_cache_queries; SGLang's cache_hit_rate gauge, averaged over
	// the level's scrapes).
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`

	// Energy and power over the level, from the GPU's readings
	// (telemetry's Energy): joules, mean and peak watts, and how they
	// were measured; nil where nothing measured them.
	EnergyJ      *float64 `json:"energy_j,omitempty"`
	MeanPowerW   *float64 `json:"mean_power_w,omitempty"`
	PeakPowerW   *float64 `json:"peak_power_w,omitempty"`
	EnergyMethod string   `json:"energy_method,omitempty"`
}

// DatasetInfo names the prompt dataset of a run (run --dataset).
type DatasetInfo struct {
	// File is the dataset's file name, without its folder.
	File string `json:"file"`
	// Format is its layout: sharegpt, jsonl-prompt or jsonl-messages.
	Format string `json:"format"`
	// Rows is how many usable rows it held; SkippedRows how many
	// malformed ones --skip-bad-rows left out.
	Rows        int  `json:"rows"`
	SkippedRows int  `json:"skipped_rows,omitempty"`
	Shuffled    bool `json:"shuffled,omitempty"`
}

// MergeFigures copies into o the figures src measured: each of src's
// non-null figures wins over o's. It leaves warnings alone, because a
// report's level (document.Level) keeps its warnings in a field of its
// own that shadows Observations.Warnings: each caller appends src's
// warnings where its level keeps them.
func (o *Observations) MergeFigures(src *Observations) {
	for _, f := range [...]struct{ d, s **float64 }{
		{&o.PeakVRAMGiB, &src.PeakVRAMGiB},
		{&o.PeakKVCacheUsage, &src.PeakKVCacheUsage},
		{&o.Preemptions, &src.Preemptions},
		{&o.PeakRequestsRunning, &src.PeakRequestsRunning},
		{&o.PeakRequestsWaiting, &src.PeakRequestsWaiting},
		{&o.RequestsWaitingRise, &src.RequestsWaitingRise},
		{&o.PrefixCacheHitRate, &src.PrefixCacheHitRate},
		{&o.EnergyJ, &src.EnergyJ},
		{&o.MeanPowerW, &src.MeanPowerW},
		{&o.PeakPowerW, &src.PeakPowerW},
	} {
		if *f.s != nil {
			v := **f.s
			*f.d = &v
		}
	}
	if src.EnergyMethod != "" {
		o.EnergyMethod = src.EnergyMethod
	}
}
