package chart

import (
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/slo"
)

// WithSLO draws each bound of an SLO on the chart of its figure as a
// threshold line named in the legend ("SLO: ttft_p95 ≤ 1500 ms"): TTFT
// p50/p95 on the TTFT chart, TPOT p50 on the TPOT chart, throughput_min on
// the throughput chart, and any other figure on its own chart where the
// set has one. Bounds on a fraction (error rate, goodput, a "%" figure)
// have no chart in their unit and are left out. charts is changed in
// place and returned.
func WithSLO(charts []Chart, bounds []slo.Bound) []Chart {
	for _, b := range bounds {
		f := b.Figure()
		if f == nil || f.Unit == "%" {
			continue
		}
		name := chartOf(f.Key)
		for i := range charts {
			if charts[i].Name == name && !batchOnly(charts[i], f.Key) {
				charts[i].Thresholds = append(charts[i].Thresholds, Threshold{Y: b.Value, Text: "SLO: " + b.String()})
			}
		}
	}
	return charts
}

// chartOf names the chart that draws figure k.
func chartOf(k document.Figure) string {
	switch k {
	case document.FigThroughput:
		return "throughput"
	case document.FigTTFTP50, document.FigTTFTP95:
		return "ttft"
	case document.FigTPOTP50:
		return "tpot"
	}
	return string(k)
}

// batchOnly reports whether a TPOT chart draws only batch means, which
// include prefill: a bound on TPOT p50 is not theirs to meet.
func batchOnly(c Chart, k document.Figure) bool {
	if k != document.FigTPOTP50 {
		return false
	}
	for _, sr := range c.Series {
		if !sr.Dashed {
			return false
		}
	}
	return true
}
