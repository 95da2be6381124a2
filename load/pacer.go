package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrival is the inter-arrival law of the rate method.
type Arrival string

// Arrival laws.
const (
	// Poisson sends with exponentially distributed gaps of mean 1/rate, as
	// independent users would.
	Poisson Arrival = "poisson"
	// Constant sends every 1/rate seconds exactly.
	Constant Arrival = "constant"
	// Gamma sends with gamma-distributed gaps of mean 1/rate and shape
	// Level.Burstiness K, as vLLM's benchmark --burstiness defines it: the
	// gaps' coefficient of variation is 1/√K, so K = 1 is Poisson, K < 1
	// burstier and K > 1 more even (see GammaPacer).
	Gamma Arrival = "gamma"
	// Ramp raises the rate linearly from Level.RateStart to Level.Rate
	// over Level.RampSeconds, then holds it: an inhomogeneous Poisson
	// process, or gamma-distributed with Burstiness K ≠ 1 (see RampPacer).
	Ramp Arrival = "ramp"
	// Trace replays the arrival times of a trace file: each request is
	// due at its workload.Item.Due (see TracePacer). It is set by run's
	// --trace, not chosen with --arrival.
	Trace Arrival = "trace"
)

// Arrivals lists the laws ParseArrival accepts, in the order help texts
// show them (Trace is not one: a trace brings its own times).
var Arrivals = []Arrival{Poisson, Constant, Gamma, Ramp}

// ParseArrival returns the Arrival named s.
func ParseArrival(s string) (Arrival, error) {
	for _, a := range Arrivals {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown arrival %q (want one of %v)", s, Arrivals)
}

// A Pacer schedules the requests of an open-loop level. It is a pure
// schedule, testable without a clock (after vegeta's Pacer): given the time
// elapsed since the level began and the number of requests sent so far, it
// says how long to wait before sending the next one, or to stop. Due gives
// the time request k is due, from the level's start, so that a request sent
// late (all slots busy) still records when it should have gone.
type Pacer interface {
	Pace(elapsed time.Duration, sent int) (wait time.Duration, stop bool)
	Due(k int) time.Duration
}

// ConstantPacer sends Max requests at Rate requests/s: request k (from 0)
// is due at k/Rate seconds.
type ConstantPacer struct {
	Rate float64
	Max  int
}

// Pace implements Pacer.
func (p ConstantPacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	if sent >= p.Max || p.Rate <= 0 {
		return 0, true
	}
	return max(p.Due(sent)-elapsed, 0), false
}

// Due implements Pacer: k/Rate seconds.
func (p ConstantPacer) Due(k int) time.Duration {
	return time.Duration(float64(k) / p.Rate * float64(time.Second))
}

// PoissonPacer sends Max requests as a Poisson process of Rate requests/s:
// request 0 is due at once, and the gaps between due times are independent
// exponential draws of mean 1/Rate from a generator seeded with Seed, so
// the same seed gives the same schedule. Due draws lazily and memoizes, so
// the schedule does not depend on the order of calls, but a PoissonPacer is
// not safe for concurrent use. Make one with NewPoissonPacer.
type PoissonPacer struct {
	Rate float64
	Max  int
	due  []time.Duration
	rng  *rand.Rand
}

// NewPoissonPacer returns a PoissonPacer.
func NewPoissonPacer(rate float64, maxRequests int, seed int64) *PoissonPacer {
	return &PoissonPacer{Rate: rate, Max: maxRequests, rng: rand.New(rand.NewPCG(uint64(seed), 0xa441))}
}

// Due implements Pacer.
func (p *PoissonPacer) Due(k int) time.Duration {
	for len(p.due) <= k {
		if len(p.due) == 0 {
			p.due = append(p.due, 0)
			continue
		}
		gap := p.rng.ExpFloat64() / p.Rate * float64(time.Second)
		p.due = append(p.due, p.due[len(p.due)-1]+time.Duration(math.Round(gap)))
	}
	return p.due[k]
}

// Pace implements Pacer.
func (p *PoissonPacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	if sent >= p.Max || p.Rate <= 0 {
		return 0, true
	}
	return max(p.Due(sent)-elapsed, 0), false
}

// unitGaps draws the gaps of an arrival process in operational time, where
// the process runs at rate 1: independent gamma draws of shape K and mean
// 1 (coefficient of variation 1/√K; K = 1 is the exponential of a Poisson
// process), from a generator seeded with seed, so the same seed gives the
// same gaps.
type unitGaps struct {
	shape float64
	rng   *rand.Rand
}

func newUnitGaps(shape float64, seed int64) unitGaps {
	return unitGaps{shape: shape, rng: rand.New(rand.NewPCG(uint64(seed), 0x6a77a))}
}

func (g unitGaps) next() float64 {
	if g.shape == 1 {
		return g.rng.ExpFloat64()
	}
	return gammaVariate(g.rng, g.shape) / g.shape
}

// gammaVariate draws from the gamma distribution of shape k > 0 and scale
// 1 by Marsaglia and Tsang's squeeze method ("A simple method for
// generating gamma variables", ACM TOMS 26(3), 2000); for k < 1 it draws
// Gamma(k+1) and multiplies by U^(1/k), the boost the same paper gives.
func gammaVariate(r *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaVariate(r, k+1) * math.Pow(r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// warpedPacer sends Max requests at the times of an arrival process: the
// process's arrivals in operational time (s₀ = 0, sₖ = sₖ₋₁ + a unit gap)
// mapped to real time by warp, the inverse of the cumulative rate Λ(t) =
// ∫₀ᵗ λ. Due draws lazily and memoizes, like PoissonPacer, so it is not
// safe for concurrent use.
type warpedPacer struct {
	max  int
	gaps unitGaps
	warp func(s float64) time.Duration
	s    float64
	due  []time.Duration
}

// Due implements Pacer.
func (p *warpedPacer) Due(k int) time.Duration {
	for len(p.due) <= k {
		if len(p.due) > 0 {
			p.s += p.gaps.next()
		}
		p.due = append(p.due, p.warp(p.s))
	}
	return p.due[k]
}

// Pace implements Pacer.
func (p *warpedPacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	if sent >= p.max {
		return 0, true
	}
	return max(p.Due(sent)-elapsed, 0), false
}

// seconds converts seconds to a Duration, rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// NewGammaPacer returns the Pacer of a gamma arrival process: Max requests
// at rate requests/s on average, request 0 at once and the gaps between
// due times independent gamma draws of shape K (burstiness) and scale
// 1/(K·rate), so their mean is 1/rate and their coefficient of variation
// 1/√K. That is the definition of vLLM's benchmark --burstiness
// (vllm/benchmarks/serve.py, get_request: theta = 1/(rate·burstiness),
// np.random.gamma(shape=burstiness, scale=theta)); unlike vLLM, the
// schedule is not rescaled afterwards to span exactly Max/rate seconds, so
// a short level's realized rate varies as a real process's would. K = 1
// draws the same law as Poisson (not the same schedule as PoissonPacer for
// a seed: the generators differ).
func NewGammaPacer(rate, burstiness float64, maxRequests int, seed int64) Pacer {
	if !(rate > 0) || !(burstiness > 0) {
		return stopped{}
	}
	return &warpedPacer{max: maxRequests, gaps: newUnitGaps(burstiness, seed),
		warp: func(s float64) time.Duration { return seconds(s / rate) }}
}

// NewRampPacer returns the Pacer of a rate that rises (or falls) linearly
// from from to to requests/s over ramp, then stays at to: arrivals of an
// inhomogeneous process of rate λ(t) = from + (to − from)·min(t/ramp, 1),
// with unit gaps of gamma shape burstiness (1: an inhomogeneous Poisson
// process, the mean number of requests due by t is Λ(t) = ∫₀ᵗ λ). Request
// 0 is due at once. from may be 0; to must be positive.
func NewRampPacer(from, to float64, ramp time.Duration, burstiness float64, maxRequests int, seed int64) Pacer {
	if !(to > 0) || from < 0 || !(burstiness > 0) {
		return stopped{}
	}
	if ramp <= 0 || from == to {
		return NewGammaPacer(to, burstiness, maxRequests, seed)
	}
	return &warpedPacer{max: maxRequests, gaps: newUnitGaps(burstiness, seed), warp: rampWarp(from, to, ramp.Seconds())}
}

// rampWarp is the inverse of Λ(t) = from·t + a·t² (a = (to − from)/(2T))
// for t ≤ T, and Λ(T) + to·(t − T) after: operational time s → real time.
// On the ramp it solves a·t² + from·t − s = 0 in the form t = 2s / (from +
// √(from² + 4as)), which stays exact when a is 0 or negative (λ stays ≥ 0
// on the ramp, so the root is real for s ≤ Λ(T)).
func rampWarp(from, to, T float64) func(s float64) time.Duration {
	a := (to - from) / (2 * T)
	atEnd := from*T + a*T*T
	return func(s float64) time.Duration {
		if s >= atEnd {
			return seconds(T + (s-atEnd)/to)
		}
		if s <= 0 {
			return 0
		}
		return seconds(2 * s / (from + math.Sqrt(from*from+4*a*s)))
	}
}

// TracePacer replays a trace's arrival times: request k is due at Due[k]
// from the level's start (non-decreasing; the trace reader sorts them),
// and it stops after the last.
type TracePacer struct{ Offsets []time.Duration }

// Due implements Pacer.
func (p TracePacer) Due(k int) time.Duration { return p.Offsets[k] }

// Pace implements Pacer.
func (p TracePacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	if sent >= len(p.Offsets) {
		return 0, true
	}
	return max(p.Offsets[sent]-elapsed, 0), false
}

// DurationPacer ends P's schedule at Duration: it stops before the first
// request due at or after Duration from the level's start (run's
// --duration), or when P stops, whichever comes first. Duration ≤ 0 is no
// limit.
type DurationPacer struct {
	P        Pacer
	Duration time.Duration
}

// Due implements Pacer.
func (p DurationPacer) Due(k int) time.Duration { return p.P.Due(k) }

// Pace implements Pacer.
func (p DurationPacer) Pace(elapsed time.Duration, sent int) (time.Duration, bool) {
	wait, stop := p.P.Pace(elapsed, sent)
	if stop || p.Duration > 0 && p.P.Due(sent) >= p.Duration {
		return 0, true
	}
	return wait, false
}

// stopped is the Pacer of a schedule that sends nothing (a rate ≤ 0).
type stopped struct{}

func (stopped) Due(int) time.Duration                         { return 0 }
func (stopped) Pace(time.Duration, int) (time.Duration, bool) { return 0, true }

// Unbounded is the request count NewPacer plans for a level with a
// Duration and no Requests: the Duration ends the schedule first.
const Unbounded = math.MaxInt

// NewPacer returns the Pacer of a rate level, by its Arrival: Constant,
// Gamma, Ramp or Poisson (the default) at l.Rate, for l.Requests requests
// (Unbounded when 0 and l.DurationSeconds is set), ending at
// l.DurationSeconds when set. Trace levels are paced by their items' due
// times (TracePacer), not by NewPacer. The pacer schedules arrivals: a
// request each for the rate method, and whatever else a caller starts on
// the same schedule (see runner.paced).
func NewPacer(l Level, seed int64) Pacer {
	n := l.Requests
	if n <= 0 && l.DurationSeconds > 0 {
		n = Unbounded
	}
	k := l.Burstiness
	if k <= 0 {
		k = 1
	}
	seed += int64(l.Level)
	var p Pacer
	switch Arrival(l.Arrival) {
	case Constant:
		p = ConstantPacer{Rate: l.Rate, Max: n}
	case Gamma:
		p = NewGammaPacer(l.Rate, k, n, seed)
	case Ramp:
		p = NewRampPacer(l.RateStart, l.Rate, seconds(l.RampSeconds), k, n, seed)
	default:
		p = NewPoissonPacer(l.Rate, n, seed)
	}
	if l.DurationSeconds > 0 {
		p = DurationPacer{P: p, Duration: seconds(l.DurationSeconds)}
	}
	return p
}

// Count is the number of requests p sends, counting at most limit: the
// first k at which p, asked at k's own due time, stops. For a Pacer that
// depends only on its arguments (all of load's do) that is exactly how
// many the rate method will send, so a level planned by duration knows
// its request count before it runs. It reports false when p had not
// stopped by limit.
func Count(p Pacer, limit int) (int, bool) {
	for k := range limit {
		if _, stop := p.Pace(p.Due(k), k); stop {
			return k, true
		}
	}
	return limit, false
}
