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
)

// ParseArrival returns the Arrival named s.
func ParseArrival(s string) (Arrival, error) {
	switch Arrival(s) {
	case Poisson, Constant:
		return Arrival(s), nil
	}
	return "", fmt.Errorf("unknown arrival %q (want poisson or constant)", s)
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
