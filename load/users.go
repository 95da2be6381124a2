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
// the system. Person i starts at a seeded uniform time within one mean
// think time; every turn sent before the first mean cycle ends (that
// window plus the mean E2E of the turns answered so far), and each
// person's first turn, is warm-up. The level counts until at least
// Level.Requests turns sent after the warm-up have ended; turns then in
// flight end and count too.

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
}

// usersLevel is the shared state of one users level's people.
type usersLevel struct {
	r      *runner
	l      Level
	start  time.Time
	window time.Duration // the stagger window: one mean think time
	think  func(s *workload.Session, k, answerTokens int, rng *rand.Rand) time.Duration

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
	u := &usersLevel{r: r, l: l, start: r.clock.Now(), window: people.MeanThink(), think: people.Think}
	if r.s.Think.Kind != "" {
		// --think-time overrides the profile's reading, typing and pause.
		u.window = r.s.Think.mean()
		u.think = func(s *workload.Session, k, _ int, rng *rand.Rand) time.Duration { return r.s.Think.Draw(rng) }
	}
	for _, o := range r.s.Observe {
		o.LevelStart(r.ctx, l)
	}
	stagger := rand.New(rand.NewPCG(uint64(r.s.Seed)^0x5e0e1e, uint64(l.Level)<<20|uint64(l.Pass)))
	wg := newGroup(r.tr)
	for i := range max(l.Concurrency, 1) {
		offset := time.Duration(stagger.Float64() * float64(u.window))
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
	first := true
	for !u.done() {
		s, seq, err := u.conversation()
		if err != nil {
			return
		}
		rng := thinkRand(r.s.Seed, s.ID)
		for k := 1; k <= s.Turns() && !u.done(); k++ {
			it := s.Request(k)
			warm := first || u.warm()
			first = false
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

// ended1 counts one ended turn.
func (u *usersLevel) ended1(e2e time.Duration, warm bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended++
	u.endedE2E += e2e
	if !warm {
		u.counted++
		if u.counted >= u.l.Requests {
			u.stopped = true
		}
	}
}

// done says the level sends no further turn.
func (u *usersLevel) done() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.stopped || u.r.ctx.Err() != nil
}

// mean is the mean of the law.
func (t ThinkTime) mean() time.Duration {
	if t.Kind == ThinkUniform {
		return (t.Min + t.Max) / 2
	}
	return t.Mean
}
