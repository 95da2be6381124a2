package simserve

import (
	"math/rand/v2"
	"sync"
)

// faultKind is the exclusive fault a request gets.
type faultKind uint8

const (
	faultNone faultKind = iota
	fault429
	fault5xx
	faultCut
	faultStall
)

// faultPicker draws each request's faults from a generator seeded with
// Options.Seed, in the order requests arrive.
type faultPicker struct {
	mu  sync.Mutex
	f   Faults
	rng *rand.Rand
}

// pick draws one request's exclusive fault and whether its first token
// is slow. A server without faults draws nothing.
func (p *faultPicker) pick() (faultKind, bool) {
	f := p.f
	if f.TooManyRequests == 0 && f.ServerError == 0 && f.CutStream == 0 && f.Stall == 0 && f.SlowFirstToken == 0 {
		return faultNone, false
	}
	p.mu.Lock()
	u, v := p.rng.Float64(), p.rng.Float64()
	p.mu.Unlock()
	kind := faultNone
	for _, c := range []struct {
		p float64
		k faultKind
	}{{f.TooManyRequests, fault429}, {f.ServerError, fault5xx}, {f.CutStream, faultCut}, {f.Stall, faultStall}} {
		if u < c.p {
			kind = c.k
			break
		}
		u -= c.p
	}
	return kind, v < f.SlowFirstToken
}
