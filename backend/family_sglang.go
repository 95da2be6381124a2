package backend

// SGLang is SGLang's server (python -m sglang.launch_server).
const SGLang Kind = "sglang"

// sglangFamily: port 30000 (launch_server --port); GET /get_server_info
// for the version; ignore_eos.
var sglangFamily = Descriptor{
	Kind: SGLang, Name: "SGLang",
	Ports:  []int{30000},
	Health: "/health",
	APIs:   openAIAPIs, Paths: openAIPaths,
	Version: Endpoint{Path: "/get_server_info", Field: "version"},
	Metrics: &sglangMetrics,
	Weights: HuggingFace,
	EOS:     EOSNative,
	probe:   versionAndModels,
	client:  newOpenAIClient,
}

// SGLang names (docs/references/production_metrics.md): token_usage is the
// fraction of the KV token pool in use; max_total_num_tokens its size;
// cache_hit_rate the radix cache's hit rate
// (telemetry/testdata/sglang-0.4-metrics-docs.txt).
var sglangMetrics = MetricNames{
	KVUsage:            []string{"sglang:token_usage"},
	Running:            []string{"sglang:num_running_reqs"},
	Waiting:            []string{"sglang:num_queue_reqs"},
	KVTokensUsed:       []string{"sglang:num_used_tokens"},
	KVTokensMax:        []string{"sglang:max_total_num_tokens"},
	PrefixCacheHitRate: []string{"sglang:cache_hit_rate"},
}
