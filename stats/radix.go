package stats

import (
	"math"
	"math/bits"
	"slices"
)

// radixMin is the sample size from which sorted sorts by radix: below
// it a comparison sort is as fast.
const radixMin = 512

// sorted is a sorted copy of xs. A level's inter-token gaps run to
// millions of values (one per output token), and a comparison sort of them
// was most of a simulated capacity search's CPU; a least-significant-digit
// radix sort of the values' bits is linear and gives the same slice, bit
// for bit: values that compare equal have the same bits, except −0 and +0,
// whose order a comparison sort leaves open, and NaN, which it places by
// its own rule. A sample that holds either is sorted by comparison, as
// before.
func sorted(xs []float64) []float64 {
	if len(xs) < radixMin || !radixable(xs) {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s
	}
	return radixSorted(xs)
}

// radixable says xs holds neither NaN nor −0.
func radixable(xs []float64) bool {
	for _, x := range xs {
		if x != x || (x == 0 && math.Signbit(x)) {
			return false
		}
	}
	return true
}

// orderedKey maps a float (not NaN) to an unsigned key that sorts as the
// float does: a positive value's bits with the sign bit set, a negative
// value's bits all flipped.
func orderedKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// radixBits is the width of a radix pass's digit: 2,048 buckets, whose
// counts stay in the processor's cache.
const radixBits = 11

// radixSorted is xs sorted by the digits of their keys, least significant
// first, over only the bits in which the keys differ (a level's gaps, all
// whole nanoseconds of a narrow range, differ in some thirty: three
// passes); xs is left as it is.
func radixSorted(xs []float64) []float64 {
	k0 := orderedKey(xs[0])
	var diff uint64
	for _, x := range xs {
		diff |= orderedKey(x) ^ k0
	}
	if diff == 0 {
		return slices.Clone(xs) // every key the same
	}
	lo := bits.TrailingZeros64(diff)
	hi := 64 - bits.LeadingZeros64(diff)
	// src is xs, then the buffer the last pass wrote; the passes write
	// into two buffers by turns, made as they are first needed.
	src := xs
	var bufs [2][]float64
	var counts [1 << radixBits]int
	for pass, shift := 0, lo; shift < hi; pass, shift = pass+1, shift+radixBits {
		clear(counts[:])
		for _, x := range src {
			counts[(orderedKey(x)>>shift)&(1<<radixBits-1)]++
		}
		pos := 0
		for i, n := range counts {
			counts[i] = pos
			pos += n
		}
		dst := bufs[pass%2]
		if dst == nil {
			dst = make([]float64, len(xs))
			bufs[pass%2] = dst
		}
		for _, x := range src {
			d := (orderedKey(x) >> shift) & (1<<radixBits - 1)
			dst[counts[d]] = x
			counts[d]++
		}
		src = dst
	}
	return src
}
