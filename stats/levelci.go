package stats

import (
	"cmp"
	"math"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// The intervals and goodput of a level (docs/metrics.md, "Confidence
// intervals" and "Goodput").

// quantities are the per-request values whose percentiles a level gives
// with intervals, and those percentiles' figures.
var quantities = []struct {
	value func(row) float64
	ps    []float64
	figs  []document.Figure
}{
	{rowTTFT, []float64{50, 95, 99}, []document.Figure{document.FigTTFTP50, document.FigTTFTP95, document.FigTTFTP99}},
	{rowTPOT, []float64{50, 95, 99}, []document.Figure{document.FigTPOTP50, document.FigTPOTP95, document.FigTPOTP99}},
	{rowE2E, []float64{50, 95, 99}, []document.Figure{document.FigE2EP50, document.FigE2EP95, document.FigE2EP99}},
}

// minBlockRows is the fewest requests a level needs before its intervals
// also resample blocks of consecutive requests (below it there are too
// few blocks to say anything).
const minBlockRows = 50

// rowTTFT, rowTPOT and rowE2E are a successful request's latencies in ns;
// NaN for a failed request or where it has none (those are left out).
func rowTTFT(w row) float64 { return okOr(w, w.ttft) }
func rowTPOT(w row) float64 { return okOr(w, w.tpot) }
func rowE2E(w row) float64  { return okOr(w, w.e2e) }

func okOr(w row, v float64) float64 {
	if !w.ok {
		return math.NaN()
	}
	return v
}

// intervals fills the confidence intervals of the level's percentiles and
// throughput, at the Options' confidence.
//
//   - A percentile's interval is the order-statistic interval of the
//     pooled sample (QuantileCI), which holds for independent requests.
//     Requests of one level are not independent: they share the server
//     and the machine, and a stall delays a run of consecutive ones. So
//     with minBlockRows requests or more it is widened to hold the
//     moving-block bootstrap interval too (resampling runs of √n
//     consecutive requests in send order, which keeps such runs
//     together), and where the level has several repeats, the bootstrap
//     interval across repeats (resampling whole repeats), so that a drift
//     between passes shows.
//   - Throughput's interval comes from a seeded bootstrap: across repeats
//     where there are several (Σ tokens / Σ wall of the resampled
//     repeats); otherwise over requests, as the change of a ratio that
//     throughput is proportional to — Σ output tokens / Σ E2E for a
//     closed loop (C workers each busy for their requests' E2E; blocks
//     of consecutive requests as above), mean output tokens / mean gap
//     between sends for the rate method's open loop (resampled
//     independently) — applied to the measured figure.
func (a *Accumulator) intervals(l *document.Level) {
	if len(a.rows) == 0 {
		return
	}
	conf := a.Options.confidence()
	l.CIConfidence = ptr.To(conf)
	seed := BootstrapSeed + uint64(a.level)
	groups := a.repeatGroups()
	order := a.sendOrder()
	// One set of moving-block resamples of the requests serves every
	// percentile and the closed loop's throughput: a resample draws
	// requests, and all of a request's figures come with it.
	var draws *blockDraws
	if len(order) >= minBlockRows {
		draws = drawBlocks(len(order), blockLen(len(order)), seed+101)
	}
	for qi, q := range quantities {
		sorted := sortedValues(a.rows, q.value)
		if len(sorted) == 0 {
			continue
		}
		qseed := seed + uint64(qi+1)*101
		// The two-sided interval at conf, and the one-sided bounds an SLO
		// verdict rests on (the two-sided interval at 2·conf − 1), each
		// the hull of the same three intervals.
		confs := []float64{conf, 2*conf - 1}
		blocks := a.blockPercentiles(order, q.value, q.ps, draws, confs)
		for k, fig := range q.figs {
			ivs := []Interval{QuantileCI(sorted, q.ps[k], conf), OneSidedCI(sorted, q.ps[k], conf)}
			var reps []weighted
			if len(groups) > 1 {
				reps = a.repeatReplicates(groups, qseed+uint64(k)+1, a.pooledPercentile(groups, q.value, q.ps[k]))
			}
			for c := range ivs {
				if blocks != nil {
					ivs[c] = hull(ivs[c], blocks[c][k])
				}
				if reps != nil {
					ivs[c] = hull(ivs[c], weightedInterval(reps, confs[c]))
				}
			}
			lo, hi := l.IntervalFields(fig)
			*lo, *hi = msPtr(ivs[0].Low), msPtr(ivs[0].High)
			if l.OneSided == nil {
				l.OneSided = map[document.Figure]document.OneSidedBounds{}
			}
			l.OneSided[fig] = document.OneSidedBounds{N: len(sorted), Low: msPtr(ivs[1].Low), High: msPtr(ivs[1].High),
				Min: msPtr(ptr.To(sorted[0])), Max: msPtr(ptr.To(sorted[len(sorted)-1]))}
		}
	}
	if l.ThroughputTokS != nil {
		iv := a.throughputCI(groups, order, draws, seed, conf)
		l.ThroughputTokSCILow, l.ThroughputTokSCIHigh = iv.Low, iv.High
	}
}

// sendOrder lists the rows by repeat, then send time.
func (a *Accumulator) sendOrder() []int {
	idx := make([]int, len(a.rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		ri, rj := a.rows[i], a.rows[j]
		if ri.repeat != rj.repeat {
			return ri.repeat - rj.repeat
		}
		switch {
		case ri.start < rj.start:
			return -1
		case ri.start > rj.start:
			return 1
		}
		return 0
	})
	return idx
}

// blockLen is the moving-block length for n requests: √n, rounded.
func blockLen(n int) int { return max(1, int(math.Round(math.Sqrt(float64(n))))) }

// BlockResamples is the number of bootstrap resamples of a level's
// requests in send order (moving blocks, or single requests for the
// closed loop's throughput below minBlockRows). The block bootstrap only
// widens the percentiles' distribution-free order-statistic interval,
// and the throughput's is a ratio of sums whose spread is smooth, so
// fewer resamples than BootstrapResamples suffice: with 400, the replicates below a 2.5% end
// are Binomial(400, 0.025), which puts the end within about ±0.8
// percentile points of the resampling distribution's (one standard
// deviation, √(0.025 · 0.975 / 400)), and a level's intervals cost about
// half as much CPU as with 1,000 (BenchmarkLevelIntervals).
const BlockResamples = 400

// blockDraws are BlockResamples moving-block resamples of the
// positions 0..n−1: each resample is runs of b consecutive positions from
// uniform random starts, ceil(n/b) of them, the last cut at n positions.
type blockDraws struct {
	per    int
	blocks []block
}

// block is the positions start..end−1 of a resample.
type block struct{ start, end int }

// drawBlocks draws the resamples with a seeded generator. Each start
// takes 32 random bits (two a draw of the generator), scaled to the
// n − b + 1 starts by multiplication (Lemire's method without its
// rejection step: a bias below n / 2³², nothing next to the bootstrap's
// own error).
func drawBlocks(n, b int, seed uint64) *blockDraws {
	rng := newRNG(seed)
	per := (n + b - 1) / b
	d := &blockDraws{per: per, blocks: make([]block, 0, per*BlockResamples)}
	span := uint64(n - b + 1)
	var bits uint64
	have := false
	for range BlockResamples {
		for i := 0; i < n; i += b {
			if !have {
				bits = rng.Uint64()
			}
			start := int((bits & 0xffffffff) * span >> 32)
			bits >>= 32
			have = !have
			d.blocks = append(d.blocks, block{start, start + min(b, n-i)})
		}
	}
	return d
}

// resample returns the blocks of resample k.
func (d *blockDraws) resample(k int) []block { return d.blocks[k*d.per : (k+1)*d.per] }

// blockPercentiles are the moving-block bootstrap intervals of the
// percentiles ps of value over the rows in send order, over the
// resamples draws, at each of confs: out[c][k] is ps[k]'s at confs[c]
// (nil below minBlockRows rows: then nil).
func (a *Accumulator) blockPercentiles(order []int, value func(row) float64, ps []float64, draws *blockDraws, confs []float64) [][]Interval {
	if draws == nil {
		return nil
	}
	// Each resample's values, sorted, are a multiset of the level's: sort
	// the level's once and count each resample's draws by rank (O(n) a
	// resample instead of a sort); its percentiles are read off the
	// counts (percentileCounts) without writing the multiset out.
	rank, sorted := ranks(a, order, value)
	counts := make([]int, len(sorted))
	reps := make([][]float64, len(ps))
	for k := range reps {
		reps[k] = make([]float64, 0, BlockResamples)
	}
	for k := range BlockResamples {
		clear(counts)
		total := 0
		for _, bl := range draws.resample(k) {
			for _, r := range rank[bl.start:bl.end] {
				if r >= 0 {
					counts[r]++
					total++
				}
			}
		}
		if total == 0 {
			continue
		}
		for i, p := range ps {
			reps[i] = append(reps[i], percentileCounts(sorted, counts, total, p))
		}
	}
	out := make([][]Interval, len(confs))
	for c := range out {
		out[c] = make([]Interval, len(ps))
	}
	for k := range ps {
		slices.Sort(reps[k])
		for c, conf := range confs {
			out[c][k] = PercentileInterval(reps[k], conf)
		}
	}
	return out
}

// percentileCounts is percentileSorted of the multiset that holds
// sorted[r] counts[r] times (total values in all): it walks the counts
// from the nearer end to the two values the percentile lies between.
func percentileCounts(sorted []float64, counts []int, total int, p float64) float64 {
	p = min(max(p, 0), 100)
	h := float64(total-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= total-1 {
		return nthCounted(sorted, counts, total, total-1)
	}
	x, y := adjacentCounted(sorted, counts, total, lo)
	return x + (h-float64(lo))*(y-x)
}

// adjacentCounted is the k-th and (k+1)-th (0-based, k+1 < total) values
// of the multiset of percentileCounts, nthCounted's, found in one walk
// from the nearer end: the second is in the first's bucket or the next
// one that holds a value.
func adjacentCounted(sorted []float64, counts []int, total, k int) (x, y float64) {
	if k < total/2 {
		cum := 0
		for r, c := range counts {
			if cum += c; cum > k {
				if cum > k+1 {
					return sorted[r], sorted[r]
				}
				for s := r + 1; s < len(counts); s++ {
					if counts[s] > 0 {
						return sorted[r], sorted[s]
					}
				}
				break
			}
		}
		return nthCounted(sorted, counts, total, k), nthCounted(sorted, counts, total, k+1)
	}
	cum, m := 0, total-1-(k+1)
	for r := len(counts) - 1; r >= 0; r-- {
		if cum += counts[r]; cum > m {
			if cum > m+1 {
				return sorted[r], sorted[r]
			}
			for s := r - 1; s >= 0; s-- {
				if counts[s] > 0 {
					return sorted[s], sorted[r]
				}
			}
			break
		}
	}
	return nthCounted(sorted, counts, total, k), nthCounted(sorted, counts, total, k+1)
}

// nthCounted is the k-th (0-based) value of the multiset of
// percentileCounts, found from the nearer end.
func nthCounted(sorted []float64, counts []int, total, k int) float64 {
	if k < total/2 {
		cum := 0
		for r, c := range counts {
			if cum += c; cum > k {
				return sorted[r]
			}
		}
	}
	cum, m := 0, total-1-k
	for r := len(counts) - 1; r >= 0; r-- {
		if cum += counts[r]; cum > m {
			return sorted[r]
		}
	}
	return sorted[0]
}

// ranks returns, for each position j of order, the rank of its value
// among the non-NaN values (−1 for NaN), and those values sorted.
func ranks(a *Accumulator, order []int, value func(row) float64) ([]int, []float64) {
	pos := make([]int, 0, len(order))
	vals := make([]float64, len(order))
	for j, o := range order {
		vals[j] = value(a.rows[o])
		if !math.IsNaN(vals[j]) {
			pos = append(pos, j)
		}
	}
	slices.SortFunc(pos, func(x, y int) int { return cmp.Compare(vals[x], vals[y]) })
	rank := make([]int, len(order))
	for j := range rank {
		rank[j] = -1
	}
	sorted := make([]float64, len(pos))
	for r, j := range pos {
		rank[j], sorted[r] = r, vals[j]
	}
	return rank, sorted
}

// pooledPercentile is the statistic of the bootstrap across repeats: the
// p-th percentile of value over the repeats drawn, each as often as drawn.
func (a *Accumulator) pooledPercentile(groups [][]int, value func(row) float64, p float64) func(counts []int) float64 {
	return func(counts []int) float64 {
		var s []float64
		for g, c := range counts {
			for range c {
				for _, j := range groups[g] {
					if x := value(a.rows[j]); !math.IsNaN(x) {
						s = append(s, x)
					}
				}
			}
		}
		if len(s) == 0 {
			return math.NaN()
		}
		slices.Sort(s)
		return percentileSorted(s, p)
	}
}

// msPtr converts nanoseconds to milliseconds, keeping nil.
func msPtr(ns *float64) *float64 {
	if ns == nil {
		return nil
	}
	return ptr.To(*ns / 1e6)
}

// sortedValues is value of every row where it is not NaN, sorted.
func sortedValues(rows []row, value func(row) float64) []float64 {
	s := make([]float64, 0, len(rows))
	for _, w := range rows {
		if x := value(w); !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	return s
}

// repeatGroups lists the row indices of each repeat, in repeat order.
func (a *Accumulator) repeatGroups() [][]int {
	var keys []int
	by := map[int][]int{}
	for i, w := range a.rows {
		if _, ok := by[w.repeat]; !ok {
			keys = append(keys, w.repeat)
		}
		by[w.repeat] = append(by[w.repeat], i)
	}
	slices.Sort(keys)
	out := make([][]int, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out
}

// acrossRepeats is the bootstrap interval of stat over resamples of whole
// repeats: each resample draws len(groups) repeats with replacement, and
// stat gets how many times each repeat was drawn. Up to maxExactRepeats
// repeats every distinct resample is weighed by its multinomial
// probability (the exact bootstrap distribution, a few dozen resamples);
// beyond, BootstrapResamples are drawn with the seed.
func (a *Accumulator) acrossRepeats(groups [][]int, seed uint64, conf float64, stat func(counts []int) float64) Interval {
	return weightedInterval(a.repeatReplicates(groups, seed, stat), conf)
}

// repeatReplicates is the weighted bootstrap distribution of stat across
// repeats that acrossRepeats reads its interval from, so that intervals
// at several confidences share one set of replicates.
func (a *Accumulator) repeatReplicates(groups [][]int, seed uint64, stat func(counts []int) float64) []weighted {
	k := len(groups)
	var ws []weighted
	if k <= maxExactRepeats {
		counts := make([]int, k)
		var walk func(i, left int, logw float64)
		walk = func(i, left int, logw float64) {
			if i == k-1 {
				counts[i] = left
				lf, _ := math.Lgamma(float64(left + 1))
				if v := stat(counts); !math.IsNaN(v) {
					ws = append(ws, weighted{v, math.Exp(logw - lf)})
				}
				return
			}
			for c := 0; c <= left; c++ {
				counts[i] = c
				lf, _ := math.Lgamma(float64(c + 1))
				walk(i+1, left-c, logw-lf)
			}
		}
		lk, _ := math.Lgamma(float64(k + 1))
		walk(0, k, lk-float64(k)*math.Log(float64(k)))
	} else {
		rng := newRNG(seed)
		counts := make([]int, k)
		for range BootstrapResamples {
			clear(counts)
			for range k {
				counts[rng.IntN(k)]++
			}
			if v := stat(counts); !math.IsNaN(v) {
				ws = append(ws, weighted{v, 1.0 / BootstrapResamples})
			}
		}
	}
	return ws
}

// maxExactRepeats is the most repeats whose bootstrap is enumerated
// exactly (6,435 distinct resamples of 8).
const maxExactRepeats = 8

// weighted is a bootstrap replicate and its probability.
type weighted struct{ v, w float64 }

// weightedInterval is the α/2 and 1 − α/2 quantiles of a weighted
// bootstrap distribution: the smallest values whose cumulative weight
// reaches them.
func weightedInterval(ws []weighted, conf float64) Interval {
	if len(ws) < 2 {
		return Interval{}
	}
	slices.SortFunc(ws, func(a, b weighted) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	total := 0.0
	for _, w := range ws {
		total += w.w
	}
	alpha := 1 - conf
	var iv Interval
	cum := 0.0
	for _, w := range ws {
		cum += w.w / total
		if iv.Low == nil && cum >= alpha/2-1e-12 {
			iv.Low = ptr.To(w.v)
		}
		if cum >= 1-alpha/2-1e-12 {
			iv.High = ptr.To(w.v)
			break
		}
	}
	if iv.High == nil {
		iv.High = ptr.To(ws[len(ws)-1].v)
	}
	return iv
}

// throughputCI is the interval of the level's throughput (see intervals).
func (a *Accumulator) throughputCI(groups [][]int, order []int, draws *blockDraws, seed uint64, conf float64) Interval {
	if len(groups) > 1 {
		tok := make([]float64, len(groups))
		wall := make([]float64, len(groups))
		for i, g := range groups {
			sp := a.spans[a.rows[g[0]].repeat]
			wall[i] = float64(sp.end - sp.start)
			for _, j := range g {
				tok[i] += float64(max(a.rows[j].okOut(), 0))
			}
		}
		return a.acrossRepeats(groups, seed, conf, func(counts []int) float64 {
			var t, w float64
			for i, c := range counts {
				t, w = t+float64(c)*tok[i], w+float64(c)*wall[i]
			}
			if w <= 0 {
				return math.NaN()
			}
			return t / w * 1e9
		})
	}
	if len(a.lag) > 0 {
		return a.openLoopCI(seed, conf)
	}
	return a.closedLoopCI(order, draws, seed, conf)
}

// okOut is the request's output tokens as throughput counts them: the
// reported count of a success, 0 for a failure, −1 when unknown.
func (w row) okOut() int {
	if !w.ok {
		return 0
	}
	return w.out
}

// closedLoopCI bootstraps Σ tokens / Σ E2E over the resamples draws
// (blocks of consecutive requests), or below minBlockRows (draws nil)
// over single requests drawn with seed, and scales the measured
// throughput by its relative spread.
func (a *Accumulator) closedLoopCI(order []int, draws *blockDraws, seed uint64, conf float64) Interval {
	tok, e2e := 0.0, 0.0
	for _, w := range a.rows {
		tok += float64(max(w.okOut(), 0))
		e2e += w.e2e
	}
	if tok == 0 || e2e == 0 {
		return a.degenerate(tok)
	}
	ratio := tok / e2e
	// Prefix sums of tokens and E2E in send order make each drawn
	// block's sums two subtractions; both are integers (tokens, ns), so
	// the sums are exactly those of adding the block's requests one by
	// one.
	n := len(order)
	cumTok, cumE2E := make([]float64, n+1), make([]float64, n+1)
	for j, o := range order {
		w := &a.rows[o]
		cumTok[j+1], cumE2E[j+1] = cumTok[j]+float64(max(w.okOut(), 0)), cumE2E[j]+w.e2e
	}
	if draws == nil {
		return a.scaleThroughput(singleRatioInterval(cumTok, cumE2E, ratio, seed, conf))
	}
	reps := make([]float64, 0, BlockResamples)
	for k := range BlockResamples {
		var t, e float64
		for _, bl := range draws.resample(k) {
			t += cumTok[bl.end] - cumTok[bl.start]
			e += cumE2E[bl.end] - cumE2E[bl.start]
		}
		if e > 0 {
			reps = append(reps, t/e/ratio)
		}
	}
	slices.Sort(reps)
	return a.scaleThroughput(PercentileInterval(reps, conf))
}

// singleRatioInterval is the bootstrap interval of Σ tokens / Σ E2E over
// single requests, relative to ratio, from the prefix sums of both (a
// request's values are the differences); the draws are drawBlocks' with
// blocks of one, made as they are used.
func singleRatioInterval(cumTok, cumE2E []float64, ratio float64, seed uint64, conf float64) Interval {
	n := len(cumTok) - 1
	rng := newRNG(seed)
	var bits uint64
	have := false
	reps := make([]float64, 0, BlockResamples)
	for range BlockResamples {
		var t, e float64
		for range n {
			if !have {
				bits = rng.Uint64()
			}
			j := int((bits & 0xffffffff) * uint64(n) >> 32)
			bits >>= 32
			have = !have
			t += cumTok[j+1] - cumTok[j]
			e += cumE2E[j+1] - cumE2E[j]
		}
		if e > 0 {
			reps = append(reps, t/e/ratio)
		}
	}
	slices.Sort(reps)
	return PercentileInterval(reps, conf)
}

// openLoopCI bootstraps mean output tokens per request and the mean gap
// between sends independently, and scales the measured throughput by the
// relative spread of their ratio.
func (a *Accumulator) openLoopCI(seed uint64, conf float64) Interval {
	starts := make([]int64, len(a.rows))
	tok := make([]float64, len(a.rows))
	sumTok := 0.0
	for i, w := range a.rows {
		starts[i] = w.start
		tok[i] = float64(max(w.okOut(), 0))
		sumTok += tok[i]
	}
	slices.Sort(starts)
	gaps := make([]float64, 0, len(starts))
	sumGap := 0.0
	for i := 1; i < len(starts); i++ {
		g := float64(starts[i] - starts[i-1])
		gaps = append(gaps, g)
		sumGap += g
	}
	if sumTok == 0 || len(gaps) == 0 || sumGap == 0 {
		return a.degenerate(sumTok)
	}
	meanTok, meanGap := sumTok/float64(len(tok)), sumGap/float64(len(gaps))
	rng := newRNG(seed)
	reps := make([]float64, 0, BootstrapResamples)
	for range BootstrapResamples {
		t, g := 0.0, 0.0
		for range tok {
			t += tok[rng.IntN(len(tok))]
		}
		for range gaps {
			g += gaps[rng.IntN(len(gaps))]
		}
		if g > 0 {
			reps = append(reps, (t/float64(len(tok)))/(g/float64(len(gaps)))/(meanTok/meanGap))
		}
	}
	slices.Sort(reps)
	return a.scaleThroughput(PercentileInterval(reps, conf))
}

// degenerate is the interval of a level whose throughput has no spread
// to resample: nothing generated (0) or no time to divide by.
func (a *Accumulator) degenerate(tok float64) Interval {
	if tok == 0 {
		return Interval{ptr.To(0.0), ptr.To(0.0)}
	}
	return Interval{}
}

// scaleThroughput applies a relative interval to the measured throughput.
func (a *Accumulator) scaleThroughput(rel Interval) Interval {
	wall := float64(a.wallNS()) / 1e9
	if wall <= 0 || rel.Low == nil {
		return Interval{}
	}
	return rel.scaled(float64(a.outTokens) / wall)
}

// goodput fills GoodputReqS, GoodputFraction and its interval when the
// Options carry a budget (docs/metrics.md, "Goodput").
func (a *Accumulator) goodput(l *document.Level) {
	b := a.Options.Budget
	if b == nil || a.requests == 0 {
		return
	}
	good := 0
	for _, w := range a.rows {
		if Good(w.ok, w.ttft, w.tpot, w.e2e, w.out, b) {
			good++
		}
	}
	l.GoodputFraction = ptr.To(float64(good) / float64(a.requests))
	iv := ProportionCI(good, a.requests, a.Options.confidence())
	l.GoodputFractionCILow, l.GoodputFractionCIHigh = iv.Low, iv.High
	if wall := float64(a.wallNS()) / 1e9; wall > 0 {
		l.GoodputReqS = ptr.To(float64(good) / wall)
	}
}

// Good reports whether a request meets every bound of the goodput budget,
// as vLLM's benchmark counts it (vllm/benchmarks/serve.py,
// calculate_metrics): it succeeded and each bound given holds for its own
// TTFT, TPOT and E2E (ns; NaN where it has none). A request with one
// output token has no TPOT and meets a TPOT bound, as vLLM counts its TPOT
// as 0; a request whose output count the server did not report (out < 0)
// cannot be shown to meet one, nor can a request without a TTFT meet a
// TTFT bound.
func Good(ok bool, ttftNS, tpotNS, e2eNS float64, out int, b *record.GoodputBudget) bool {
	if !ok {
		return false
	}
	within := func(v float64, boundMs *float64) bool {
		return boundMs == nil || (!math.IsNaN(v) && v <= *boundMs*1e6)
	}
	if !within(ttftNS, b.TTFTMs) || !within(e2eNS, b.E2EMs) {
		return false
	}
	if b.TPOTMs != nil {
		switch {
		case out < 0:
			return false
		case out <= 1:
			return true
		}
		return within(tpotNS, b.TPOTMs)
	}
	return true
}
