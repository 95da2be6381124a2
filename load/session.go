package load

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/workload"
)

// SessionSource prepares the sessions of a multi-turn run;
// workload.Builder is one.
type SessionSource interface {
	// Sessions prepares sessions id0 … id0+n−1, whose requests are
	// numbered from seq0, turn after turn, session after session.
	Sessions(ctx context.Context, id0, seq0, n int) ([]*workload.Session, error)
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

// sessions prepares and runs a multi-turn level's l.Sessions sessions:
// under the pool method l.Concurrency workers each run one session at a
// time; under the rate method sessions start on the Pacer's schedule at
// l.Rate sessions/s, at most l.Concurrency in flight. A session sends its
// turns one after the other, each after its answer came and a think
// time (Sweep.Think) passed.
func (r *runner) sessions(l Level) error {
	turns := max(l.Turns, 1)
	seq0 := r.seq
	ss, err := r.s.Sessions.Sessions(r.ctx, r.session, seq0, l.Sessions)
	r.seq += l.Sessions * turns
	r.session += l.Sessions
	if err != nil {
		return err
	}
	for _, o := range r.s.Observe {
		o.LevelStart(r.ctx, l)
	}
	run := func(i int, scheduled *int64) { r.runSession(l, ss[i], seq0+i*turns, scheduled) }
	if r.s.Method == Rate {
		sl := l
		sl.Requests = l.Sessions // the schedule paces session starts
		r.paced(sl, len(ss), run)
		return nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(l.Concurrency, 1) {
		wg.Go(func() {
			for r.ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(ss) {
					return
				}
				run(i, nil)
			}
		})
	}
	wg.Wait()
	return nil
}

// runSession sends session s's turns in order, numbered from seq; the
// first turn carries its scheduled send time (rate method), later turns
// go when the think time after the previous answer has passed. A
// cancelled sweep sends no further turn.
func (r *runner) runSession(l Level, s *workload.Session, seq int, scheduled *int64) {
	rng := thinkRand(r.s.Seed, s.ID)
	for k := 1; k <= s.Turns(); k++ {
		if k > 1 && !r.clock.Sleep(r.ctx, r.s.Think.Draw(rng)) {
			return
		}
		if r.ctx.Err() != nil {
			return
		}
		it := s.Request(k)
		var sched *int64
		if k == 1 {
			sched = scheduled
		}
		r.send(l, &it, seq+k-1, 0, false, sched)
		s.Answered(k)
	}
}
