package stats

import "testing"

// TestLowBoundAboveMatchesRanks holds LowBoundAbove, asked of counts,
// against OneSidedCI read on a sample of them: atMost values at 0 and the
// rest at 2, against a threshold of 1.
func TestLowBoundAboveMatchesRanks(t *testing.T) {
	for _, tc := range []struct {
		q, conf float64
	}{{0.95, 0.95}, {0.99, 0.95}, {0.5, 0.95}, {0.95, 0.9}, {0.9, 0.999}} {
		for _, n := range []int{1, 5, 59, 72, 200, 1000} {
			for atMost := 0; atMost <= n; atMost++ {
				s := make([]float64, n)
				for i := atMost; i < n; i++ {
					s[i] = 2
				}
				low := OneSidedCI(s, 100*tc.q, tc.conf).Low
				want := low != nil && *low > 1
				if got := LowBoundAbove(n, atMost, tc.q, tc.conf); got != want {
					t.Fatalf("q %v conf %v n %d atMost %d: got %v, want %v (low %v)", tc.q, tc.conf, n, atMost, got, want, low)
				}
			}
		}
	}
}
