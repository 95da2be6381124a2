package find

import (
	"testing"

	"github.com/servebench/servebench/slo"
)

// TestSentence: a users answer reads as one sentence in people, its
// interval and the SLO in words; SIMULATED: first on the simulator; 0
// and the figure that broke when one person is too many.
func TestSentence(t *testing.T) {
	bounds, err := slo.Parse("ttft_p95=1s,tpot_p95=100ms")
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name      string
		a         Answer
		simulated bool
		want      string
	}{
		{"answer", Answer{By: slo.ByUsers, Bounds: bounds, Load: f(18), LoadCILow: f(16), LoadCIHigh: f(20), Stop: Resolved}, false,
			"RTX 4090, qwen2.5-14b AWQ, vLLM: 18 chat users (16–20) at TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms"},
		{"simulated", Answer{By: slo.ByUsers, Bounds: bounds, Load: f(18), LoadCILow: f(16), LoadCIHigh: f(20), Stop: Resolved}, true,
			"SIMULATED: RTX 4090, qwen2.5-14b AWQ, vLLM: 18 chat users (16–20) at TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms"},
		{"none", Answer{By: slo.ByUsers, Bounds: bounds, FirstFail: f(1), FailedBy: []slo.Break{{Bound: bounds[0], Value: f(1500)}}, Stop: FirstLoadFails}, false,
			"RTX 4090, qwen2.5-14b AWQ, vLLM: 0 chat users at TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms: one breaks it (" + slo.Break{Bound: bounds[0], Value: f(1500)}.String() + ")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Sentence("RTX 4090, qwen2.5-14b AWQ, vLLM", "chat", tc.simulated); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
