package load

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestResidual: people start at the forward recurrence time of their think
// law, whose mean is E[T²]/2E[T]: half the think for a constant one (a
// uniform start within it), the whole mean for an exponential one (memory-
// less: a person met at a random moment still has a full mean to think).
// A uniform start within one mean think, as before, has mean T/2 for both
// and so under-fills the first cycle when thinks vary.
func TestResidual(t *testing.T) {
	const mean = 100 * time.Second
	tests := []struct {
		name string
		draw func(*rand.Rand) time.Duration
		want time.Duration // E[T²]/2E[T]
	}{
		{"constant", func(*rand.Rand) time.Duration { return mean }, mean / 2},
		{"exponential", func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(mean)) }, mean},
		{"uniform 0..2 mean", func(r *rand.Rand) time.Duration { return time.Duration(r.Float64() * 2 * float64(mean)) }, 2 * mean / 3},
		{"none", func(*rand.Rand) time.Duration { return 0 }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			const n = 20000
			var sum float64
			for range n {
				d := residual(tc.draw, r)
				if d < 0 {
					t.Fatalf("residual %v < 0", d)
				}
				sum += d.Seconds()
			}
			got := sum / n
			// 16 draws size-bias nearly exactly; allow 5% and sampling error.
			if tol := 0.05*tc.want.Seconds() + 0.01; math.Abs(got-tc.want.Seconds()) > tol {
				t.Errorf("mean residual %.2f s, want %.2f s ± %.2f", got, tc.want.Seconds(), tol)
			}
		})
	}
}

// TestCountTarget: a users level counts Requests turns, or one per person
// (about one mean cycle) when there are more people.
func TestCountTarget(t *testing.T) {
	tests := []struct {
		people, requests, want int
	}{
		{1, 72, 72},
		{72, 72, 72},
		{512, 72, 512},
		{1024, 2000, 2000},
	}
	for _, tc := range tests {
		if got := countTarget(Level{Concurrency: tc.people, Requests: tc.requests}); got != tc.want {
			t.Errorf("%d people, %d requests: count %d, want %d", tc.people, tc.requests, got, tc.want)
		}
	}
}
