package hardware

import (
	"math"
	"testing"
)

// TestGEMMMeasured: every measured GEMM names a catalog entry and reaches
// a plausible share of its datasheet rate; the half-rate boards (not
// power-bound) reach more of it than the full-rate ones (which are), so
// the medians an unmeasured board takes differ as the measurements do.
func TestGEMMMeasured(t *testing.T) {
	for _, m := range gemmMeasured {
		g, ok := byName(m.board)
		if !ok {
			t.Errorf("measured GEMM for %q: no catalog entry of that name", m.board)
			continue
		}
		r, measured := g.TensorClockRatio()
		if !measured || r < 0.5 || r > 1.25 || g.GEMMSource() == "" {
			t.Errorf("%s: ratio %.3f (measured %v, source %q), want a measured ratio in [0.5, 1.25] with its page", g.Name, r, measured, g.GEMMSource())
		}
	}
	half, full := gemmMedians()
	if !(half > 1 && full < 0.85 && full > 0.6) {
		t.Errorf("medians: half-rate boards %.3f, full-rate %.3f; want above 1 and in (0.6, 0.85)", half, full)
	}
	for _, tc := range []struct {
		name     string
		want     float64
		measured bool
	}{
		{"RTX 4080", half, false},
		{"H100 NVL", full, false},
		{"H100 80GB", (789.24 + 783.66) / 2 / 989.4, true},
		{"Apple M4 Max", 1, false},
	} {
		g, err := Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if r, m := g.TensorClockRatio(); m != tc.measured || math.Abs(r-tc.want) > 1e-12 {
			t.Errorf("%s: ratio %.4f measured %v, want %.4f measured %v", tc.name, r, m, tc.want, tc.measured)
		}
	}
}

// TestSustainedTensorShare: GeForce boards keep their datasheet rate (the
// simulator's efficiencies were fitted on two of them), a measured
// full-rate board takes its GEMM ratio over the GeForce median, an
// unmeasured one its kind's median over it, and other vendors 1.
func TestSustainedTensorShare(t *testing.T) {
	half, full := gemmMedians()
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"RTX 5090", 1}, {"RTX 5070 Ti", 1},
		{"H100 80GB", (789.24 + 783.66) / 2 / 989.4 / half},
		{"H100 NVL", full / half},
		{"Instinct MI300X", 1},
	} {
		g, err := Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.SustainedTensorShare(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: share %.4f, want %.4f", tc.name, got, tc.want)
		}
	}
}
