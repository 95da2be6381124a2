package stats

import "testing"

// TestLowBoundAboveMatchesRanks holds LowBoundAbove against the rank
// OneSidedCI reads: the lower bound X(l) lies above a threshold exactly
// when fewer than l values lie at or below it.
func TestLowBoundAboveMatchesRanks(t *testing.T) {
	for _, tc := range []struct {
		q, conf float64
	}{{0.95, 0.95}, {0.99, 0.95}, {0.5, 0.95}, {0.95, 0.9}, {0.9, 0.999}} {
		for _, n := range []int{1, 5, 59, 72, 200, 1000} {
			l, _, lowOK, _ := oneSidedRanks(n, tc.q, tc.conf)
			for atMost := 0; atMost <= n; atMost++ {
				want := lowOK && atMost < l
				if got := LowBoundAbove(n, atMost, tc.q, tc.conf); got != want {
					t.Fatalf("q %v conf %v n %d atMost %d: got %v, want %v (l %d)", tc.q, tc.conf, n, atMost, got, want, l)
				}
			}
		}
	}
}
