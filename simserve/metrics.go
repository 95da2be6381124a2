package simserve

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// histogram is a Prometheus histogram: cumulative counts per upper bound.
type histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

// Bucket bounds, in seconds, as each server declares them. vLLM:
// vllm/v1/metrics/loggers.py (checked against
// telemetry/testdata/vllm-v1-metrics-opt125m-cpu.txt). SGLang:
// python/sglang/srt/metrics/collector.py (checked against
// sglang-0.4-metrics-docs.txt).
var (
	vllmTTFTBuckets  = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets   = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	vllmE2EBuckets   = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	sglangTTFTBucket = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 25.0, 30.0}
	sglangE2EBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0}
	sglangTPOTBucket = []float64{0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

// Histogram names in counters.hist.
const (
	hTTFT  = "ttft"
	hITL   = "itl"
	hTPOT  = "tpot"
	hE2E   = "e2e"
	hQueue = "queue"
)

func (c *counters) received() {
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
}

func (c *counters) admit() {
	c.mu.Lock()
	c.admitted++
	c.mu.Unlock()
}

func (c *counters) aborted() {
	c.mu.Lock()
	c.success["abort"]++
	c.mu.Unlock()
}

// finished records a request that generated all its tokens.
func (s *Server) finished(g *gen) {
	ttft := s.drv.wallAt(g.firstAt).Sub(g.arrived).Seconds()
	e2e := s.drv.wallAt(g.lastAt).Sub(g.arrived).Seconds()
	queue := seconds(g.schedAt - g.queuedAt)
	c := &s.ctr
	c.mu.Lock()
	defer c.mu.Unlock()
	c.success["length"]++
	c.promptToks += int64(g.prompt)
	c.genToks += int64(g.generated)
	c.promptSec += seconds(g.firstAt - g.schedAt)
	c.decodeSec += seconds(g.lastAt - g.firstAt)
	ttftB, itlB, e2eB, tpotB := vllmTTFTBuckets, vllmITLBuckets, vllmE2EBuckets, vllmITLBuckets
	if s.as == backend.SGLang {
		ttftB, e2eB, tpotB = sglangTTFTBucket, sglangE2EBuckets, sglangTPOTBucket
	}
	c.observe(hTTFT, ttftB, ttft)
	c.observe(hE2E, e2eB, e2e)
	c.observe(hQueue, vllmE2EBuckets, queue)
	for _, gap := range g.gaps {
		c.observe(hITL, itlB, gap)
	}
	if g.generated > 1 {
		c.observe(hTPOT, tpotB, (e2e-ttft)/float64(g.generated-1))
	}
}

// handleMetrics is GET /metrics: the personality's metric families (the
// names, HELP texts, types and labels of the fixtures in
// telemetry/testdata), from the engine's state now and what the server
// counted. With Options.NoMetrics it answers as llama-server without
// --metrics (501) or a server that hides them (404).
func (s *Server) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	if s.opts.NoMetrics {
		status := http.StatusNotFound
		if s.as == backend.LlamaCpp {
			status = http.StatusNotImplemented
		}
		s.apiError(w, status, "not_supported_error", "This server does not support metrics endpoint. Start it with `--metrics`")
		return
	}
	st, ok := s.drv.stats()
	if !ok {
		s.apiError(w, http.StatusServiceUnavailable, "unavailable", errStopped.Error())
		return
	}
	var x expo
	s.ctr.mu.Lock()
	if m := personalities[s.as].metrics; m != nil {
		m(s, &x, st)
	}
	s.ctr.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(x.b)
}

// expo writes Prometheus text exposition format 0.0.4.
type expo struct{ b []byte }

// label is one label pair.
type label struct{ name, value string }

// family writes a family's HELP (when help is not empty) and TYPE lines.
func (x *expo) family(name, help, typ string) {
	if help != "" {
		x.b = append(x.b, "# HELP "...)
		x.b = append(x.b, name...)
		x.b = append(x.b, ' ')
		x.b = append(x.b, strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help)...)
		x.b = append(x.b, '\n')
	}
	x.b = append(x.b, "# TYPE "...)
	x.b = append(x.b, name...)
	x.b = append(x.b, ' ')
	x.b = append(x.b, typ...)
	x.b = append(x.b, '\n')
}

// sample writes one sample.
func (x *expo) sample(name string, labels []label, v float64) {
	x.b = append(x.b, name...)
	if len(labels) > 0 {
		x.b = append(x.b, '{')
		for i, l := range labels {
			if i > 0 {
				x.b = append(x.b, ',')
			}
			x.b = append(x.b, l.name...)
			x.b = append(x.b, '=', '"')
			x.b = append(x.b, labelEscaper.Replace(l.value)...)
			x.b = append(x.b, '"')
		}
		x.b = append(x.b, '}')
	}
	x.b = append(x.b, ' ')
	x.b = promFloat(x.b, v)
	x.b = append(x.b, '\n')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// promFloat formats v as Python's prometheus_client does (1.0, 0.5,
// 1.7e+09), +Inf for infinity.
func promFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
		return append(b, ".0"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// with returns labels plus one more pair.
func with(labels []label, name, value string) []label {
	out := make([]label, 0, len(labels)+1)
	out = append(out, labels...)
	return append(out, label{name, value})
}

// gauge writes a one-sample gauge family.
func (x *expo) gauge(name, help string, labels []label, v float64) {
	x.family(name, help, "gauge")
	x.sample(name, labels, v)
}

// counter writes a counter family NAME_total and, as Python's
// prometheus_client does, its NAME_created gauge.
func (x *expo) counter(base, help string, labels []label, v float64, created float64) {
	x.family(base+"_total", help, "counter")
	x.sample(base+"_total", labels, v)
	x.family(base+"_created", help, "gauge")
	x.sample(base+"_created", labels, created)
}

// histogram writes a histogram family and its _created gauge.
func (x *expo) histogram(name, help string, labels []label, h *histogram, bounds []float64, created float64) {
	if h == nil {
		h = newHistogram(bounds)
	}
	x.family(name, help, "histogram")
	var cum uint64
	for i, ub := range h.bounds {
		cum += h.counts[i]
		x.sample(name+"_bucket", with(labels, "le", string(promFloat(nil, ub))), float64(cum))
	}
	cum += h.counts[len(h.bounds)]
	x.sample(name+"_bucket", with(labels, "le", "+Inf"), float64(cum))
	x.sample(name+"_count", labels, float64(h.n))
	x.sample(name+"_sum", labels, h.sum)
	if created > 0 {
		x.family(name+"_created", help, "gauge")
		x.sample(name+"_created", labels, created)
	}
}

// vllmMetrics writes vLLM V1's families (vllm/v1/metrics/loggers.py
// PrometheusStatLogger; telemetry/testdata/vllm-v1-metrics-*.txt), each
// labelled engine="0" and model_name.
func (s *Server) vllmMetrics(x *expo, st sim.Stats) {
	c := &s.ctr
	created := float64(s.born.UnixNano()) / 1e9
	lb := []label{{"engine", "0"}, {"model_name", s.name}}
	x.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", lb, float64(st.Running))
	x.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", lb, float64(st.Waiting))
	x.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", lb, st.KVUsage)
	x.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", lb, float64(st.Preemptions), created)
	x.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", lb, float64(c.promptToks), created)
	x.counter("vllm:generation_tokens", "Number of generation tokens processed.", lb, float64(st.Generated), created)
	const successHelp = "Count of successfully processed requests."
	x.family("vllm:request_success_total", successHelp, "counter")
	reasons := []string{"stop", "length", "abort", "error", "repetition"}
	for _, r := range reasons {
		x.sample("vllm:request_success_total", []label{{"engine", "0"}, {"finished_reason", r}, {"model_name", s.name}}, float64(c.success[r]))
	}
	x.family("vllm:request_success_created", successHelp, "gauge")
	for _, r := range reasons {
		x.sample("vllm:request_success_created", []label{{"engine", "0"}, {"finished_reason", r}, {"model_name", s.name}}, created)
	}
	x.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", lb, c.hist[hTTFT], vllmTTFTBuckets, created)
	x.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", lb, c.hist[hITL], vllmITLBuckets, created)
	x.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", lb, c.hist[hTPOT], vllmITLBuckets, created)
	x.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", lb, c.hist[hE2E], vllmE2EBuckets, created)
	x.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", lb, c.hist[hQueue], vllmE2EBuckets, created)
	srv := s.cfg.Server
	x.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", []label{
		{"_block_size_resolved", "True"}, {"block_size", strconv.Itoa(srv.BlockSize)}, {"cache_dtype", kvDtypeLabel(s.opts.Spec.KVDtype)},
		{"calculate_kv_scales", "False"}, {"enable_prefix_caching", pyBool(srv.PrefixCaching)}, {"engine", "0"},
		{"gpu_memory_utilization", strconv.FormatFloat(memFraction(s.opts.Spec.GPUMemoryUtilization, 0.9), 'g', -1, 64)},
		{"hash_block_size", "None"}, {"is_attention_free", "False"}, {"kv_cache_dtype_skip_layers", "[]"},
		{"kv_cache_memory_bytes", "None"}, {"kv_offloading_backend", "native"}, {"kv_offloading_size", "None"},
		{"kv_sharing_fast_prefill", "False"}, {"mamba_block_size", "None"}, {"mamba_cache_dtype", "auto"},
		{"mamba_cache_mode", "none"}, {"mamba_page_size_padded", "None"}, {"mamba_ssm_cache_dtype", "auto"},
		{"num_cpu_blocks", "None"}, {"num_gpu_blocks", strconv.Itoa(srv.KVBlocks)}, {"num_gpu_blocks_override", "None"},
		{"prefix_caching_hash_algo", "sha256"}, {"sliding_window", "None"}, {"user_specified_block_size", "False"},
		{"user_specified_mamba_block_size", "False"},
	}, 1)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// kvDtypeLabel is vLLM's cache_dtype for a --kv-dtype.
func kvDtypeLabel(d string) string {
	if d == "" {
		return "auto"
	}
	return strings.ToLower(d)
}

// sglangMetrics writes SGLang's families (python/sglang/srt/metrics/
// collector.py; telemetry/testdata/sglang-0.4-metrics-docs.txt), labelled
// model_name.
func (s *Server) sglangMetrics(x *expo, st sim.Stats) {
	c := &s.ctr
	lb := []label{{"model_name", s.name}}
	now := time.Now()
	if dt := now.Sub(c.lastAt).Seconds(); c.lastAt.IsZero() || dt >= 0.5 {
		if !c.lastAt.IsZero() {
			c.throughput = float64(st.Generated-c.lastGen) / dt
		}
		c.lastGen, c.lastAt = st.Generated, now
	}
	x.family("sglang:prompt_tokens_total", "Number of prefill tokens processed.", "counter")
	x.sample("sglang:prompt_tokens_total", lb, float64(c.promptToks))
	x.family("sglang:generation_tokens_total", "Number of generation tokens processed.", "counter")
	x.sample("sglang:generation_tokens_total", lb, float64(st.Generated))
	x.gauge("sglang:token_usage", "The token usage", lb, st.KVUsage)
	x.gauge("sglang:cache_hit_rate", "The cache hit rate", lb, 0)
	x.histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", lb, c.hist[hTTFT], sglangTTFTBucket, 0)
	x.histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", lb, c.hist[hE2E], sglangE2EBuckets, 0)
	x.histogram("sglang:time_per_output_token_seconds", "Histogram of time per output token in seconds.", lb, c.hist[hTPOT], sglangTPOTBucket, 0)
	x.gauge("sglang:num_running_reqs", "The number of running requests", lb, float64(st.Running))
	x.gauge("sglang:num_used_tokens", "The number of used tokens", lb, math.Round(st.KVUsage*float64(s.kvTokens())))
	x.gauge("sglang:gen_throughput", "The generate throughput (token/s)", lb, c.throughput)
	x.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue", lb, float64(st.Waiting))
}

// llamaMetrics writes llama-server's families (server.cpp handle_metrics
// at the commit of telemetry/testdata/llamacpp-c392e50-metrics-kv.txt,
// which still exported the KV gauges): no labels, HELP and TYPE for
// each, counters without the _total suffix convention.
func (s *Server) llamaMetrics(x *expo, st sim.Stats) {
	c := &s.ctr
	m := func(name, help, typ string, v float64) {
		x.family("llamacpp:"+name, help, typ)
		x.sample("llamacpp:"+name, nil, v)
	}
	busyPerDecode := 0.0
	if st.Steps > 0 {
		busyPerDecode = float64(st.Generated) / float64(st.Steps)
	}
	m("prompt_tokens_total", "Number of prompt tokens processed.", "counter", float64(c.promptToks))
	m("prompt_seconds_total", "Prompt process time", "counter", c.promptSec)
	m("tokens_predicted_total", "Number of generation tokens processed.", "counter", float64(c.genToks))
	m("tokens_predicted_seconds_total", "Predict process time", "counter", c.decodeSec)
	m("n_decode_total", "Total number of llama_decode() calls", "counter", float64(st.Steps))
	m("n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call", "counter", busyPerDecode)
	m("prompt_tokens_seconds", "Average prompt throughput in tokens/s.", "gauge", rate(float64(c.promptToks), c.promptSec))
	m("predicted_tokens_seconds", "Average generation throughput in tokens/s.", "gauge", rate(float64(c.genToks), c.decodeSec))
	m("kv_cache_usage_ratio", "KV-cache usage. 1 means 100 percent usage.", "gauge", st.KVUsage)
	m("kv_cache_tokens", "KV-cache tokens.", "gauge", math.Round(st.KVUsage*float64(s.kvTokens())))
	m("requests_processing", "Number of requests processing.", "gauge", float64(st.Running))
	m("requests_deferred", "Number of requests deferred.", "gauge", float64(st.Waiting))
}

func rate(n, sec float64) float64 {
	if sec <= 0 {
		return 0
	}
	return n / sec
}

// tgiMetrics writes TGI v2.2.0's families (telemetry/testdata/
// tgi-2.2.0-metrics.txt: metrics-exporter-prometheus, TYPE lines only, no
// HELP). tgi_batch_inference_count counts a prefill per request the
// scheduler admitted and a decode per engine step;
// tgi_batch_current_max_tokens is the KV tokens in use.
func (s *Server) tgiMetrics(x *expo, st sim.Stats) {
	c := &s.ctr
	x.family("tgi_request_count", "", "counter")
	x.sample("tgi_request_count", nil, float64(c.requests))
	x.family("tgi_request_success", "", "counter")
	x.sample("tgi_request_success", nil, float64(c.success["length"]))
	x.family("tgi_batch_inference_count", "", "counter")
	x.sample("tgi_batch_inference_count", []label{{"method", "prefill"}}, float64(c.admitted))
	x.sample("tgi_batch_inference_count", []label{{"method", "decode"}}, float64(st.Steps))
	x.family("tgi_batch_current_max_tokens", "", "gauge")
	x.sample("tgi_batch_current_max_tokens", nil, math.Round(st.KVUsage*float64(s.kvTokens())))
	x.family("tgi_batch_current_size", "", "gauge")
	x.sample("tgi_batch_current_size", nil, float64(st.Running))
	x.family("tgi_queue_size", "", "gauge")
	x.sample("tgi_queue_size", nil, float64(st.Waiting))
}
