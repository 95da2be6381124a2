package telemetry

import "github.com/servebench/servebench/backend"

// MetricNames lists, per quantity, the Prometheus metric names a server
// family has used for it across versions, newest first. The first name
// present in a scrape wins, so renames between versions are tolerated.
type MetricNames struct {
	// KVUsage is a gauge: fraction (0–1) of the KV cache in use.
	KVUsage []string
	// Preemptions is a counter of requests preempted (evicted from the KV
	// cache and recomputed or swapped) since the server started.
	Preemptions []string
	// Running is a gauge: requests being decoded now.
	Running []string
	// Waiting is a gauge: requests queued, not yet scheduled.
	Waiting []string
	// KVTokensUsed is a gauge: KV-cache tokens in use now.
	KVTokensUsed []string
	// KVTokensMax is a gauge: KV-cache capacity in tokens.
	KVTokensMax []string
	// CacheInfo is an info gauge (value 1) whose labels carry the KV-cache
	// settings: num_gpu_blocks, block_size, cache_dtype,
	// gpu_memory_utilization.
	CacheInfo []string
	// PrefixCacheQueries and PrefixCacheHits are counters of prompt tokens
	// looked up in the prefix cache and found there; their deltas over a
	// level give its hit rate.
	PrefixCacheQueries []string
	PrefixCacheHits    []string
	// PrefixCacheHitRate is a gauge of the hit rate (0–1) where a server
	// exports only that; negative values mean caching is off.
	PrefixCacheHitRate []string
}

// vLLM names: V1 (≥ 0.8) exports kv_cache_usage_perc; V0 exported
// gpu_cache_usage_perc. Both export num_preemptions_total (prometheus_client
// writes the counter with its _total suffix; the bare name is kept for
// exporters that strip it). Source: vLLM docs "Production Metrics" and
// vllm/v1/metrics/loggers.py; checked against the published pages in
// testdata/vllm-v1-metrics-*.txt and testdata/vllm-v0-metrics-aibrix.txt.
//
// Prefix caching: V1 counts prompt tokens queried and hit,
// prefix_cache_queries_total and prefix_cache_hits_total ("Prefix cache
// queries, in terms of number of queried tokens" in
// testdata/vllm-v1-metrics-opt125m-cpu.txt); V0 exported the block hit rate
// as the gauge gpu_prefix_cache_hit_rate (-1 with caching off,
// testdata/vllm-v0-metrics-aibrix.txt).
var vllmNames = MetricNames{
	KVUsage:            []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
	Preemptions:        []string{"vllm:num_preemptions_total", "vllm:num_preemptions"},
	Running:            []string{"vllm:num_requests_running"},
	Waiting:            []string{"vllm:num_requests_waiting"},
	CacheInfo:          []string{"vllm:cache_config_info"},
	PrefixCacheQueries: []string{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"},
	PrefixCacheHits:    []string{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits"},
	PrefixCacheHitRate: []string{"vllm:gpu_prefix_cache_hit_rate"},
}

// SGLang names (docs/references/production_metrics.md): token_usage is the
// fraction of the KV token pool in use; max_total_num_tokens its size;
// cache_hit_rate the radix cache's hit rate (testdata/sglang-0.4-metrics-docs.txt).
var sglangNames = MetricNames{
	KVUsage:            []string{"sglang:token_usage"},
	Running:            []string{"sglang:num_running_reqs"},
	Waiting:            []string{"sglang:num_queue_reqs"},
	KVTokensUsed:       []string{"sglang:num_used_tokens"},
	KVTokensMax:        []string{"sglang:max_total_num_tokens"},
	PrefixCacheHitRate: []string{"sglang:cache_hit_rate"},
}

// llama.cpp names (llama-server --metrics, tools/server/server.cpp): the KV
// metrics were removed in 2025 builds, so they are optional.
var llamacppNames = MetricNames{
	KVUsage:      []string{"llamacpp:kv_cache_usage_ratio"},
	Running:      []string{"llamacpp:requests_processing"},
	Waiting:      []string{"llamacpp:requests_deferred"},
	KVTokensUsed: []string{"llamacpp:kv_cache_tokens"},
}

// TGI names (text-generation-inference docs, reference/metrics):
// tgi_queue_size is the number of requests waiting, tgi_batch_current_size
// the size of the batch being decoded.
var tgiNames = MetricNames{
	Running: []string{"tgi_batch_current_size"},
	Waiting: []string{"tgi_queue_size"},
}

// NamesFor returns the metric table of a server family. Ollama exports no
// Prometheus metrics (ok is false). A generic OpenAI-compatible server may
// be any of the others, so its table is the union of all of them.
func NamesFor(k backend.Kind) (names MetricNames, ok bool) {
	switch k {
	case backend.VLLM:
		return vllmNames, true
	case backend.SGLang:
		return sglangNames, true
	case backend.LlamaCpp:
		return llamacppNames, true
	case backend.TGI:
		return tgiNames, true
	case backend.Ollama:
		return MetricNames{}, false
	default:
		return union(vllmNames, sglangNames, llamacppNames, tgiNames), true
	}
}

func union(tables ...MetricNames) MetricNames {
	var u MetricNames
	for _, t := range tables {
		u.KVUsage = append(u.KVUsage, t.KVUsage...)
		u.Preemptions = append(u.Preemptions, t.Preemptions...)
		u.Running = append(u.Running, t.Running...)
		u.Waiting = append(u.Waiting, t.Waiting...)
		u.KVTokensUsed = append(u.KVTokensUsed, t.KVTokensUsed...)
		u.KVTokensMax = append(u.KVTokensMax, t.KVTokensMax...)
		u.CacheInfo = append(u.CacheInfo, t.CacheInfo...)
		u.PrefixCacheQueries = append(u.PrefixCacheQueries, t.PrefixCacheQueries...)
		u.PrefixCacheHits = append(u.PrefixCacheHits, t.PrefixCacheHits...)
		u.PrefixCacheHitRate = append(u.PrefixCacheHitRate, t.PrefixCacheHitRate...)
	}
	return u
}
