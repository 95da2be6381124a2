package load

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/servebench/servebench/workload"
)

// The users method: a model of people (servebench run --users N). Each of
// a level's N people is a loop over the session machinery of multi-turn
// levels (runSession's turn after turn, Session's growing history): send
// a turn carrying the whole conversation so far, read the streamed
// answer, think, send the next; when a conversation has had its drawn
// number of turns its person is replaced at once by a new one, whose
// first message comes one think time later, so N people are always in
// the system.
//
// People start already in their steady state: person i's first message
// comes at a seeded draw of the forward recurrence time of a think (a
// uniform point within a size-biased think, residual), the time a person
// met at a random moment still has to think, so the level's message rate
// is N / (mean think + mean E2E) from its start rather than a ramp that
// takes several cycles to settle (a uniform start within one mean think
// time sends well below that rate after its first cycle when thinks
// vary). Every turn sent before the first mean cycle ends (one mean think
// plus the mean E2E of the turns answered so far) is warm-up, so the
// server's queue and the conversations' histories have filled. The level
// counts until at least max(Level.Requests, N) turns sent after the
// warm-up have ended (countTarget): about one mean cycle of sending at
// large N, long enough for a queue that grows past what the server
// sustains to show in the counted latencies; turns then in flight end and
// count too.

// Users is the method of a model of people: Level.Concurrency people
// (users.go). It runs only with a Sweep's People.
const Users Method = "users"

// PeopleSource prepares the conversations of a users level and the think
// times between their turns; workload.People is one.
type PeopleSource interface {
	// Conversation prepares conversation id, its turns numbered from
	// seq0 one after the other.
	Conversation(ctx context.Context, id, seq0 int) (*workload.Session, error)
	// Think is the pause between turn k's answer, of answerTokens
	// tokens, and turn k+1 of conversation s, drawn with r.
	Think(s *workload.Session, k, answerTokens int, r *rand.Rand) time.Duration
	// MeanThink is the mean of Think.
	MeanThink() time.Duration
	// DrawThink is one think time between a typical answer and message,
	// their lengths drawn with r: the law residual starts people from.
	DrawThink(r *rand.Rand) time.Duration
}

// usersLevel is the shared state of one users level's people.
type usersLevel struct {
	r      *runner
	l      Level
	start  time.Time
	window time.Duration // one mean think time: with the mean E2E, the warm-up
	target int           // counted turns the level ends after (countTarget)
	think  func(s *workload.Session, k, answerTokens int, rng *rand.Rand) time.Duration
	draw   func(rng *rand.Rand) time.Duration // one typical think, for residual

	mu       sync.Mutex
	ended    int           // turns answered (warm-up or not)
	endedE2E time.Duration // their summed E2E
	counted  int           // counted turns ended
	stopped  bool          // Requests counted turns ended: send no more
	prepErr  error
}

// users runs a users level: l.Concurrency people until l.Requests
// counted turns ended (or the sweep is cancelled). An error is one
// preparing a conversation.
func (r *runner) users(l Level) error {
	people := r.s.People
	u := &usersLevel{r: r, l: l, start: r.clock.Now(), window: people.MeanThink(), target: countTarget(l),
		think: people.Think, draw: people.DrawThink}
	if r.s.Think.Kind != "" {
		// --think-time overrides the profile's reading, typing and pause.
		u.window = r.s.Think.mean()
		u.think = func(s *workload.Session, k, _ int, rng *rand.Rand) time.Duration { return r.s.Think.Draw(rng) }
		u.draw = r.s.Think.Draw
	}
	for _, o := range r.s.Observe {
		o.LevelStart(r.ctx, l)
	}
	stagger := rand.New(rand.NewPCG(uint64(r.s.Seed)^0x5e0e1e, uint64(l.Level)<<20|uint64(l.Pass)))
	wg := newGroup(r.tr)
	for i := range max(l.Concurrency, 1) {
		offset := residual(u.draw, stagger)
		wg.Go(func() { u.person(i, offset) })
	}
	wg.Wait()
	return u.prepErr
}

// person is one place among the level's people: it waits offset, then
// holds one conversation after another until the level stops.
func (u *usersLevel) person(i int, offset time.Duration) {
	r := u.r
	if !r.clock.Sleep(r.ctx, offset) {
		return
	}
	for !u.done() {
		s, seq, err := u.conversation()
		if err != nil {
			return
		}
		rng := thinkRand(r.s.Seed, s.ID)
		for k := 1; k <= s.Turns() && !u.done(); k++ {
			it := s.Request(k)
			warm := u.warm()
			_, out := r.sendTurn(u.l, &it, seq+k-1, u.l.Pass, warm, nil)
			s.Answered(k)
			u.ended1(out.e2e, warm)
			next := k
			if k == s.Turns() {
				next = 0 // the next person's first message
			}
			if !r.clock.Sleep(r.ctx, u.think(s, next, out.outputTokens, rng)) {
				return
			}
		}
	}
}

// conversation prepares the next conversation: a new number and the
// sequence numbers of its turns.
func (u *usersLevel) conversation() (*workload.Session, int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.prepErr != nil {
		return nil, 0, u.prepErr
	}
	r := u.r
	id, seq := r.session, r.seq
	s, err := r.s.People.Conversation(r.ctx, id, seq)
	if err != nil {
		u.prepErr, u.stopped = err, true
		return nil, 0, err
	}
	r.session++
	r.seq += s.Turns()
	return s, seq, nil
}

// warm says whether a turn sent now is warm-up: sent within the first
// mean cycle (the stagger window and the mean E2E of the turns answered
// so far).
func (u *usersLevel) warm() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	var meanE2E time.Duration
	if u.ended > 0 {
		meanE2E = u.endedE2E / time.Duration(u.ended)
	}
	return u.r.clock.Now().Sub(u.start) < u.window+meanE2E
}

// countTarget is how many counted turns a users level of N people ends
// after: l.Requests, or N when more. Each person sends about one turn a
// cycle, so at large N the counted turns span about one mean cycle rather
// than the few seconds l.Requests take: on the simulator's RTX 4090
// (qwen2.5-14b AWQ, vLLM) 1,280 people hold TTFT p95 at 200 ms over 736
// counted turns and break it at 2.4 s over 1,472, as their histories grow
// and the queue builds. The cost is about the N turns the warm-up
// already sends.
func countTarget(l Level) int {
	return max(l.Requests, l.Concurrency)
}

// residualDraws is how many think draws residual size-biases among.
const residualDraws = 16

// residual draws the forward recurrence time of the think law draw: pick
// one of residualDraws draws with probability proportional to its length
// (a size-biased think: a random moment falls in a long pause more often
// than in a short one), then a uniform point within it. Its mean is
// E[T²]/2E[T]; a constant think gives a uniform start within it.
func residual(draw func(*rand.Rand) time.Duration, r *rand.Rand) time.Duration {
	var ds [residualDraws]time.Duration
	var total time.Duration
	for i := range ds {
		ds[i] = max(draw(r), 0)
		total += ds[i]
	}
	if total <= 0 {
		return 0
	}
	pick := time.Duration(r.Float64() * float64(total))
	chosen := ds[residualDraws-1]
	for _, d := range ds {
		if pick < d {
			chosen = d
			break
		}
		pick -= d
	}
	return time.Duration(r.Float64() * float64(chosen))
}

// ended1 counts one ended turn.
func (u *usersLevel) ended1(e2e time.Duration, warm bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended++
	u.endedE2E += e2e
	if !warm {
		u.counted++
		if u.counted >= u.target {
			u.stopped = true
		}
	}
}

// done says the level sends no further turn.
func (u *usersLevel) done() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stopped || u.r.halting()
}

// mean is the mean of the law.
func (t ThinkTime) mean() time.Duration {
	if t.Kind == ThinkUniform {
		return (t.Min + t.Max) / 2
	}
	return t.Mean
}
