package stats

import (
	"math"
	"math/rand/v2"

	"github.com/servebench/servebench/internal/ptr"
)

// Confidence intervals (docs/metrics.md, "Confidence intervals").
//
// Percentiles get distribution-free intervals from order statistics: the
// number of a sample's n values below the true q-quantile is Binomial(n,
// q), so a pair of order statistics brackets the quantile with a
// probability that the binomial law gives exactly, whatever the latency
// distribution. Proportions (goodput's fraction) get Clopper–Pearson
// intervals from the same law. Throughput, a ratio of sums, gets a seeded
// percentile bootstrap, so that the same records always give the same
// interval.

// DefaultConfidence is the confidence of the intervals when none is given.
const DefaultConfidence = 0.95

// BootstrapResamples is the number of bootstrap resamples per interval.
const BootstrapResamples = 1000

// BootstrapSeed seeds every bootstrap; the level's key is mixed in, so
// levels draw different resamples but a level always draws the same ones.
const BootstrapSeed = 0x5eb0

// Interval is a confidence interval. A nil end could not be bounded at the
// confidence asked: too few samples (a p99 of 50 requests has no upper
// bound at 95%).
type Interval struct {
	Low, High *float64
}

// Contains reports whether v lies in the interval; an unbounded end
// contains everything on its side.
func (iv Interval) Contains(v float64) bool {
	return (iv.Low == nil || *iv.Low <= v) && (iv.High == nil || v <= *iv.High)
}

// scaled returns the interval with both ends multiplied by f.
func (iv Interval) scaled(f float64) Interval {
	mul := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p * f
		return &v
	}
	return Interval{mul(iv.Low), mul(iv.High)}
}

// hull is the smallest interval holding both; an unbounded end of either
// stays unbounded.
func hull(a, b Interval) Interval {
	lo := func(x, y *float64) *float64 {
		if x == nil || y == nil {
			return nil
		}
		return ptr.To(min(*x, *y))
	}
	hi := func(x, y *float64) *float64 {
		if x == nil || y == nil {
			return nil
		}
		return ptr.To(max(*x, *y))
	}
	return Interval{lo(a.Low, b.Low), hi(a.High, b.High)}
}

// QuantileRanks returns the 1-based ranks l ≤ u of the order statistics
// X(l), X(u) of a sample of n that bracket the q-quantile (0 < q < 1) with
// probability at least confidence: l is the largest rank with
// P(B < l) ≤ α/2 and u the smallest with P(B < u) ≥ 1 − α/2, where
// B ~ Binomial(n, q) counts the values below the quantile and α =
// 1 − confidence. ok reports whether each end exists: lowOK is false when
// even X(1) is above the quantile too often (l would be 0), highOK when
// even X(n) is below it too often (u would be n + 1).
func QuantileRanks(n int, q, confidence float64) (l, u int, lowOK, highOK bool) {
	if n < 1 || !(q > 0 && q < 1) {
		return 0, 0, false, false
	}
	alpha := 1 - confidence
	// cdf[k] = P(B ≤ k). The rank-r order statistic lies above the
	// quantile iff fewer than r values lie below it, so
	// P(X(r) > ξ) = P(B < r) = cdf[r−1], and P(X(r) < ξ) = 1 − cdf[r−1].
	cdf := binomialCDF(n, q)
	l = 0
	for r := 1; r <= n; r++ {
		// P(X(r) > ξ) = P(B < r) = cdf[r−1].
		if cdf[r-1] <= alpha/2 {
			l = r
		} else {
			break
		}
	}
	u = n + 1
	for r := 1; r <= n; r++ {
		if cdf[r-1] >= 1-alpha/2 {
			u = r
			break
		}
	}
	return l, u, l >= 1, u <= n
}

// QuantileSampleSize is the fewest values whose order statistics bound
// the q-quantile on both sides at confidence (QuantileRanks' lowOK and
// highOK): 72 for a p95 and 368 for a p99 at 95%. 0 for q outside
// (0, 1) or beyond 100,000 values.
func QuantileSampleSize(q, confidence float64) int {
	if !(q > 0 && q < 1) {
		return 0
	}
	bounded := func(n int) bool {
		_, _, lowOK, highOK := QuantileRanks(n, q, confidence)
		return lowOK && highOK
	}
	const most = 100_000
	if !bounded(most) {
		return 0
	}
	// More values only widen the choice of ranks, so the first n that
	// bounds it is found by bisection.
	lo, hi := 0, most
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; bounded(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// binomialCDF returns P(B ≤ k) for k = 0..n, B ~ Binomial(n, q).
func binomialCDF(n int, q float64) []float64 {
	return newBinomial(n).cdf(q)
}

// QuantileCI is the order-statistic interval of the p-th percentile
// (0 < p < 100) of the sorted sample s at confidence (see QuantileRanks).
// It assumes the values are independent draws of one distribution.
func QuantileCI(s []float64, p, confidence float64) Interval {
	l, u, lowOK, highOK := QuantileRanks(len(s), p/100, confidence)
	var iv Interval
	if lowOK {
		iv.Low = ptr.To(s[l-1])
	}
	if highOK {
		iv.High = ptr.To(s[u-1])
	}
	return iv
}

// ProportionCI is the Clopper–Pearson interval of a proportion of k
// successes in n trials at confidence: the success probabilities p for
// which P(B ≥ k | p) and P(B ≤ k | p) are both above α/2. It is exact (its
// coverage is at least confidence for every p); nil ends for n = 0.
func ProportionCI(k, n int, confidence float64) Interval {
	if n <= 0 || k < 0 || k > n {
		return Interval{}
	}
	alpha := 1 - confidence
	lo, hi := 0.0, 1.0
	b := newBinomial(n)
	if k > 0 {
		// P(B ≥ k | p) rises with p: the lowest p where it reaches α/2.
		lo = bisect(func(p float64) bool { return 1-b.cdfAt(k-1, p) >= alpha/2 })
	}
	if k < n {
		// P(B ≤ k | p) falls with p: the highest p where it is still α/2.
		hi = bisect(func(p float64) bool { return b.cdfAt(k, p) < alpha/2 })
	}
	return Interval{ptr.To(lo), ptr.To(hi)}
}

// bisect returns the smallest p in [0, 1] at which the monotone test turns
// true, to 1e-9.
func bisect(test func(float64) bool) float64 {
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if test(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// binomial is Binomial(n, ·) with the log binomial coefficients
// ln C(n, j) of its terms computed once: a Clopper–Pearson bisection
// evaluates the CDF at some sixty p, and the three log-gammas a term were
// most of its cost.
type binomial struct {
	n int
	// logC[j] is ln Γ(n+1) − ln Γ(j+1) − ln Γ(n−j+1).
	logC []float64
}

func newBinomial(n int) binomial {
	b := binomial{n: n, logC: make([]float64, n+1)}
	ln1, _ := math.Lgamma(float64(n + 1))
	for j := range b.logC {
		lj, _ := math.Lgamma(float64(j + 1))
		lnj, _ := math.Lgamma(float64(n - j + 1))
		b.logC[j] = ln1 - lj - lnj
	}
	return b
}

// cdf is P(B ≤ k) for k = 0..n, B ~ Binomial(n, p): the terms summed
// from j = 0 up.
func (b binomial) cdf(p float64) []float64 {
	out := make([]float64, b.n+1)
	lq, lp := math.Log(p), math.Log1p(-p)
	sum := 0.0
	for j, c := range b.logC {
		sum += b.term(j, c, lq, lp)
		out[j] = min(sum, 1)
	}
	return out
}

// cdfAt is P(B ≤ k) for B ~ Binomial(n, p): cdf(p)[k], the same terms
// summed in the same order, without the terms above k.
func (b binomial) cdfAt(k int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= b.n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	lq, lp := math.Log(p), math.Log1p(-p)
	sum := 0.0
	for j, c := range b.logC[:k+1] {
		sum += b.term(j, c, lq, lp)
	}
	return min(sum, 1)
}

// term is P(B = j) from its log coefficient c = ln C(n, j) and the logs
// of p and 1 − p.
func (b binomial) term(j int, c, lq, lp float64) float64 {
	return math.Exp(c + float64(j)*lq + float64(b.n-j)*lp)
}

// newRNG is the generator of a seeded bootstrap.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// PercentileInterval is the percentile-bootstrap interval of the sorted
// bootstrap replicates at confidence: their α/2 and 1 − α/2 quantiles.
// Nil ends for fewer than two replicates.
func PercentileInterval(reps []float64, confidence float64) Interval {
	if len(reps) < 2 {
		return Interval{}
	}
	alpha := 1 - confidence
	return Interval{ptr.To(percentileSorted(reps, 100*alpha/2)), ptr.To(percentileSorted(reps, 100*(1-alpha/2)))}
}

// oneSidedRanks returns the ranks of the order statistics that bound the
// q-quantile of a sample of n on one side each at confidence: X(l) lies
// at or below the quantile with probability at least confidence, and
// X(u) at or above it. It is QuantileRanks at 2·confidence − 1, whose α/2
// a side is the one-sided α: the bounds an SLO verdict rests on (a bound
// holds when the upper one is within it, breaks when the lower one is
// beyond it), as a one-sided question needs only one tail.
func oneSidedRanks(n int, q, confidence float64) (l, u int, lowOK, highOK bool) {
	return QuantileRanks(n, q, 2*confidence-1)
}

// OneSidedCI is the pair of one-sided bounds of the p-th percentile of
// the sorted sample s at confidence (oneSidedRanks). Read each end on its
// own: together they are the two-sided interval at 2·confidence − 1.
func OneSidedCI(s []float64, p, confidence float64) Interval {
	return QuantileCI(s, p, 2*confidence-1)
}

// BoundSampleSize is the fewest values whose order statistics give the
// q-quantile a one-sided bound at confidence: an upper bound (upper)
// needs X(n) to lie above the quantile with that confidence, 1 − qⁿ ≥
// confidence, and a lower bound needs 1 − (1 − q)ⁿ ≥ confidence. At 95%:
// 59 values for a p95's upper bound, 299 for a p99's, 5 for a p50's.
// 0 for q or confidence outside (0, 1).
func BoundSampleSize(q, confidence float64, upper bool) int {
	if !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) {
		return 0
	}
	miss := q // P(every value lies below the quantile) = qⁿ
	if !upper {
		miss = 1 - q
	}
	// The smallest n with missⁿ ≤ 1 − confidence, checked on both sides
	// of the closed form so that rounding cannot move it (a tie within
	// rounding reaches it: a p95's lower bound at 95% from one value).
	alpha := (1 - confidence) * (1 + 1e-9)
	n := max(1, int(math.Ceil(math.Log(alpha)/math.Log(miss))))
	for n > 1 && math.Pow(miss, float64(n-1)) <= alpha {
		n--
	}
	for math.Pow(miss, float64(n)) > alpha {
		n++
	}
	return n
}

// AllBelowConfidence is the confidence that the q-quantile lies at or
// below the largest of n values, 1 − qⁿ (every value lies below the
// quantile with probability qⁿ): what "all 48 requests under 210 ms" says
// of a p95 (91%). AllAboveConfidence is that it lies at or above the
// smallest, 1 − (1 − q)ⁿ.
func AllBelowConfidence(n int, q float64) float64 { return 1 - math.Pow(q, float64(n)) }

// AllAboveConfidence: see AllBelowConfidence.
func AllAboveConfidence(n int, q float64) float64 { return 1 - math.Pow(1-q, float64(n)) }

// LowBoundAbove reports whether the one-sided lower bound at confidence
// of the q-quantile of n values (the order statistic X(l) of
// oneSidedRanks, what OneSidedCI's Low is) lies above a threshold that
// atMost of the n values do not exceed: X(l) exceeds it exactly when
// fewer than l values do not. It is what a percentile's ceiling needs to
// be decisively broken, asked of counts alone so that a level can be
// watched as its requests end (slo.BreakWatch).
func LowBoundAbove(n, atMost int, q, confidence float64) bool {
	if n < 1 || atMost < 0 || !(q > 0 && q < 1) {
		return false
	}
	l, _, lowOK, _ := oneSidedRanks(n, q, confidence)
	return lowOK && atMost < l
}
