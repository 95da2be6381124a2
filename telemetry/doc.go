// Package telemetry watches a server and its GPU while servebench drives it:
// it scrapes the server's Prometheus /metrics (KV-cache usage, preemptions,
// queue depth, KV-cache settings) and samples GPU memory (NVML or
// nvidia-smi), one level at a time.
//
// Telemetry never sits on the request path: the scraper and the GPU sampler
// run on their own goroutines with their own HTTP client or child process,
// so a slow or failing /metrics or nvidia-smi never delays a benchmark
// request. Anything that cannot be observed stays null and becomes a
// warning (data in the report), never an error.
//
// Definitions, per level:
//   - PeakKVCacheUsage: the largest KV-cache usage fraction (0–1) seen in
//     any scrape from just before the level to just after it (vLLM
//     kv_cache_usage_perc / gpu_cache_usage_perc, SGLang token_usage,
//     llama.cpp kv_cache_usage_ratio). Several series (engines, ranks) are
//     combined by max.
//   - Preemptions: the increase of the server's preemption counter over the
//     level (sum of positive steps between consecutive scrapes; a counter
//     that goes down was reset and restarts from zero, as in Prometheus
//     rate()). Several series are summed.
//   - PeakRequestsRunning / PeakRequestsWaiting: the largest sum over series
//     of the running / waiting gauges seen in any scrape.
//   - Peak GPU memory: the largest device memory used (MiB) among samples
//     taken every interval during the level; "after" is the last sample,
//     taken when the level ends.
package telemetry
