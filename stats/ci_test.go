package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

// binomPMF is P(B = k) for B ~ Binomial(n, q), computed plainly for the
// tests.
func binomPMF(n, k int, q float64) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(ln - lk - lnk + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
}

func TestQuantileRanks(t *testing.T) {
	// The textbook interval of a median of 20 at 95%: X(6) and X(15).
	if l, u, lo, hi := QuantileRanks(20, 0.5, 0.95); l != 6 || u != 15 || !lo || !hi {
		t.Fatalf("median of 20: ranks %d, %d (%v %v), want 6, 15", l, u, lo, hi)
	}
	// A p99 of 48 values cannot be bounded above at 95% (even X(48) is
	// below the p99 with probability 0.99^48 = 62%).
	if _, _, _, hi := QuantileRanks(48, 0.99, 0.95); hi {
		t.Fatal("p99 of 48 has an upper rank")
	}
	// 400 requests give a p95 both ends: 20 beyond the percentile.
	for _, c := range []struct {
		n    int
		q, c float64
	}{{400, 0.95, 0.95}, {400, 0.5, 0.95}, {2000, 0.99, 0.95}, {100, 0.5, 0.9}, {40, 0.5, 0.99}} {
		l, u, lo, hi := QuantileRanks(c.n, c.q, c.c)
		if !lo || !hi {
			t.Fatalf("%+v: unbounded", c)
		}
		// Coverage P(l ≤ B < u) is at least the confidence, and each tail
		// is at most α/2 while one rank further would break it.
		cover, below, above := 0.0, 0.0, 0.0
		for k := 0; k <= c.n; k++ {
			p := binomPMF(c.n, k, c.q)
			switch {
			case k < l:
				below += p
			case k >= u:
				above += p
			default:
				cover += p
			}
		}
		if cover < c.c-1e-9 || below > (1-c.c)/2+1e-9 || above > (1-c.c)/2+1e-9 {
			t.Fatalf("%+v: ranks %d, %d cover %.4f (tails %.4f, %.4f)", c, l, u, cover, below, above)
		}
		if below+binomPMF(c.n, l, c.q) <= (1-c.c)/2 || above+binomPMF(c.n, u-1, c.q) <= (1-c.c)/2 {
			t.Fatalf("%+v: ranks %d, %d are not the tightest", c, l, u)
		}
	}
}

func TestQuantileCI(t *testing.T) {
	s := make([]float64, 400)
	for i := range s {
		s[i] = float64(i + 1) // X(r) = r
	}
	iv := QuantileCI(s, 95, 0.95)
	l, u, _, _ := QuantileRanks(400, 0.95, 0.95)
	if *iv.Low != float64(l) || *iv.High != float64(u) || !iv.Contains(380) || iv.Contains(399) {
		t.Fatalf("p95 interval %v–%v, ranks %d–%d", *iv.Low, *iv.High, l, u)
	}
	if iv := QuantileCI(s[:48], 99, 0.95); iv.High != nil || iv.Low == nil || !iv.Contains(1e9) {
		t.Fatalf("p99 of 48: %+v, want an unbounded upper end", iv)
	}
}

func TestProportionCI(t *testing.T) {
	// Clopper–Pearson values from the beta quantiles (R: binom.test).
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.3084971},
		{5, 10, 0.1870860, 0.8129140},
		{10, 10, 0.6915029, 1},
		{1, 20, 0.0012651, 0.2487328},
	}
	for _, c := range cases {
		iv := ProportionCI(c.k, c.n, 0.95)
		if math.Abs(*iv.Low-c.lo) > 2e-6 || math.Abs(*iv.High-c.hi) > 2e-6 {
			t.Errorf("%d/%d: %.7f–%.7f, want %.7f–%.7f", c.k, c.n, *iv.Low, *iv.High, c.lo, c.hi)
		}
	}
	if iv := ProportionCI(0, 0, 0.95); iv.Low != nil || iv.High != nil {
		t.Error("0/0 has an interval")
	}
}

// TestBlockResampleIsSeeded: the same seed draws the same blocks; each
// block is a run of consecutive positions; the intervals of a level are
// the same from the same records.
func TestBlockResampleIsSeeded(t *testing.T) {
	draw := func(seed uint64) []block { return drawBlocks(95, 10, seed).blocks }
	a, b := draw(7), draw(7)
	if !slices.Equal(a, b) || slices.Equal(a, draw(8)) {
		t.Fatal("blocks not determined by the seed")
	}
	d := drawBlocks(95, 10, 7)
	starts := map[int]bool{}
	for k := range BlockResamples {
		n := 0
		for i, bl := range d.resample(k) {
			want := 10
			if i == 9 {
				want = 5 // the last block is cut at 95 positions
			}
			if bl.end-bl.start != want || bl.start < 0 || bl.end > 95 {
				t.Fatalf("resample %d block %d = %+v", k, i, bl)
			}
			n += bl.end - bl.start
			starts[bl.start] = true
		}
		if n != 95 {
			t.Fatalf("resample %d holds %d positions, want 95", k, n)
		}
	}
	if len(starts) != 86 {
		t.Fatalf("%d distinct starts drawn, want every one of 0..85", len(starts))
	}
	iv := PercentileInterval([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.8)
	if *iv.Low != 1.9 || *iv.High != 9.1 {
		t.Fatalf("percentile interval %v–%v", *iv.Low, *iv.High)
	}
}

// TestBlocksWidenForStalls: a level whose slow requests come in one run
// (a stall) gets a wider p95 interval than the order statistics alone
// give, which hold for independent requests only.
func TestBlocksWidenForStalls(t *testing.T) {
	var rs []record.Result
	for i := range 400 {
		ttft := 10.0 + float64(i%7)
		if i >= 370 && i < 400 {
			ttft = 100 + float64(i) // a stall at the end: 30 slow requests in a row
		}
		rs = append(rs, ok(4, float64(i*10), ttft, ttft+50, 10, 32))
	}
	l := SummarizeLevel(rs)
	var ttft []float64
	for _, r := range rs {
		ttft = append(ttft, float64(*r.TTFTNS))
	}
	slices.Sort(ttft)
	os := QuantileCI(ttft, 95, 0.95)
	if !(*l.TTFTP95MsCILow*1e6 < *os.Low) {
		t.Fatalf("p95 interval %v–%v ms not wider than the order statistics' %v–%v", *l.TTFTP95MsCILow, *l.TTFTP95MsCIHigh, *os.Low/1e6, *os.High/1e6)
	}
}

// poolLevel is a closed-loop level of n requests with TTFTs 1..n ms (in a
// shuffled order), 100 output tokens each, over repeats passes.
func poolLevel(n, repeats int, shift float64) []record.Result {
	var rs []record.Result
	for rep := range repeats {
		for i := range n {
			ttft := float64((i*37)%n+1) + shift*float64(rep)
			r := ok(8, float64(rep*100000+i*10), ttft, ttft+50, 100, 32)
			r.Repeat = rep
			rs = append(rs, r)
		}
	}
	return rs
}

func TestLevelIntervals(t *testing.T) {
	l := SummarizeLevel(poolLevel(400, 1, 0))
	near(t, "confidence", l.CIConfidence, 0.95)
	rl, ru, _, _ := QuantileRanks(400, 0.95, 0.95)
	near(t, "ttft p95 low", l.TTFTP95MsCILow, float64(rl))
	near(t, "ttft p95 high", l.TTFTP95MsCIHigh, float64(ru))
	if l.TTFTP99MsCIHigh != nil && *l.TTFTP99MsCIHigh < *l.TTFTP99Ms {
		t.Fatal("p99 interval below its value")
	}
	if lo, hi := *l.ThroughputTokSCILow, *l.ThroughputTokSCIHigh; !(lo < *l.ThroughputTokS && *l.ThroughputTokS < hi) {
		t.Fatalf("throughput %v outside its interval %v–%v", *l.ThroughputTokS, lo, hi)
	}
	// The same records give the same intervals (seeded bootstrap).
	again := SummarizeLevel(poolLevel(400, 1, 0))
	if *again.ThroughputTokSCILow != *l.ThroughputTokSCILow || *again.ThroughputTokSCIHigh != *l.ThroughputTokSCIHigh {
		t.Fatal("throughput interval not reproducible")
	}
	// A lower confidence gives a narrower interval.
	narrow := Summarize(poolLevel(400, 1, 0), Options{Confidence: 0.8})
	if w80, w95 := *narrow.TTFTP95MsCIHigh-*narrow.TTFTP95MsCILow, *l.TTFTP95MsCIHigh-*l.TTFTP95MsCILow; w80 >= w95 {
		t.Fatalf("80%% interval %v not narrower than 95%% %v", w80, w95)
	}
	if l.Repeats != 0 {
		t.Fatalf("one pass counted as %d repeats", l.Repeats)
	}
}

// TestLevelIntervalsAcrossRepeats: two passes whose TTFTs differ by 100 ms
// pool into one level; its interval also holds the spread between them,
// so it is wider than the pooled sample's order-statistic interval.
func TestLevelIntervalsAcrossRepeats(t *testing.T) {
	rs := poolLevel(400, 2, 100)
	l := SummarizeLevel(rs)
	if l.Requests != 800 || l.Repeats != 2 {
		t.Fatalf("requests %d, repeats %d", l.Requests, l.Repeats)
	}
	var ttft []float64
	for _, r := range rs {
		ttft = append(ttft, float64(*r.TTFTNS))
	}
	slices.Sort(ttft)
	os := QuantileCI(ttft, 50, 0.95)
	if !(*l.TTFTP50MsCILow*1e6 < *os.Low && *l.TTFTP50MsCIHigh*1e6 > *os.High) {
		t.Fatalf("p50 interval %v–%v ms not wider than the pooled sample's %v–%v", *l.TTFTP50MsCILow, *l.TTFTP50MsCIHigh, *os.Low/1e6, *os.High/1e6)
	}
	// Throughput across repeats: each pass's own wall time, not the pause
	// between them.
	var want float64
	for rep := range 2 {
		first, last := int64(math.MaxInt64), int64(0)
		for _, r := range rs {
			if r.Repeat == rep {
				first, last = min(first, r.StartNS), max(last, r.StartNS+r.E2ENS)
			}
		}
		want += float64(last-first) / 1e9
	}
	near(t, "wall", l.WallSeconds, want)
	if !(*l.ThroughputTokSCILow <= *l.ThroughputTokS && *l.ThroughputTokS <= *l.ThroughputTokSCIHigh) {
		t.Fatalf("throughput outside its interval")
	}
}

func TestOpenLoopIntervalAndRates(t *testing.T) {
	var rs []record.Result
	for i := range 200 {
		r := ok(0, float64(i*100), 5, 60, 10, 32) // sent every 100 ms
		sched := ms(float64(i * 90))              // the schedule wanted every 90 ms
		r.ScheduledNS = &sched
		rs = append(rs, r)
	}
	l := SummarizeLevel(rs)
	near(t, "achieved", l.AchievedRate, 10)
	near(t, "scheduled", l.ScheduledRate, 1/0.09)
	if !(*l.ThroughputTokSCILow <= *l.ThroughputTokS && *l.ThroughputTokS <= *l.ThroughputTokSCIHigh) {
		t.Fatalf("throughput %v outside %v–%v", *l.ThroughputTokS, *l.ThroughputTokSCILow, *l.ThroughputTokSCIHigh)
	}
}

func TestGood(t *testing.T) {
	b := &record.GoodputBudget{TTFTMs: fp(100), TPOTMs: fp(10), E2EMs: fp(2000)}
	nan := math.NaN()
	cases := []struct {
		name                  string
		ok                    bool
		ttft, tpot, e2e, outN float64
		want                  bool
	}{
		{"meets every bound", true, 90e6, 9e6, 1500e6, 100, true},
		{"at the bounds", true, 100e6, 10e6, 2000e6, 100, true},
		{"TTFT over", true, 101e6, 9e6, 1500e6, 100, false},
		{"TPOT over", true, 90e6, 11e6, 1500e6, 100, false},
		{"E2E over", true, 90e6, 9e6, 2001e6, 100, false},
		{"failed", false, 90e6, 9e6, 1500e6, 100, false},
		{"one output token has no TPOT and meets it (as vLLM)", true, 90e6, nan, 100e6, 1, true},
		{"unknown output count cannot meet a TPOT bound", true, 90e6, nan, 100e6, -1, false},
		{"no TTFT cannot meet a TTFT bound", true, nan, 9e6, 100e6, 100, false},
	}
	for _, c := range cases {
		if got := Good(c.ok, c.ttft, c.tpot, c.e2e, int(c.outN), b); got != c.want {
			t.Errorf("%s: Good = %v", c.name, got)
		}
	}
	if !Good(true, nan, nan, 5e6, -1, &record.GoodputBudget{E2EMs: fp(10)}) {
		t.Error("an E2E-only budget needs no TTFT or output count")
	}
}

func TestLevelGoodput(t *testing.T) {
	rs := []record.Result{
		ok(4, 0, 50, 1050, 11, 32),   // TTFT 50, TPOT 100: good
		ok(4, 10, 150, 1150, 11, 32), // TTFT over
		ok(4, 20, 50, 2050, 11, 32),  // TPOT 200: over
		{Level: 4, StartNS: ms(30), E2ENS: ms(3970), Status: 500, Reason: record.ReasonHTTP5xx, Error: "500"},
	}
	l := Summarize(rs, Options{Budget: &record.GoodputBudget{TTFTMs: fp(100), TPOTMs: fp(100)}})
	near(t, "fraction", l.GoodputFraction, 0.25)
	near(t, "goodput", l.GoodputReqS, 1/4.0) // 1 good request over 0 → 4 s
	if *l.GoodputFractionCILow > 0.25 || *l.GoodputFractionCIHigh < 0.25 {
		t.Fatal("fraction outside its interval")
	}
	if plain := SummarizeLevel(rs); plain.GoodputReqS != nil || plain.GoodputFraction != nil {
		t.Fatal("goodput without a budget")
	}
}

// TestQuantileSampleSize: the fewest requests whose order statistics
// bound a percentile at 95% on both sides, as docs/metrics.md gives them.
func TestQuantileSampleSize(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want int
	}{{0.5, 6}, {0.95, 72}, {0.99, 368}} {
		if got := QuantileSampleSize(c.q, 0.95); got != c.want {
			t.Errorf("QuantileSampleSize(%v) = %d, want %d", c.q, got, c.want)
		}
		if _, _, lo, hi := QuantileRanks(c.want-1, c.q, 0.95); lo && hi {
			t.Errorf("%d values already bound the %v-quantile", c.want-1, c.q)
		}
	}
}

// TestBoundSampleSizes: the fewest requests whose order statistics bound
// a percentile at 95%, one-sided (what an SLO verdict needs) and
// two-sided (what a displayed interval needs), each checked against the
// binomial law computed here: an upper bound at n needs qⁿ ≤ α (one side)
// or ≤ α/2 (two-sided, α/2 a side), and n − 1 must not do. The figures
// docs/metrics.md and the notes quote (59, 299, 72, 368) follow.
func TestBoundSampleSizes(t *testing.T) {
	const conf = 0.95
	// fewest is the smallest n with qⁿ ≤ tail, by plain counting (a tie
	// within rounding counts as reaching it: 0.05¹ against α = 0.05).
	fewest := func(q, tail float64) int {
		n := 1
		for math.Pow(q, float64(n)) > tail*(1+1e-9) {
			n++
		}
		return n
	}
	for _, c := range []struct {
		q                float64
		oneSided, twoSid int // as the docs quote them
	}{{0.5, 5, 6}, {0.9, 29, 36}, {0.95, 59, 72}, {0.99, 299, 368}} {
		one, two := fewest(c.q, 1-conf), fewest(c.q, (1-conf)/2)
		if one != c.oneSided || two != c.twoSid {
			t.Fatalf("q=%v: the binomial gives %d one-sided and %d two-sided; the docs quote %d and %d", c.q, one, two, c.oneSided, c.twoSid)
		}
		if got := BoundSampleSize(c.q, conf, true); got != one {
			t.Errorf("BoundSampleSize(%v, upper) = %d, want %d", c.q, got, one)
		}
		if got := QuantileSampleSize(c.q, conf); got != two {
			t.Errorf("QuantileSampleSize(%v) = %d, want %d", c.q, got, two)
		}
		if got, want := BoundSampleSize(c.q, conf, false), fewest(1-c.q, 1-conf); got != want {
			t.Errorf("BoundSampleSize(%v, lower) = %d, want %d", c.q, got, want)
		}
		// oneSidedRanks bounds the upper side from exactly that n.
		if _, u, _, ok := oneSidedRanks(one, c.q, conf); !ok || u != one {
			t.Errorf("oneSidedRanks(%d, %v): upper rank %d, ok %v; want X(n)", one, c.q, u, ok)
		}
		if _, _, _, ok := oneSidedRanks(one-1, c.q, conf); ok {
			t.Errorf("oneSidedRanks(%d, %v) bounds the upper side", one-1, c.q)
		}
		// The all-below confidence crosses 95% at the same n.
		if AllBelowConfidence(one, c.q) < conf || AllBelowConfidence(one-1, c.q) >= conf {
			t.Errorf("AllBelowConfidence(%d, %v) = %v", one, c.q, AllBelowConfidence(one, c.q))
		}
	}
	if c := AllBelowConfidence(48, 0.95); math.Floor(c*100) != 91 {
		t.Errorf("48 requests all under: %v confidence, want 91%%", c)
	}
}

// TestOneSidedRanksCoverage: each one-sided rank misses the quantile with
// probability at most α, and the next rank inward would miss it more
// often (the bound is the tightest the law allows).
func TestOneSidedRanksCoverage(t *testing.T) {
	for _, c := range []struct {
		n int
		q float64
	}{{72, 0.95}, {100, 0.95}, {400, 0.99}, {30, 0.5}} {
		l, u, lowOK, highOK := oneSidedRanks(c.n, c.q, 0.95)
		below := func(r int) float64 { // P(B < r) = P(X(r) > quantile)
			s := 0.0
			for k := 0; k < r; k++ {
				s += binomPMF(c.n, k, c.q)
			}
			return s
		}
		if !lowOK || !highOK {
			t.Fatalf("n=%d q=%v: no bounds", c.n, c.q)
		}
		if below(l) > 0.05+1e-12 || below(l+1) <= 0.05 {
			t.Errorf("n=%d q=%v: lower rank %d misses %v, rank %d %v", c.n, c.q, l, below(l), l+1, below(l+1))
		}
		if below(u) < 0.95-1e-12 || below(u-1) >= 0.95 {
			t.Errorf("n=%d q=%v: upper rank %d covers %v, rank %d %v", c.n, c.q, u, below(u), u-1, below(u-1))
		}
	}
}

// TestLevelOneSided: a level's one-sided bounds lie inside its two-sided
// interval, around the value, and carry the sample's size and extremes;
// under 59 requests a p95 has no upper one.
func TestLevelOneSided(t *testing.T) {
	l := SummarizeLevel(poolLevel(400, 1, 0))
	o, ok := l.OneSided[document.FigTTFTP95]
	if !ok || o.N != 400 || o.Low == nil || o.High == nil {
		t.Fatalf("one-sided %+v", o)
	}
	if !(*l.TTFTP95MsCILow <= *o.Low && *o.Low <= *l.TTFTP95Ms && *l.TTFTP95Ms <= *o.High && *o.High <= *l.TTFTP95MsCIHigh) {
		t.Fatalf("one-sided %v–%v, two-sided %v–%v, value %v", *o.Low, *o.High, *l.TTFTP95MsCILow, *l.TTFTP95MsCIHigh, *l.TTFTP95Ms)
	}
	if *o.Min != 1 || *o.Max != 400 {
		t.Fatalf("extremes %v %v", *o.Min, *o.Max)
	}
	small := SummarizeLevel(poolLevel(58, 1, 0))
	if o := small.OneSided[document.FigTTFTP95]; o.High != nil || o.Low == nil || o.N != 58 {
		t.Fatalf("58 requests: %+v", o)
	}
	if o := SummarizeLevel(poolLevel(59, 1, 0)).OneSided[document.FigTTFTP95]; o.High == nil {
		t.Fatal("59 requests give no upper bound on a p95")
	}
}
