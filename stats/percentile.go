// Package stats turns per-request records into the numbers servebench
// reports. Every function is pure: no clock, no I/O. Inputs are in base
// units (nanoseconds, tokens); outputs carry their unit in their name.
package stats

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of xs, and false
// when xs is empty.
//
// Method: linear interpolation between closest ranks on the sorted sample
// (Hyndman & Fan type 7, the default of NumPy's percentile and of
// spreadsheet PERCENTILE.INC): the rank is h = (n−1)·p/100 and the result is
// x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). p50 of an even-sized sample is the
// mean of the middle two; p0 and p100 are the minimum and maximum. xs is not
// modified.
func Percentile(xs []float64, p float64) (float64, bool) {
	if len(xs) == 0 || math.IsNaN(p) {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentileSorted(s, p), true
}

// percentileSorted is Percentile on an already sorted, non-empty sample.
func percentileSorted(s []float64, p float64) float64 {
	p = min(max(p, 0), 100)
	h := float64(len(s)-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Mean returns the arithmetic mean of xs, and false when xs is empty.
func Mean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs)), true
}

// StdDev returns the sample standard deviation of xs (divisor n−1), and
// false when xs has fewer than two values.
func StdDev(xs []float64) (float64, bool) {
	if len(xs) < 2 {
		return 0, false
	}
	m, _ := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1)), true
}
