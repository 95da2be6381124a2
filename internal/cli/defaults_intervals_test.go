package cli

import (
	"testing"

	"github.com/servebench/servebench/stats"
)

// TestDefaultRequestsBoundAP95: a level's default counted requests are
// the fewest whose order statistics give a p95 a two-sided 95% interval,
// so a default table shows one; a p95's one-sided verdict needs fewer.
func TestDefaultRequestsBoundAP95(t *testing.T) {
	if want := stats.QuantileSampleSize(0.95, stats.DefaultConfidence); defaultRequests != want {
		t.Fatalf("default --requests %d, want %d (a p95's two-sided interval)", defaultRequests, want)
	}
	if one := stats.BoundSampleSize(0.95, stats.DefaultConfidence, true); one > defaultRequests {
		t.Fatalf("a p95's one-sided bound needs %d, more than the default %d", one, defaultRequests)
	}
}
