package telemetry

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is one parsed scrape: metric families by name.
type Families map[string]*dto.MetricFamily

// ParseExposition parses Prometheus text exposition format (version 0.0.4)
// with expfmt. Names are validated as UTF-8, which accepts the colons of
// recording-rule style names (vllm:kv_cache_usage_perc). On a syntax error
// it returns the families read before the error together with the error,
// so one bad line does not hide the rest of a scrape.
func ParseExposition(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Families(fams), fmt.Errorf("parse metrics: %w", err)
	}
	return Families(fams), nil
}

// Sample is what one scrape says, mapped through a MetricNames table. A nil
// field means the scrape did not carry that quantity.
type Sample struct {
	// KVUsage is the KV-cache usage fraction (0–1), max over series.
	KVUsage *float64
	// Preemptions is the preemption counter, summed over series.
	Preemptions *float64
	// Running and Waiting are request gauges, summed over series.
	Running *float64
	Waiting *float64
	// KVTokensUsed and KVTokensMax are KV-cache token gauges, summed over
	// series.
	KVTokensUsed *float64
	KVTokensMax  *float64
	// Cache holds the KV-cache settings from an info metric's labels.
	Cache CacheConfig
	// PrefixCacheQueries and PrefixCacheHits are the prefix cache's
	// counters (tokens queried, tokens hit), summed over series;
	// PrefixCacheHitRate its hit-rate gauge, averaged over series, nil
	// when negative (caching off).
	PrefixCacheQueries *float64
	PrefixCacheHits    *float64
	PrefixCacheHitRate *float64
}

// CacheConfig is the KV-cache configuration a server exports as labels of
// an info metric (vLLM cache_config_info). Nil fields were absent or not a
// number ("None").
type CacheConfig struct {
	// Dtype is cache_dtype: "auto", "fp8", ...
	Dtype *string
	// Blocks is num_gpu_blocks: KV-cache blocks on the GPU.
	Blocks *int
	// BlockSize is block_size: tokens per block.
	BlockSize *int
	// GPUMemoryUtilization is the fraction of GPU memory the server may use.
	GPUMemoryUtilization *float64
}

// empty reports whether c carries nothing.
func (c CacheConfig) empty() bool {
	return c.Dtype == nil && c.Blocks == nil && c.BlockSize == nil && c.GPUMemoryUtilization == nil
}

// Extract maps parsed families to a Sample through names.
func Extract(fams Families, names MetricNames) Sample {
	return Sample{
		KVUsage:      combine(fams, names.KVUsage, math.Max),
		Preemptions:  combine(fams, names.Preemptions, sum),
		Running:      combine(fams, names.Running, sum),
		Waiting:      combine(fams, names.Waiting, sum),
		KVTokensUsed: combine(fams, names.KVTokensUsed, sum),
		KVTokensMax:  combine(fams, names.KVTokensMax, sum),
		Cache:        cacheConfig(fams, names.CacheInfo),

		PrefixCacheQueries: combine(fams, names.PrefixCacheQueries, sum),
		PrefixCacheHits:    combine(fams, names.PrefixCacheHits, sum),
		PrefixCacheHitRate: hitRate(fams, names.PrefixCacheHitRate),
	}
}

// hitRate is the mean of a hit-rate gauge's series in [0, 1]; nil when
// none is (a negative value means the cache is off).
func hitRate(fams Families, names []string) *float64 {
	mf := first(fams, names)
	if mf == nil {
		return nil
	}
	var total float64
	n := 0
	for _, m := range mf.GetMetric() {
		if v, ok := scalar(m); ok && v >= 0 && v <= 1 {
			total += v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	mean := total / float64(n)
	return &mean
}

func sum(a, b float64) float64 { return a + b }

// first returns the first family of names present with at least one metric.
func first(fams Families, names []string) *dto.MetricFamily {
	for _, n := range names {
		if mf, ok := fams[n]; ok && len(mf.GetMetric()) > 0 {
			return mf
		}
	}
	return nil
}

// combine folds the finite values of all series of the first present name
// with op; nil when no name is present or no value is finite.
func combine(fams Families, names []string, op func(a, b float64) float64) *float64 {
	mf := first(fams, names)
	if mf == nil {
		return nil
	}
	var acc *float64
	for _, m := range mf.GetMetric() {
		v, ok := scalar(m)
		if !ok {
			continue
		}
		if acc == nil {
			acc = &v
			continue
		}
		r := op(*acc, v)
		acc = &r
	}
	return acc
}

// scalar returns a gauge, counter or untyped metric's finite value.
func scalar(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// cacheConfig reads the labels of the first series of the first present
// info metric.
func cacheConfig(fams Families, names []string) CacheConfig {
	mf := first(fams, names)
	if mf == nil {
		return CacheConfig{}
	}
	labels := map[string]string{}
	for _, lp := range mf.GetMetric()[0].GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	var c CacheConfig
	if s := strings.TrimSpace(labels["cache_dtype"]); s != "" && s != "None" {
		c.Dtype = &s
	}
	c.Blocks = positiveInt(labels["num_gpu_blocks"])
	c.BlockSize = positiveInt(labels["block_size"])
	if f, err := strconv.ParseFloat(strings.TrimSpace(labels["gpu_memory_utilization"]), 64); err == nil && f > 0 && f <= 1 {
		c.GPUMemoryUtilization = &f
	}
	return c
}

// positiveInt parses s as an integer > 0, or returns nil ("None", "", junk).
func positiveInt(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return nil
	}
	return &n
}
