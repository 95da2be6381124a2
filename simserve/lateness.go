package simserve

import (
	"sync/atomic"
	"time"
)

// lateness measures how far behind the engine's virtual time the server
// writes token chunks: the wall time of the write minus the wall time the
// token was due (driver.wallAt of its event). On an idle machine it is the
// timer's and the scheduler's wake-up delay; when the machine cannot keep
// up (too many streams for its CPUs) it grows, and every client-measured
// latency grows with it (beyond maxLag the server pauses instead, see
// driver). Buckets double from 100 µs; counting is lock-free because
// every stream writes here.
type lateness struct {
	buckets [latenessBuckets]atomic.Uint64
	n       atomic.Uint64
	max     atomic.Int64
}

const (
	latenessBuckets = 18
	latenessBase    = 100 * time.Microsecond
)

// observe adds one write d late.
func (l *lateness) observe(d time.Duration) {
	d = max(d, 0)
	i := 0
	for b := latenessBase; i < latenessBuckets-1 && d > b; b *= 2 {
		i++
	}
	l.buckets[i].Add(1)
	l.n.Add(1)
	for {
		m := l.max.Load()
		if int64(d) <= m || l.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile is the upper bound of the bucket holding quantile q.
func (l *lateness) quantile(q float64) time.Duration {
	n := l.n.Load()
	if n == 0 {
		return 0
	}
	want := uint64(q*float64(n) + 0.5)
	var cum uint64
	b := latenessBase
	for i := range latenessBuckets {
		cum += l.buckets[i].Load()
		if cum >= want {
			return min(b, time.Duration(l.max.Load()))
		}
		b *= 2
	}
	return time.Duration(l.max.Load())
}

// Summary is what a server has served so far.
type Summary struct {
	// Requests counts the generation requests received (faults included);
	// Finished those that generated every token; Aborted those whose
	// client went away (or that a fault cut or stalled).
	Requests, Finished, Aborted int64
	// GeneratedTokens is the tokens the engine sampled.
	GeneratedTokens int64
	// Preemptions is the engine's preemption count.
	Preemptions int
	// Writes counts the tokens written; LatenessP50, LatenessP99 and
	// LatenessMax are how late they went out behind the simulated
	// schedule (bucket upper bounds, doubling from 100 µs).
	Writes                                uint64
	LatenessP50, LatenessP99, LatenessMax time.Duration
	// Paused is the virtual time held back because the machine stalled
	// the simulator for more than 100 ms at a time: the simulated server
	// paused with it, and every latency since is longer by as much.
	Paused time.Duration
}

// Summary reports what the server has served.
func (s *Server) Summary() Summary {
	st, _ := s.drv.stats()
	c := &s.ctr
	c.mu.Lock()
	out := Summary{Requests: c.requests, Finished: c.success["length"], Aborted: c.success["abort"],
		GeneratedTokens: st.Generated, Preemptions: st.Preemptions}
	c.mu.Unlock()
	l := &s.late
	out.Writes = l.n.Load()
	out.LatenessP50, out.LatenessP99, out.LatenessMax = l.quantile(0.5), l.quantile(0.99), time.Duration(l.max.Load())
	out.Paused = time.Duration(s.drv.paused.Load())
	return out
}
