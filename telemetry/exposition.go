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

	"github.com/servebench/servebench/backend"
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

// Sample is what one scrape says, mapped through a backend.MetricNames table. A nil
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
	// Dropped are the values outside their quantity's range (a negative
	// gauge, a usage above 1, a block count whose capacity no GPU has):
	// they were left out of the fields above (a negative
	// kv_cache_usage_perc became a peak of −3, a huge num_gpu_blocks ×
	// block_size wrapped to a capacity of 1 token).
	Dropped []Dropped
}

// Dropped is one value a scrape carried outside its range.
type Dropped struct {
	// Metric is the metric, or metric and label, e.g.
	// "vllm:kv_cache_usage_perc" or "vllm:cache_config_info num_gpu_blocks".
	Metric string
	// Value is the value as the server wrote it.
	Value string
	// Range is the range it must be in, in words.
	Range string
}

// String is "METRIC = VALUE is outside RANGE".
func (d Dropped) String() string {
	return fmt.Sprintf("%s = %s is outside %s", d.Metric, d.Value, d.Range)
}

// empty reports whether s carries nothing, not even a dropped value.
func (s *Sample) empty() bool {
	return s.KVUsage == nil && s.Preemptions == nil && s.Running == nil && s.Waiting == nil &&
		s.KVTokensUsed == nil && s.KVTokensMax == nil && s.Cache.empty() && len(s.Dropped) == 0
}

// valueRange is the range a quantity's value must be in: finite, within
// [min, max].
type valueRange struct {
	min, max float64
	words    string
}

// in reports whether v is within r.
func (r valueRange) in(v float64) bool { return v >= r.min && v <= r.max }

// The ranges of the quantities a Sample carries. Counts and gauges of
// requests and tokens are at least 0 and at most 2^50 (beyond any server,
// exactly representable); usage is a fraction.
var (
	fractionRange = valueRange{0, 1, "0–1 (a fraction)"}
	countRange    = valueRange{0, 1 << 50, "0–2^50 (a count)"}
)

// Cache-configuration label ranges: the capacity Blocks × BlockSize is
// then at most 2^47 tokens, far from overflowing int.
const (
	maxCacheBlocks    = 1 << 31
	maxCacheBlockSize = 1 << 16
)

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

// Extract maps parsed families to a Sample through names. A value
// outside its quantity's range is left out and listed in Dropped.
func Extract(fams Families, names backend.MetricNames) Sample {
	var s Sample
	s.KVUsage = combine(fams, names.KVUsage, math.Max, fractionRange, &s.Dropped)
	s.Preemptions = combine(fams, names.Preemptions, sum, countRange, &s.Dropped)
	s.Running = combine(fams, names.Running, sum, countRange, &s.Dropped)
	s.Waiting = combine(fams, names.Waiting, sum, countRange, &s.Dropped)
	s.KVTokensUsed = combine(fams, names.KVTokensUsed, sum, countRange, &s.Dropped)
	s.KVTokensMax = combine(fams, names.KVTokensMax, sum, countRange, &s.Dropped)
	s.Cache = cacheConfig(fams, names.CacheInfo, &s.Dropped)
	s.PrefixCacheQueries = combine(fams, names.PrefixCacheQueries, sum, countRange, &s.Dropped)
	s.PrefixCacheHits = combine(fams, names.PrefixCacheHits, sum, countRange, &s.Dropped)
	s.PrefixCacheHitRate = hitRate(fams, names.PrefixCacheHitRate)
	return s
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

// combine folds the values of all series of the first present name with
// op; nil when no name is present or no value is usable. A value that is
// not finite is skipped; one outside r is skipped and added to dropped.
// A sum that leaves r (many series near the top) is dropped too.
func combine(fams Families, names []string, op func(a, b float64) float64, r valueRange, dropped *[]Dropped) *float64 {
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
		if !r.in(v) {
			*dropped = append(*dropped, Dropped{Metric: mf.GetName(), Value: strconv.FormatFloat(v, 'g', -1, 64), Range: r.words})
			continue
		}
		if acc == nil {
			acc = &v
			continue
		}
		x := op(*acc, v)
		acc = &x
	}
	if acc != nil && !r.in(*acc) {
		*dropped = append(*dropped, Dropped{Metric: mf.GetName() + " (all series)", Value: strconv.FormatFloat(*acc, 'g', -1, 64), Range: r.words})
		return nil
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
// info metric. A label value outside its range is left out (nil) and
// added to dropped; "None" and an empty value are simply absent.
func cacheConfig(fams Families, names []string, dropped *[]Dropped) CacheConfig {
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
	label := func(name string, max int) *int {
		s := strings.TrimSpace(labels[name])
		if s == "" || s == "None" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > int64(max) {
			*dropped = append(*dropped, Dropped{Metric: mf.GetName() + " " + name, Value: strconv.Quote(truncate(s, 40)), Range: "1–" + strconv.Itoa(max)})
			return nil
		}
		v := int(n)
		return &v
	}
	c.Blocks = label("num_gpu_blocks", maxCacheBlocks)
	c.BlockSize = label("block_size", maxCacheBlockSize)
	if s := strings.TrimSpace(labels["gpu_memory_utilization"]); s != "" && s != "None" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f <= 1 {
			c.GPUMemoryUtilization = &f
		} else {
			*dropped = append(*dropped, Dropped{Metric: mf.GetName() + " gpu_memory_utilization", Value: strconv.Quote(truncate(s, 40)), Range: "(0, 1]"})
		}
	}
	return c
}

// Tokens is the KV-cache capacity Blocks × BlockSize; ok is false when
// either is unknown. Both are bounded when read (at most 2^31 blocks of
// 2^16 tokens), so the product cannot overflow.
func (c CacheConfig) Tokens() (tokens int, ok bool) {
	if c.Blocks == nil || c.BlockSize == nil {
		return 0, false
	}
	return *c.Blocks * *c.BlockSize, true
}

// truncate shortens s to n bytes for a warning.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
