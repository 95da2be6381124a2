package chart

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/slo"
)

// TestWithSLO: each bound is a threshold line on its figure's chart, named
// in the legend, and on no other chart; a bound on a fraction has no
// chart in its unit. The batch document's TPOT chart draws batch means,
// which include prefill, so TPOT p50's bound is not drawn on it.
func TestWithSLO(t *testing.T) {
	bounds, err := slo.Parse("ttft_p95=1.5s,tpot_p50=50ms,throughput_min=500,error_rate=0.01")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ttft": "SLO: ttft_p95 ≤ 1500 ms", "tpot": "SLO: tpot_p50 ≤ 50 ms", "throughput": "SLO: throughput ≥ 500 tok/s"}
	for _, c := range WithSLO(ForSet(loadSeed(t, "multi-backend-sweep.json")), bounds) {
		w, ok := want[c.Name]
		if !ok {
			if len(c.Thresholds) != 0 {
				t.Errorf("%s: thresholds %+v, want none", c.Name, c.Thresholds)
			}
			continue
		}
		if len(c.Thresholds) != 1 || c.Thresholds[0].Text != w {
			t.Errorf("%s: thresholds %+v, want one, %q", c.Name, c.Thresholds, w)
			continue
		}
		svg := string(c.SVG())
		if !strings.Contains(svg, thresholdColor) || !strings.Contains(svg, strings.ReplaceAll(w, "≥", "&#8805;")) && !strings.Contains(svg, w) {
			t.Errorf("%s: the SVG lacks the threshold line or its legend %q", c.Name, w)
		}
	}
	for _, c := range WithSLO(ForSet(loadSeed(t, "vllm-text-image-example.json")), bounds) {
		if c.Name == "tpot" && len(c.Thresholds) != 0 {
			t.Errorf("batch TPOT chart: thresholds %+v, want none", c.Thresholds)
		}
	}
}

// TestSLOLineInsideAxis: a bound far above the data still lies on the
// value axis, which widens to hold it.
func TestSLOLineInsideAxis(t *testing.T) {
	c := Chart{Name: "x", Series: []Series{{Name: "a", Color: "#000000", Points: []XY{{X: 1, Y: 10}, {X: 2, Y: 20}}}},
		Thresholds: []Threshold{{Y: 1000, Text: "SLO"}}}
	_, ys := c.domain()
	mapY, ticks := linearAxis(ys, 0, bottom, top)
	if y := mapY(1000); y <= top || ticks[len(ticks)-1] < 1000 {
		t.Errorf("threshold 1000 maps to y=%v (plot top %v), axis top %v: want it inside the axis", y, top, ticks[len(ticks)-1])
	}
}
