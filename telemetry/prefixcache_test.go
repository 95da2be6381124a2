package telemetry

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
)

// TestPrefixCacheMetricsOfPublishedPages reads the prefix-cache metrics of
// the published /metrics pages: vLLM V1's token counters, SGLang's hit-rate
// gauge, and V0's gauge at -1 (caching off, so no rate).
func TestPrefixCacheMetricsOfPublishedPages(t *testing.T) {
	tests := []struct {
		file          string
		kind          backend.Kind
		queries, hits *float64
		rate          *float64
	}{
		{"vllm-v1-metrics-opt125m-cpu.txt", backend.VLLM, ptr.To(27.0), ptr.To(0.0), nil},
		{"sglang-0.4-metrics-docs.txt", backend.SGLang, nil, nil, ptr.To(0.007507552643049313)},
		{"vllm-v0-metrics-aibrix.txt", backend.VLLM, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			names, _ := backend.MetricsFor(tt.kind)
			fams, err := ParseExposition(strings.NewReader(readTestdata(t, tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			s := Extract(fams, names)
			for _, c := range []struct {
				name      string
				got, want *float64
			}{{"queries", s.PrefixCacheQueries, tt.queries}, {"hits", s.PrefixCacheHits, tt.hits}, {"hit rate", s.PrefixCacheHitRate, tt.rate}} {
				if (c.got == nil) != (c.want == nil) || c.got != nil && *c.got != *c.want {
					t.Errorf("%s = %v, want %v", c.name, deref(c.got), deref(c.want))
				}
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPrefixCacheHitRateOverALevel: the counters' deltas over the level
// give the rate (a reset counts from zero); without counters the gauge's
// mean over the level's scrapes does; a level that queried nothing has
// none.
func TestPrefixCacheHitRateOverALevel(t *testing.T) {
	tests := []struct {
		name    string
		samples []Sample
		want    *float64
	}{
		{"counters", []Sample{
			{PrefixCacheQueries: ptr.To(1000.0), PrefixCacheHits: ptr.To(100.0)},
			{PrefixCacheQueries: ptr.To(1200.0), PrefixCacheHits: ptr.To(250.0)},
			{PrefixCacheQueries: ptr.To(1400.0), PrefixCacheHits: ptr.To(400.0)},
		}, ptr.To(0.75)},
		{"counter reset", []Sample{
			{PrefixCacheQueries: ptr.To(1000.0), PrefixCacheHits: ptr.To(900.0)},
			{PrefixCacheQueries: ptr.To(100.0), PrefixCacheHits: ptr.To(50.0)},
		}, ptr.To(0.5)},
		{"gauge", []Sample{{PrefixCacheHitRate: ptr.To(0.2)}, {PrefixCacheHitRate: ptr.To(0.4)}}, ptr.To(0.3)},
		{"nothing queried", []Sample{
			{PrefixCacheQueries: ptr.To(10.0), PrefixCacheHits: ptr.To(0.0)},
			{PrefixCacheQueries: ptr.To(10.0), PrefixCacheHits: ptr.To(0.0)},
		}, nil},
		{"read once", []Sample{{PrefixCacheQueries: ptr.To(10.0), PrefixCacheHits: ptr.To(5.0)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Accumulator
			for _, s := range tt.samples {
				a.Observe(s)
			}
			got := a.Summary().PrefixCacheHitRate
			if (got == nil) != (tt.want == nil) || got != nil && math.Abs(*got-*tt.want) > 1e-12 {
				t.Fatalf("hit rate %v, want %v", deref(got), deref(tt.want))
			}
		})
	}
}
