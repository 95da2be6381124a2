// Package document defines servebench's result documents: the JSON shapes
// that `run` and `plan` write and `report`, `compare` and `calibrate` read.
//
// One Document type holds both reference shapes of the repository's
// examples/ (examples/README.md says where they came from):
//   - the sweep shape of multi-backend-sweep.json (gpu, gpu_gib, run_dates,
//     runs[].levels[], calibration[], planner), and
//   - the batch shape of vllm-text-image-example.json (runtime, gpu,
//     profile, method, records[].runs[]).
//
// Field names and nesting follow those examples exactly; servebench's own extra
// fields are additions, never renames. Values that a server or machine did
// not give are null (nil pointers), never zero. Units are in the JSON names
// (_ms, _gib, _mib, _tok_s, _seconds). docs/metrics.md defines every field.
//
// The engine that measures (load, backend, telemetry) never imports this
// package: it writes records (package record), and summary builds documents
// from them. What is written once before a run starts (its description,
// server identity, KV-cache settings, capacity, profile, calibration: a
// record.Run) and what observers measured over a level (a
// record.Observations) are record's types, embedded here under the same
// JSON names, so that the schema is declared once.
package document

import "github.com/servebench/servebench/record"

// Document is a servebench result document: a sweep (Runs), a batch
// comparison (Records), or both.
type Document struct {
	// GPU is the device name, e.g. "NVIDIA GeForce RTX 5070 Ti".
	GPU *string `json:"gpu"`
	// GPUGiB is the device's total memory in GiB (2^30 bytes).
	GPUGiB *float64 `json:"gpu_gib,omitempty"`
	// RunDates lists each run's start, "2006-01-02 15:04 UTC".
	RunDates []string `json:"run_dates,omitempty"`
	// Runs are the sweeps, one per server configuration and workload.
	Runs []Run `json:"runs,omitempty"`
	// Calibration holds planner predictions against real capacities.
	Calibration []record.Calibration `json:"calibration,omitempty"`
	// Planner is the seed planner's constants and model table.
	Planner *Planner `json:"planner,omitempty"`

	// Runtime names the server and its version (batch shape).
	Runtime *string `json:"runtime,omitempty"`
	// Profile is the server configuration the batch records ran under.
	Profile *record.Profile `json:"profile,omitempty"`
	// Method describes how the batch records were measured, in words.
	Method string `json:"method,omitempty"`
	// Records are batch-method results (examples/vllm-text-image-example.json).
	Records []BatchRecord `json:"records,omitempty"`

	// Complete is false when the run was interrupted (Ctrl-C) and the
	// document holds only what was measured until then.
	Complete *bool `json:"complete,omitempty"`
	// Warnings are document-wide findings, as data.
	Warnings []string `json:"warnings,omitempty"`
	// Tool names the servebench version that wrote the document.
	Tool string `json:"tool,omitempty"`
}

// Run is one sweep: one server configuration, one workload, several
// concurrency levels. Its description is the records header's (record.Run,
// whose fields a document shows as they were recorded, under the same JSON
// names); a document adds the levels and whether the run completed. Its
// Calibration is lifted by summary into Document.Calibration.
type Run struct {
	record.Run
	Levels []Level `json:"levels"`
	// Complete is false when the run was cut short.
	Complete *bool `json:"complete,omitempty"`
}

// Level is the summary of one concurrency level of a sweep.
//
// Definitions (docs/metrics.md): ThroughputTokS = Σ output tokens / wall time from
// the level's first send to its last finish; TTFT is from writing the request
// to the first chunk carrying generated content; TPOT = (E2E − TTFT) /
// (output_tokens − 1) over requests with more than one output token;
// percentiles over successful requests. PeakVRAMGiB, PeakKVCacheUsage (0–1)
// and Preemptions (counter delta over the level) come from telemetry and are
// null where the server or machine has none.
type Level struct {
	Concurrency    int      `json:"concurrency"`
	Requests       int      `json:"requests"`
	Errors         int      `json:"errors"`
	ThroughputTokS *float64 `json:"throughput_tok_s"`
	TTFTP50Ms      *float64 `json:"ttft_p50_ms"`
	TTFTP95Ms      *float64 `json:"ttft_p95_ms"`
	TPOTP50Ms      *float64 `json:"tpot_p50_ms"`
	// Observations are what was measured over the level from outside its
	// requests (telemetry): peak VRAM, peak KV usage, preemptions, peak
	// requests running and waiting, the waiting gauge's rise, the
	// server's prefix-cache hit rate. Their Warnings are shadowed by the
	// level's own: stats.MergeLevel appends them there.
	record.Observations
	MeanPromptTokens *float64 `json:"mean_prompt_tokens"`

	// Extras beyond the shape of examples/multi-backend-sweep.json, all
	// optional.

	// ErrorsByReason counts failed requests per record.Reason.
	ErrorsByReason map[string]int `json:"errors_by_reason,omitempty"`
	// WallSeconds is the level's first send to its last finish.
	WallSeconds *float64 `json:"wall_seconds,omitempty"`
	// OutputTokens is Σ server-reported output tokens of the level.
	OutputTokens *int     `json:"output_tokens,omitempty"`
	TTFTP99Ms    *float64 `json:"ttft_p99_ms,omitempty"`
	TPOTP95Ms    *float64 `json:"tpot_p95_ms,omitempty"`
	E2EP50Ms     *float64 `json:"e2e_p50_ms,omitempty"`
	E2EP95Ms     *float64 `json:"e2e_p95_ms,omitempty"`
	ITLP50Ms     *float64 `json:"itl_p50_ms,omitempty"`
	ITLP99Ms     *float64 `json:"itl_p99_ms,omitempty"`
	// PromptTokensSD is the standard deviation of reported prompt tokens.
	PromptTokensSD *float64 `json:"prompt_tokens_sd,omitempty"`
	// RequestedRate and AchievedRate are requests/s of the rate method.
	RequestedRate *float64 `json:"requested_rate,omitempty"`
	AchievedRate  *float64 `json:"achieved_rate,omitempty"`
	// ScheduleLagP99Ms is how late the rate method sent, 99th percentile.
	ScheduleLagP99Ms *float64 `json:"schedule_lag_p99_ms,omitempty"`

	// Means and tails: the mean of each latency over the same
	// samples as its percentiles, p90 beside p95, and the p99s that were
	// missing, so that a level compares with vLLM's benchmark output
	// (mean, median, p99).
	TTFTMeanMs *float64 `json:"ttft_mean_ms,omitempty"`
	TTFTP90Ms  *float64 `json:"ttft_p90_ms,omitempty"`
	TPOTMeanMs *float64 `json:"tpot_mean_ms,omitempty"`
	TPOTP90Ms  *float64 `json:"tpot_p90_ms,omitempty"`
	TPOTP99Ms  *float64 `json:"tpot_p99_ms,omitempty"`
	ITLMeanMs  *float64 `json:"itl_mean_ms,omitempty"`
	ITLP90Ms   *float64 `json:"itl_p90_ms,omitempty"`
	ITLP95Ms   *float64 `json:"itl_p95_ms,omitempty"`
	E2EMeanMs  *float64 `json:"e2e_mean_ms,omitempty"`
	E2EP90Ms   *float64 `json:"e2e_p90_ms,omitempty"`
	E2EP99Ms   *float64 `json:"e2e_p99_ms,omitempty"`

	// Warnings are findings about this level, as data.
	Warnings []string `json:"warnings,omitempty"`

	// Coordinated omission, rate method: latencies measured
	// from each request's scheduled send time rather than its actual one,
	// so the time a request waited on the client (a full
	// --max-concurrency cap, a client that fell behind) counts; the
	// schedule lag's distribution; and whether the client, not the
	// server, limited the rate. docs/metrics.md defines each.

	// TTFTSched*Ms are TTFT from the scheduled send time: TTFT + lag.
	TTFTSchedP50Ms  *float64 `json:"ttft_sched_p50_ms,omitempty"`
	TTFTSchedP95Ms  *float64 `json:"ttft_sched_p95_ms,omitempty"`
	TTFTSchedP99Ms  *float64 `json:"ttft_sched_p99_ms,omitempty"`
	TTFTSchedMeanMs *float64 `json:"ttft_sched_mean_ms,omitempty"`
	// E2ESched*Ms are E2E latency from the scheduled send time: E2E + lag.
	E2ESchedP50Ms  *float64 `json:"e2e_sched_p50_ms,omitempty"`
	E2ESchedP95Ms  *float64 `json:"e2e_sched_p95_ms,omitempty"`
	E2ESchedP99Ms  *float64 `json:"e2e_sched_p99_ms,omitempty"`
	E2ESchedMeanMs *float64 `json:"e2e_sched_mean_ms,omitempty"`
	// ScheduleLag*Ms is the distribution of actual − scheduled send time
	// over the level's requests (ScheduleLagP99Ms above is its p99).
	ScheduleLagP50Ms  *float64 `json:"schedule_lag_p50_ms,omitempty"`
	ScheduleLagP95Ms  *float64 `json:"schedule_lag_p95_ms,omitempty"`
	ScheduleLagMeanMs *float64 `json:"schedule_lag_mean_ms,omitempty"`
	ScheduleLagMaxMs  *float64 `json:"schedule_lag_max_ms,omitempty"`
	// ScheduleLagGrowthMs is the mean lag of the last quarter of the
	// level's requests (by scheduled time) minus that of the first
	// quarter: positive when the client fell further behind as it went.
	ScheduleLagGrowthMs *float64 `json:"schedule_lag_growth_ms,omitempty"`
	// ScheduledRate is the rate the schedule itself held, (n − 1) / (last
	// scheduled − first scheduled send) over its n arrivals, requests/s
	// (sessions/s in a multi-turn level, whose later turns follow their
	// previous turn rather than the schedule): what AchievedRate is held
	// against (a random schedule's own rate differs from RequestedRate by
	// chance).
	ScheduledRate *float64 `json:"scheduled_rate,omitempty"`
	// PeakInFlight is the most requests in flight at once, from the
	// records (send to last chunk); in a multi-turn level, sessions in
	// flight (first turn's send to last turn's end, think times
	// included) beside any single requests: what --max-concurrency's
	// slots count.
	PeakInFlight *int `json:"peak_in_flight,omitempty"`
	// ClientLimited is true when the client, not the server, limited the
	// rate (stats.CheckSchedule: achieved below 95% of the scheduled rate
	// and the lag growing), false when checked and not; null outside the
	// rate method or for fewer than 8 requests. A warning says why.
	ClientLimited *bool `json:"client_limited,omitempty"`

	// Mixes, run --mix: Class names a request class in a
	// level's Classes; Classes summarizes the level's requests per class
	// by the definitions of this type, each over that class's requests
	// alone (its throughput over its own first send to last finish). The
	// level itself is the summary over all of them.
	Class   string  `json:"class,omitempty"`
	Classes []Level `json:"classes,omitempty"`

	// Confidence intervals, goodput and saturation (servebench find,
	// Each *_ci_low / *_ci_high pair is the confidence interval
	// of the figure it is named after, at CIConfidence (docs/metrics.md,
	// "Confidence intervals"); an absent end could not be bounded at that
	// confidence (too few samples).

	// CIConfidence is the confidence of the level's intervals (0–1).
	CIConfidence         *float64 `json:"ci_confidence,omitempty"`
	ThroughputTokSCILow  *float64 `json:"throughput_tok_s_ci_low,omitempty"`
	ThroughputTokSCIHigh *float64 `json:"throughput_tok_s_ci_high,omitempty"`
	TTFTP50MsCILow       *float64 `json:"ttft_p50_ms_ci_low,omitempty"`
	TTFTP50MsCIHigh      *float64 `json:"ttft_p50_ms_ci_high,omitempty"`
	TTFTP95MsCILow       *float64 `json:"ttft_p95_ms_ci_low,omitempty"`
	TTFTP95MsCIHigh      *float64 `json:"ttft_p95_ms_ci_high,omitempty"`
	TTFTP99MsCILow       *float64 `json:"ttft_p99_ms_ci_low,omitempty"`
	TTFTP99MsCIHigh      *float64 `json:"ttft_p99_ms_ci_high,omitempty"`
	TPOTP50MsCILow       *float64 `json:"tpot_p50_ms_ci_low,omitempty"`
	TPOTP50MsCIHigh      *float64 `json:"tpot_p50_ms_ci_high,omitempty"`
	TPOTP95MsCILow       *float64 `json:"tpot_p95_ms_ci_low,omitempty"`
	TPOTP95MsCIHigh      *float64 `json:"tpot_p95_ms_ci_high,omitempty"`
	TPOTP99MsCILow       *float64 `json:"tpot_p99_ms_ci_low,omitempty"`
	TPOTP99MsCIHigh      *float64 `json:"tpot_p99_ms_ci_high,omitempty"`
	E2EP50MsCILow        *float64 `json:"e2e_p50_ms_ci_low,omitempty"`
	E2EP50MsCIHigh       *float64 `json:"e2e_p50_ms_ci_high,omitempty"`
	E2EP95MsCILow        *float64 `json:"e2e_p95_ms_ci_low,omitempty"`
	E2EP95MsCIHigh       *float64 `json:"e2e_p95_ms_ci_high,omitempty"`
	E2EP99MsCILow        *float64 `json:"e2e_p99_ms_ci_low,omitempty"`
	E2EP99MsCIHigh       *float64 `json:"e2e_p99_ms_ci_high,omitempty"`
	// OneSided is what an SLO verdict on a percentile rests on, per
	// percentile figure with an interval above (docs/metrics.md,
	// "Confidence intervals", SLO verdicts): its one-sided bounds at
	// CIConfidence and the size and extremes of its sample.
	OneSided map[Figure]OneSidedBounds `json:"one_sided,omitempty"`
	// GoodputReqS is vLLM's request goodput: the level's requests that met
	// every per-request bound of the run's SLO (Run.SLO), per second of
	// the level's wall time; GoodputFraction is their share of the
	// level's requests (failed ones count as not meeting it), with its
	// Clopper–Pearson interval. Null when no SLO was given.
	GoodputReqS           *float64 `json:"goodput_req_s,omitempty"`
	GoodputFraction       *float64 `json:"goodput_fraction,omitempty"`
	GoodputFractionCILow  *float64 `json:"goodput_fraction_ci_low,omitempty"`
	GoodputFractionCIHigh *float64 `json:"goodput_fraction_ci_high,omitempty"`
	// Repeats is the number of separate passes pooled into this level:
	// the batch method's batches, or the passes of a probe find repeated
	// because its interval straddled a bound; absent for one pass.
	Repeats int `json:"repeats,omitempty"`
	// Saturated says why this level counts as saturated (see package
	// saturation), when a sweep or search checked it and it was.
	Saturated string `json:"saturated,omitempty"`

	// Sessions, shared prefixes and the server's prefix cache.

	// PromptTokensSent is Σ server-reported prompt tokens of the level's
	// successful requests; PromptTokensCached the part of them the server
	// said it served from its prefix cache (null where no request's server
	// said), and PromptCacheHitRate = cached / sent over the requests that
	// reported both.
	PromptTokensSent   *int     `json:"prompt_tokens_sent,omitempty"`
	PromptTokensCached *int     `json:"prompt_tokens_cached,omitempty"`
	PromptCacheHitRate *float64 `json:"prompt_cache_hit_rate,omitempty"`
	// Energy and cost (docs/features.md), derived from the embedded
	// Observations' energy: joules per output token = EnergyJ /
	// OutputTokens; tokens/s per watt = ThroughputTokS / MeanPowerW;
	// dollars per million output tokens from the run's price (per hour of
	// the level's wall time, or per kWh of its energy). Null where not
	// measured (no power sensor, a level too short, the simulator).
	JoulesPerOutputToken *float64 `json:"joules_per_output_token,omitempty"`
	TokSPerWatt          *float64 `json:"tok_s_per_watt,omitempty"`
	CostUSDPerMTok       *float64 `json:"cost_usd_per_mtok,omitempty"`
	// ServerPrefillP50Ms is the median of the prefill time the server
	// reported per request (Ollama prompt_eval_duration, llama.cpp
	// timings.prompt_ms): it falls when a prompt's prefix came from cache.
	ServerPrefillP50Ms *float64 `json:"server_prefill_p50_ms,omitempty"`
	// Turns summarizes a multi-turn level turn by turn.
	Turns []TurnSummary `json:"turns,omitempty"`

	// People (run --users): Conversations is the number of distinct
	// conversations (sessions) the level's counted turns belong to, and
	// MessageRate the counted turns sent per second (the gaps between the
	// first and last counted send, per repeat): the rate N people make,
	// ≈ N / (mean think + mean E2E) by Little's law (docs/users.md).
	// Absent outside sessions.
	Conversations *int     `json:"conversations,omitempty"`
	MessageRate   *float64 `json:"message_rate,omitempty"`

	// Reasoning models: where requests streamed reasoning.

	// TTFRP50Ms and TTFRP95Ms are percentiles of the time to the first
	// reasoning token; TTFAP50Ms and TTFAP95Ms of the time to the first
	// answer token (requests whose answer began).
	TTFRP50Ms *float64 `json:"ttfr_p50_ms,omitempty"`
	TTFRP95Ms *float64 `json:"ttfr_p95_ms,omitempty"`
	TTFAP50Ms *float64 `json:"ttfa_p50_ms,omitempty"`
	TTFAP95Ms *float64 `json:"ttfa_p95_ms,omitempty"`
	// ReasoningTokens and AnswerTokens split OutputTokens over the
	// requests that reported a reasoning count; ReasoningTokensEstimated
	// is true when some of those counts were servebench's estimate.
	ReasoningTokens          *int `json:"reasoning_tokens,omitempty"`
	AnswerTokens             *int `json:"answer_tokens,omitempty"`
	ReasoningTokensEstimated bool `json:"reasoning_tokens_estimated,omitempty"`
}

// TurnSummary is one turn of a multi-turn level: its requests (the turn-k
// request of every session), their TTFT, their prompt and what of it the
// server served from cache, and the server's prefill time.
type TurnSummary struct {
	Turn               int      `json:"turn"`
	Requests           int      `json:"requests"`
	Errors             int      `json:"errors"`
	TTFTP50Ms          *float64 `json:"ttft_p50_ms"`
	TTFTP95Ms          *float64 `json:"ttft_p95_ms"`
	MeanPromptTokens   *float64 `json:"mean_prompt_tokens"`
	MeanCachedTokens   *float64 `json:"mean_cached_prompt_tokens,omitempty"`
	ServerPrefillP50Ms *float64 `json:"server_prefill_p50_ms,omitempty"`
}

// BatchRecord is one batch-method point: Repeats batches of Concurrency
// simultaneous requests with OutputTokensPerRequest tokens each.
//
// Derived fields (docs/metrics.md): TotalVerifiedOutputTokens = Σ server-reported
// generated tokens over the runs; AggregateOutputTokS = that total / Σ run
// wall seconds; PerRequestOutputTokS = aggregate / concurrency;
// MeanCompletionSeconds = mean run wall seconds; MeanTPOTMs =
// MeanCompletionSeconds × 1000 / OutputTokensPerRequest (this includes
// prefill; it is not the per-request TPOT of Level); PeakObservedGPUMemoryMiB
// = max over runs of GPUMemoryMiBAfter.
type BatchRecord struct {
	Workload                  string     `json:"workload"`
	Concurrency               int        `json:"concurrency"`
	Repeats                   int        `json:"repeats"`
	OutputTokensPerRequest    int        `json:"output_tokens_per_request"`
	TotalVerifiedOutputTokens int        `json:"total_verified_output_tokens"`
	AggregateOutputTokS       float64    `json:"aggregate_output_tok_s"`
	PerRequestOutputTokS      float64    `json:"per_request_output_tok_s"`
	MeanCompletionSeconds     float64    `json:"mean_completion_seconds"`
	MeanTPOTMs                float64    `json:"mean_tpot_ms"`
	PeakObservedGPUMemoryMiB  *float64   `json:"peak_observed_gpu_memory_mib"`
	Runs                      []BatchRun `json:"runs"`

	// Label names the run this record belongs to (servebench extra).
	Label string `json:"label,omitempty"`
	// Warnings are findings about this record, as data.
	Warnings []string `json:"warnings,omitempty"`
}

// BatchRun is one batch of a BatchRecord.
type BatchRun struct {
	GeneratedTokens   int      `json:"generated_tokens"`
	WallSeconds       float64  `json:"wall_seconds"`
	OutputTokS        float64  `json:"output_tok_s"`
	GPUMemoryMiBAfter *float64 `json:"gpu_memory_mib_after"`
}

// Planner is the seed planner's constants and model table
// (examples/multi-backend-sweep.json "planner").
type Planner struct {
	GiB                  int64                   `json:"gib"`
	KVBytes              map[string]float64      `json:"kv_bytes"`
	GPUMemoryUtilization float64                 `json:"gpu_memory_utilization"`
	OverheadGiB          float64                 `json:"overhead_gib"`
	BlockSize            int                     `json:"block_size"`
	Models               map[string]PlannerModel `json:"models"`
}

// PlannerModel is one model of the seed planner's table.
type PlannerModel struct {
	NLayers  int     `json:"n_layers"`
	NKVHeads int     `json:"n_kv_heads"`
	HeadDim  int     `json:"head_dim"`
	ParamsB  float64 `json:"params_b"`
}

// OneSidedBounds are a percentile's one-sided confidence bounds and the
// sample they come from. A bound on a p95 asks one question (is it
// below the budget, or above it), so each side is a one-sided bound at
// the level's CIConfidence rather than the two-sided interval's end at
// α/2: a distribution-free upper bound on a p95 needs 59 values at 95%,
// where the two-sided interval needs 72.
type OneSidedBounds struct {
	// N is the number of values the percentile is over.
	N int `json:"n"`
	// Low is a value the percentile lies at or above, High one it lies
	// at or below, each with confidence CIConfidence; absent where N
	// values cannot bound that side (stats.BoundSampleSize).
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
	// Min and Max are the smallest and largest of the N values: where
	// all of them lie on one side of a bound, that is what a verdict
	// can say of the percentile without a bound.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}
