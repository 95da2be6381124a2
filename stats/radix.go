package stats

import (
	"math"
	"slices"
)

// radixMin is the sample size from which sortedCopy sorts by radix: below
// it a comparison sort is as fast.
const radixMin = 512

// sortedCopy is a sorted copy of xs. A level's inter-token gaps run to
// millions of values (one per output token), and a comparison sort of them
// was most of a simulated capacity search's CPU; a least-significant-digit
// radix sort of the values' bits is linear and gives the same slice, bit
// for bit: values that compare equal have the same bits, except −0 and +0,
// whose order a comparison sort leaves open, and NaN, which it places by
// its own rule. A sample that holds either is sorted by comparison, as
// before.
func sortedCopy(xs []float64) []float64 {
	if len(xs) < radixMin {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s
	}
	keys := make([]uint64, len(xs))
	for i, x := range xs {
		b := math.Float64bits(x)
		if x != x || (x == 0 && b != 0) {
			s := slices.Clone(xs)
			slices.Sort(s)
			return s
		}
		keys[i] = orderedKey(b)
	}
	keys = radixSort(keys)
	out := make([]float64, len(keys))
	for i, k := range keys {
		out[i] = math.Float64frombits(fromOrderedKey(k))
	}
	return out
}

// orderedKey maps a float's bits (not NaN) to an unsigned key that sorts
// as the float does: a positive value's sign bit set, a negative value's
// bits all flipped.
func orderedKey(b uint64) uint64 {
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// fromOrderedKey inverts orderedKey.
func fromOrderedKey(k uint64) uint64 {
	if k>>63 != 0 {
		return k &^ (1 << 63)
	}
	return ^k
}

// radixSort sorts keys by bytes, least significant first, skipping the
// bytes that all keys share; it returns the sorted slice (keys or a
// buffer of the same length).
func radixSort(keys []uint64) []uint64 {
	var counts [8][256]int
	for _, k := range keys {
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	buf := make([]uint64, len(keys))
	src, dst := keys, buf
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0]>>(8*d))] == len(src) {
			continue // every key has this byte
		}
		pos := 0
		for i, n := range c {
			c[i] = pos
			pos += n
		}
		shift := uint(8 * d)
		for _, k := range src {
			b := byte(k >> shift)
			dst[c[b]] = k
			c[b]++
		}
		src, dst = dst, src
	}
	return src
}
