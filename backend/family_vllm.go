package backend

// VLLM is vLLM's OpenAI-compatible server (vllm serve).
const VLLM Kind = "vllm"

// vllmFamily: port 8000 (vllm serve --port); GET /version; POST /tokenize
// {"model","prompt"} → {"count"}; ignore_eos with min_tokens, and usage on
// every chunk (continuous_usage_stats); V1 and V0 metric names.
var vllmFamily = Descriptor{
	Kind: VLLM, Name: "vLLM",
	Ports:  []int{8000},
	Health: "/health",
	APIs:   openAIAPIs, Paths: openAIPaths,
	Version: Endpoint{Path: "/version", Field: "version"},
	Tokenizer: &Tokenizer{Path: "/tokenize", Field: "count",
		Body: func(model, text string) map[string]string { return map[string]string{"model": model, "prompt": text} }},
	Metrics: &vllmMetrics,
	Log:     VLLM,
	Weights: HuggingFace,
	EOS:     EOSNative,
	probe:   versionAndModels,
	client:  newOpenAIClient,
	request: func(b *openAIBody, rq *Request, ignore bool) {
		if ignore {
			n := rq.MaxTokens
			b.MinTokens = &n
		}
		b.StreamOptions.ContinuousUsageStats = true
	},
}

// vLLM names: V1 (≥ 0.8) exports kv_cache_usage_perc; V0 exported
// gpu_cache_usage_perc. Both export num_preemptions_total (prometheus_client
// writes the counter with its _total suffix; the bare name is kept for
// exporters that strip it). Source: vLLM docs "Production Metrics" and
// vllm/v1/metrics/loggers.py; checked against the published pages in
// telemetry/testdata/vllm-v1-metrics-*.txt and
// telemetry/testdata/vllm-v0-metrics-aibrix.txt.
//
// Prefix caching: V1 counts prompt tokens queried and hit,
// prefix_cache_queries_total and prefix_cache_hits_total ("Prefix cache
// queries, in terms of number of queried tokens" in
// telemetry/testdata/vllm-v1-metrics-opt125m-cpu.txt); V0 exported the
// block hit rate as the gauge gpu_prefix_cache_hit_rate (-1 with caching
// off, telemetry/testdata/vllm-v0-metrics-aibrix.txt).
var vllmMetrics = MetricNames{
	KVUsage:            []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
	Preemptions:        []string{"vllm:num_preemptions_total", "vllm:num_preemptions"},
	Running:            []string{"vllm:num_requests_running"},
	Waiting:            []string{"vllm:num_requests_waiting"},
	CacheInfo:          []string{"vllm:cache_config_info"},
	PrefixCacheQueries: []string{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"},
	PrefixCacheHits:    []string{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits"},
	PrefixCacheHitRate: []string{"vllm:gpu_prefix_cache_hit_rate"},
}
