package load

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/workload"
)

// SessionSource prepares the levels that hold sessions (Level.Sessions >
// 0): workload.Builder those of a multi-turn run, workload.TraceSource
// the level of a replayed trace whose rows name sessions.
type SessionSource interface {
	// Arrivals prepares a level's arrivals in the order they are due:
	// its n sessions, numbered id0 … id0+n−1, and any single requests
	// beside them; requests are numbered from seq0, a session's turns one
	// after the other (Arrival.Seq).
	Arrivals(ctx context.Context, id0, seq0, n int) ([]workload.Arrival, error)
}

// ThinkKind is the law of think times.
type ThinkKind string

// Think-time laws.
const (
	// ThinkConst pauses Mean every time.
	ThinkConst ThinkKind = "const"
	// ThinkExp draws exponential pauses of mean Mean.
	ThinkExp ThinkKind = "exp"
	// ThinkUniform draws pauses uniformly in [Min, Max].
	ThinkUniform ThinkKind = "uniform"
)

// ThinkTime is the pause a session's user takes between receiving an
// answer and sending the next turn. The zero value pauses not at all.
type ThinkTime struct {
	Kind     ThinkKind
	Mean     time.Duration // ThinkConst, ThinkExp
	Min, Max time.Duration // ThinkUniform
}

// maxThink bounds a think time, so that a typo cannot park a run for days.
const maxThink = time.Hour

// ParseThinkTime reads "const:1s", "exp:2s" or "uniform:0.5s-3s" (Go
// durations, each between 0 and an hour).
func ParseThinkTime(s string) (ThinkTime, error) {
	kind, arg, ok := strings.Cut(strings.TrimSpace(s), ":")
	bad := func() (ThinkTime, error) {
		return ThinkTime{}, fmt.Errorf("%q: want const:DURATION, exp:MEAN or uniform:MIN-MAX (e.g. const:1s, exp:2s, uniform:0.5s-3s), each at most %v", s, maxThink)
	}
	if !ok {
		return bad()
	}
	t := ThinkTime{Kind: ThinkKind(kind)}
	var err error
	switch t.Kind {
	case ThinkConst, ThinkExp:
		if t.Mean, err = thinkDuration(arg); err != nil {
			return bad()
		}
	case ThinkUniform:
		lo, hi, ok := strings.Cut(arg, "-")
		if !ok {
			return bad()
		}
		t.Min, err = thinkDuration(lo)
		if err == nil {
			t.Max, err = thinkDuration(hi)
		}
		if err != nil || t.Max < t.Min {
			return bad()
		}
	default:
		return bad()
	}
	return t, nil
}

// thinkDuration parses one duration of a think-time law.
func thinkDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 || d > maxThink {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return d, nil
}

// String is the law as ParseThinkTime reads it ("" for the zero value).
func (t ThinkTime) String() string {
	switch t.Kind {
	case ThinkConst, ThinkExp:
		return string(t.Kind) + ":" + t.Mean.String()
	case ThinkUniform:
		return string(t.Kind) + ":" + t.Min.String() + "-" + t.Max.String()
	}
	return ""
}

// Draw returns one think time drawn with r.
func (t ThinkTime) Draw(r *rand.Rand) time.Duration {
	switch t.Kind {
	case ThinkConst:
		return t.Mean
	case ThinkExp:
		return min(time.Duration(math.Round(r.ExpFloat64()*float64(t.Mean))), maxThink)
	case ThinkUniform:
		return t.Min + time.Duration(r.Int64N(int64(t.Max-t.Min)+1))
	}
	return 0
}

// thinkRand is session id's think-time generator: the same seed gives the
// same pauses, whatever order sessions run in.
func thinkRand(seed int64, id int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x7417c, uint64(int64(id))))
}

// sessions prepares and runs a level of sessions (l.Sessions > 0): its
// arrivals, the sessions and any single requests beside them (a replayed
// trace), from the Sweep's SessionSource. Under the pool method
// l.Concurrency workers each run one arrival at a time; under the rate
// method arrivals start on the level's schedule (levelPacer: l.Rate
// sessions/s, or a trace's times), at most l.Concurrency in flight, a
// session holding its slot from its first turn to its last. A session
// sends its turns one after the other (runSession).
func (r *runner) sessions(l Level) error {
	arrivals, err := r.s.Sessions.Arrivals(r.ctx, r.session, r.seq, l.Sessions)
	r.seq += l.Requests
	r.session += l.Sessions
	if err != nil {
		return err
	}
	for _, o := range r.s.Observe {
		o.LevelStart(r.ctx, l)
	}
	if r.s.Method == Rate {
		due := func(k int) time.Duration { return arrivals[k].Due() }
		r.paced(l, levelPacer(l, len(arrivals), due, r.s.Seed), len(arrivals), func(k int) func(int64) {
			return func(scheduledNS int64) { r.arrive(l, &arrivals[k], &scheduledNS) }
		})
		return nil
	}
	var next atomic.Int64
	wg := newGroup(r.tr)
	for range max(l.Concurrency, 1) {
		wg.Go(func() {
			for !r.halting() {
				i := int(next.Add(1) - 1)
				if i >= len(arrivals) {
					return
				}
				r.arrive(l, &arrivals[i], nil)
			}
		})
	}
	wg.Wait()
	return nil
}

// arrive runs one arrival: its single request, or its whole session.
func (r *runner) arrive(l Level, a *workload.Arrival, scheduled *int64) {
	if a.Session == nil {
		r.send(l, &a.Item, a.Seq, l.Pass, false, scheduled)
		return
	}
	r.runSession(l, a.Session, a.Seq, scheduled)
}

// runSession sends session s's turns in order, numbered from seq. The
// first turn carries its scheduled send time (rate method: the level's
// schedule); each later turn is due when the previous turn ended
// (StartNS + E2ENS) plus a pause, the session's own (a replayed trace:
// Session.Pause) or a think time drawn from Sweep.Think, and is sent
// then. Under the rate method that due time is the turn's ScheduledNS, so
// its lag is the client's own delay in sending it; pool levels schedule
// nothing. A cancelled sweep sends no further turn.
func (r *runner) runSession(l Level, s *workload.Session, seq int, scheduled *int64) {
	rng := thinkRand(r.s.Seed, s.ID)
	sched := scheduled
	var levelNS int64 // the level's start, from the run's (a trace's arrivals count from it)
	if scheduled != nil {
		levelNS = *scheduled - int64(s.Due())
	}
	for k := 1; k <= s.Turns(); k++ {
		if r.halting() {
			return
		}
		it := s.Request(k)
		ended := r.send(l, &it, seq+k-1, l.Pass, false, sched)
		s.Answered(k)
		if k == s.Turns() {
			return
		}
		pause, own := s.Pause(k+1, time.Duration(ended-levelNS))
		if !own {
			pause = r.s.Think.Draw(rng)
		}
		due := ended + int64(pause)
		if !r.clock.Sleep(r.ctx, time.Duration(due-int64(r.clock.Now().Sub(r.t0)))) {
			return
		}
		if scheduled != nil {
			sched = &due
		}
	}
}
