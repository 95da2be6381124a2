//go:build unix

package cputime

import "testing"

// TestProcessGrows: spinning for a while shows as CPU time.
func TestProcessGrows(t *testing.T) {
	before := Process()
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	_ = x
	if after := Process(); after <= before {
		t.Errorf("CPU time %v then %v after spinning", before, after)
	}
}
