package cli

import (
	"context"
	"fmt"
	"math"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simrun"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// plan --users predicts each configuration's capacity in users with the
// search of `servebench capacity --backend sim` (find --by users against
// DefaultCapacitySLO): find's state machine grows the people ×2 and
// bisects to its resolution, measuring a straddling probe again and
// confirming the interval's ends, with each probe's pass one level of
// people on a fresh simulated server, as capacity's. To keep plan fast
// the search starts at the users asked for (its first probe is plan's
// verdict there) and stops at planCapacityFactor times them.
const (
	// planCapacityFactor bounds a configuration's search: up to 16 × the
	// users asked for, four doublings, where a larger capacity reads
	// "≥ 16 × N".
	planCapacityFactor = 16
)

// capacity is plan.Recommend's UsersFunc: c's users search, from users
// to planCapacityFactor × users, carried on past its first probe to its
// answer.
func (u *usersSearches) capacity(c *plan.Candidate, users int) (plan.UsersCapacity, error) {
	ps, err := u.search(c, users)
	if err != nil {
		return plan.UsersCapacity{}, err
	}
	delete(u.byCand, c) // its search ends here, with its pooled turns
	a, err := find.Drive(u.ctx, ps.s, ps.pr, nil)
	if err != nil {
		return plan.UsersCapacity{}, err
	}
	if a.Load == nil {
		return plan.UsersCapacity{}, fmt.Errorf("the users search from %d people found none that holds the SLO (%s)", users, a.Stop)
	}
	top := fmt.Sprintf("%d people", ps.top)
	if ps.top == planCapacityFactor*users {
		top += fmt.Sprintf(" (%d × %d)", planCapacityFactor, users)
	}
	return plan.UsersCapacity{Users: *a.Load, Low: a.LoadCILow, High: a.LoadCIHigh,
		Source: fmt.Sprintf("simulated: the users search of capacity --backend sim --user-profile %s (find --by users against %s), from %d up to %s",
			u.profile.Name, DefaultCapacitySLO, users, top)}, nil
}

// peopleSearch is one configuration's users search: find's state
// machine from users people and the prober of its levels.
type peopleSearch struct {
	s          *find.Search
	pr         *peopleProber
	users, top int
}

// newPeopleSearch readies the users search of cfg from users people up
// to planCapacityFactor × them, judged against bounds.
func newPeopleSearch(ctx context.Context, cfg sim.Config, p workload.Profile, seed int64, bounds []slo.Bound, users int) (*peopleSearch, error) {
	// sim.CandidateConfig has refused more than sim.RecommendMaxUsers
	// users before the search is made, so top is at least users.
	top := min(planCapacityFactor*users, sim.RecommendMaxUsers)
	s, err := find.New(find.Config{By: slo.ByUsers, Bounds: bounds, Start: float64(users), Max: float64(top)})
	if err != nil {
		return nil, err
	}
	pr, err := newPeopleProber(ctx, cfg, p, seed)
	if err != nil {
		return nil, err
	}
	pr.bounds = bounds
	return &peopleSearch{s: s, pr: pr, users: users, top: top}, nil
}

// first measures the search's first probe, the users asked for, until
// the search decides it and asks for another load (or ends), as
// find.Drive would.
func (ps *peopleSearch) first(ctx context.Context) error {
	for {
		p, ok := ps.s.Next()
		if !ok || p.Load != float64(ps.users) {
			return nil
		}
		l, err := ps.pr.Probe(ctx, p)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err() // the level was cut short: no verdict on part of it, as find.Drive
		}
		if err != nil {
			ps.s.Stop(find.Interrupted)
			return err
		}
		ps.s.Observe(l)
	}
}

// result is the search's probe of load, false when it measured none.
func (ps *peopleSearch) result(load float64) (find.ProbeResult, bool) {
	for _, p := range ps.s.Answer().Probes {
		if p.Load == load {
			return p, true
		}
	}
	return find.ProbeResult{}, false
}

// peopleProber is find's Prober for plan --users: each pass of a probe
// is one level of that many people on a fresh simulated server
// (freshServers, as run and capacity run theirs), and a probe's level
// pools its passes' counted turns. The workload is calibrated once, on
// a server of its own, as run calibrates it before its levels.
type peopleProber struct {
	sweep *load.Sweep
	fresh *freshServers
	// bounds are the SLO its passes stop early against (breakStop), as
	// capacity's simulated search's do.
	bounds []slo.Bound
	// turns are each load's counted turns over its passes. It gives the
	// search no pass alone (no find.PassProber): every pass runs on a
	// fresh simulated server, which cannot drift between passes.
	turns map[float64][]record.Result
}

// newPeopleProber calibrates the people of profile p for a server of
// cfg, seeded with seed, and readies their levels.
func newPeopleProber(ctx context.Context, cfg sim.Config, p workload.Profile, seed int64) (*peopleProber, error) {
	opt := simrun.Options{Seed: seed, Chat: true, Timeout: defaultTimeout}
	v, err := simrun.New(cfg, opt)
	if err != nil {
		return nil, err
	}
	spec := workload.Spec{Scenario: workload.Chat, PromptTokens: int(math.Round(p.First.Mean)), MaxTokens: int(math.Round(p.Answer.Mean)), Seed: seed}
	b := workload.NewBuilder(spec, v.Client())
	if err := b.Calibrate(ctx); err != nil {
		return nil, err
	}
	people := &workload.People{Builder: b, Profile: p, Seed: seed}
	sw := &load.Sweep{Run: "plan", Method: load.Users, Seed: seed, Source: b, People: people}
	return &peopleProber{sweep: sw, fresh: newFreshServers(cfg, opt, people, v), turns: map[float64][]record.Result{}}, nil
}

// Probe implements find.Prober.
func (pr *peopleProber) Probe(ctx context.Context, p find.Probe) (document.Level, error) {
	n := int(p.Load)
	k := &load.Collect{}
	pr.sweep.Sink = k
	pr.sweep.Stop = breakStop(p, pr.bounds, stats.DefaultConfidence)
	if _, err := doLevels(ctx, pr.sweep, pr.fresh, []load.Level{{Level: n, Concurrency: n, Requests: defaultUserTurns, Pass: p.Pass}}); err != nil {
		return document.Level{}, err
	}
	var counted []record.Result
	for _, r := range k.Results {
		if !r.Warmup {
			counted = append(counted, r)
		}
	}
	pr.turns[p.Load] = append(pr.turns[p.Load], counted...)
	return stats.SummarizeLevel(pr.turns[p.Load]), nil
}
