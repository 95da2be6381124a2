package stats

// The faster paths of a level summary (the radix sort, the binomial CDF
// with its coefficients once, the paired order statistics) give the
// slower paths' results bit for bit.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedCopyMatchesSort: the radix sort gives the comparison sort's
// slice bit for bit, on samples of the shapes a level has (many equal
// gaps, spread latencies, negative values from a hand-written file), and
// falls back to it where −0 or NaN is present.
func TestSortedCopyMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name string
		gen  func(i int) float64
		n    int
	}{
		{"short", func(int) float64 { return rng.Float64() }, 10},
		{"repeated gaps", func(int) float64 { return float64(20_000_000 + rng.IntN(40)*1000) }, 5000},
		{"gaps over tokens", func(int) float64 { return float64(rng.IntN(1e8)) / float64(1+rng.IntN(7)) }, 4000},
		{"mixed signs", func(int) float64 { return rng.NormFloat64() * 1e6 }, 3000},
		{"all equal", func(int) float64 { return 42 }, 1000},
		{"with zeros", func(i int) float64 { return float64(i % 3) }, 1000},
		{"with minus zero", func(i int) float64 {
			if i%7 == 0 {
				return math.Copysign(0, -1)
			}
			return float64(i % 5)
		}, 1000},
		{"with NaN", func(i int) float64 {
			if i%11 == 0 {
				return math.NaN()
			}
			return rng.Float64()
		}, 1000},
		{"infinities", func(i int) float64 {
			if i%3 == 0 {
				return math.Inf(1 - 2*(i%2))
			}
			return float64(i)
		}, 900},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			xs := make([]float64, c.n)
			for i := range xs {
				xs[i] = c.gen(i)
			}
			orig := slices.Clone(xs)
			want := slices.Clone(xs)
			slices.Sort(want)
			got := sorted(xs)
			if len(got) != len(want) {
				t.Fatalf("len %d, want %d", len(got), len(want))
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("at %d: %v, want %v", i, got[i], want[i])
				}
			}
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(orig[i]) {
					t.Fatalf("the input changed at %d", i)
				}
			}
		})
	}
}

// TestBinomialCDFAtMatchesCDF: the bisection's CDF with its coefficients
// computed once is binomialCDF's, bit for bit.
func TestBinomialCDFAtMatchesCDF(t *testing.T) {
	for _, n := range []int{1, 2, 7, 72, 1110, 3167} {
		b := newBinomial(n)
		for _, p := range []float64{1e-9, 0.001, 0.025, 0.5, 0.93, 0.999, 1 - 1e-9} {
			cdf := binomialCDF(n, p)
			for _, k := range []int{0, 1, n / 2, n - 2, n - 1} {
				if k < 0 || k >= n {
					continue
				}
				if got, want := b.cdfAt(k, p), cdf[k]; math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("n %d p %v k %d: %v, want %v", n, p, k, got, want)
				}
			}
		}
	}
}

// BenchmarkSortedCopy sorts a level's inter-token gaps as a simulated
// search has them: a million whole nanoseconds between 20 and 80 ms, many
// equal (the tokens of one engine step).
func BenchmarkSortedCopy(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	steps := make([]float64, 20_000)
	for i := range steps {
		steps[i] = float64(20_000_000 + rng.IntN(60_000_000))
	}
	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = steps[rng.IntN(len(steps))]
	}
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			sorted(xs)
		}
	})
	b.Run("comparison", func(b *testing.B) {
		for b.Loop() {
			s := slices.Clone(xs)
			slices.Sort(s)
		}
	})
}

// TestAdjacentCounted: the two neighbouring values of a counted multiset
// are nthCounted's, from either end, on multisets with empty buckets,
// repeated values and a single bucket.
func TestAdjacentCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cases := []struct {
		name   string
		counts []int
	}{
		{"one bucket", []int{5}},
		{"two buckets", []int{1, 1}},
		{"gaps", []int{0, 3, 0, 0, 1, 0, 2, 0}},
		{"random", func() []int {
			c := make([]int, 200)
			for i := range c {
				if rng.IntN(3) == 0 {
					c[i] = rng.IntN(4)
				}
			}
			c[0]++
			return c
		}()},
	}
	for _, c := range cases {
		sorted := make([]float64, len(c.counts))
		total := 0
		for i, n := range c.counts {
			sorted[i] = float64(i) * 1.5
			total += n
		}
		for k := 0; k+1 < total; k++ {
			x, y := adjacentCounted(sorted, c.counts, total, k)
			if wx, wy := nthCounted(sorted, c.counts, total, k), nthCounted(sorted, c.counts, total, k+1); x != wx || y != wy {
				t.Errorf("%s: k %d: %v, %v; want %v, %v", c.name, k, x, y, wx, wy)
			}
		}
	}
}
