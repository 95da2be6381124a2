package chart

import (
	"math"
	"testing"
)

// FuzzAxes (item 1): value axes take any values — huge, tiny,
// negative, infinite, NaN — and return a bounded number of finite ticks
// and a mapping that keeps every value inside the plot.
func FuzzAxes(f *testing.F) {
	f.Add(1e308, 1e308, 5.0, 0.0)
	f.Add(-1e308, 1e-300, 1.0, 100.0)
	f.Add(math.Inf(1), math.NaN(), -3.0, 0.0)
	f.Add(1e17, 1e17+16, 1e17+32, 0.0)
	f.Fuzz(func(t *testing.T, a, b, c, fixedMax float64) {
		ys := []float64{a, b, c}
		if fixedMax < 0 || math.IsNaN(fixedMax) || math.IsInf(fixedMax, 0) || fixedMax > 1e6 {
			fixedMax = 0
		}
		for name, axis := range map[string]func() (func(float64) float64, []float64){
			"linear": func() (func(float64) float64, []float64) { return linearAxis(ys, fixedMax, bottom, top) },
			"log":    func() (func(float64) float64, []float64) { return logYAxis(ys, bottom, top) },
		} {
			m, ticks := axis()
			if len(ticks) == 0 || len(ticks) > maxTicks+1 {
				t.Fatalf("%s axis of %v: %d ticks", name, ys, len(ticks))
			}
			for _, tk := range ticks {
				if math.IsNaN(tk) || math.IsInf(tk, 0) {
					t.Fatalf("%s axis of %v: tick %v", name, ys, tk)
				}
			}
			for _, v := range append(ys, ticks...) {
				if y := m(v); !(y >= top-1e-9 && y <= bottom+1e-9) {
					t.Fatalf("%s axis of %v maps %v to %v, outside [%v, %v]", name, ys, v, y, top, bottom)
				}
			}
		}
	})
}
