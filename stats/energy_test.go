package stats

import (
	"math"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// TestEnergyAndCost: 3600 J over 2000 output tokens in 10 s at 100 tok/s
// and a mean of 360 W is 1.8 J per token and 0.2778 tok/s per W; at
// $2/h the 10 s cost $0.005556, $2.778 per million tokens; at
// $0.30/kWh the 0.001 kWh cost $0.0003, $0.15 per million.
func TestEnergyAndCost(t *testing.T) {
	base := func() document.Level {
		return document.Level{OutputTokens: ptr.To(2000), ThroughputTokS: ptr.To(100.0), WallSeconds: ptr.To(10.0)}
	}
	l := base()
	MergeLevel(&l, &record.Observations{EnergyJ: ptr.To(3600.0), MeanPowerW: ptr.To(360.0), PeakPowerW: ptr.To(400.0), EnergyMethod: "m"})
	if *l.JoulesPerOutputToken != 1.8 || math.Abs(*l.TokSPerWatt-100.0/360) > 1e-12 || *l.PeakPowerW != 400 || l.EnergyMethod != "m" {
		t.Fatalf("level %+v", l)
	}
	for _, tc := range []struct {
		name            string
		perHour, perKWh float64
		energy          bool
		want            *float64
	}{
		{"per hour", 2, 0, false, ptr.To(2 * 10.0 / 3600 / 0.002)},
		{"per kWh", 0, 0.30, true, ptr.To(0.30 * 3600 / 3.6e6 / 0.002)},
		{"per kWh without energy", 0, 0.30, false, nil},
		{"no price", 0, 0, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := base()
			if tc.energy {
				l.EnergyJ = ptr.To(3600.0)
			}
			Cost(&l, tc.perHour, tc.perKWh)
			if (l.CostUSDPerMTok == nil) != (tc.want == nil) || tc.want != nil && math.Abs(*l.CostUSDPerMTok-*tc.want) > 1e-9 {
				t.Errorf("cost %v, want %v", l.CostUSDPerMTok, tc.want)
			}
		})
	}
}
