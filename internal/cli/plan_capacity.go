package cli

import (
	"context"
	"fmt"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// plan --users predicts each configuration's capacity in users with the
// search of `servebench capacity --backend sim` (find --by users against
// DefaultCapacitySLO): find's state machine grows the people ×2 and
// bisects to its resolution, measuring a straddling probe again and
// confirming the interval's ends, with each probe one level of people on
// a fresh simulated server (peopleTurns), as plan judges N. To keep plan
// fast the search starts at the users asked for and stops at
// planCapacityFactor times them.
const (
	// planCapacityFactor bounds a configuration's search: up to 16 × the
	// users asked for, four doublings, where a larger capacity reads
	// "≥ 16 × N".
	planCapacityFactor = 16
	// planCapacityMaxUsers is the most people the simulator's
	// recommender simulates (sim.CandidateConfig refuses more).
	planCapacityMaxUsers = 4096
)

// usersCapacity is plan.Recommend's UsersFunc for people of profile p,
// seeded with seed: the simulated users search of capacity --backend sim
// on the configuration, from users to planCapacityFactor × users.
func usersCapacity(ctx context.Context, p workload.Profile, seed int64) plan.UsersFunc {
	bounds, err := slo.Parse(DefaultCapacitySLO)
	if err != nil {
		panic(err) // a constant
	}
	return func(c *plan.Candidate, users int) (plan.UsersCapacity, error) {
		if n := len(c.Inputs.GPUs); n > 1 {
			return plan.UsersCapacity{}, fmt.Errorf("the simulator models one GPU, not %d", n)
		}
		cfg, err := sim.CandidateConfig(c, users)
		if err != nil {
			return plan.UsersCapacity{}, err
		}
		top := max(users, min(planCapacityFactor*users, planCapacityMaxUsers))
		s, err := find.New(find.Config{By: slo.ByUsers, Bounds: bounds, Start: float64(users), Max: float64(top)})
		if err != nil {
			return plan.UsersCapacity{}, err
		}
		a, err := find.Drive(ctx, s, &peopleProber{cfg: cfg, profile: p, seed: seed, turns: map[float64][]record.Result{}}, nil)
		if err != nil {
			return plan.UsersCapacity{}, err
		}
		if a.Load == nil {
			return plan.UsersCapacity{}, fmt.Errorf("the users search from %d people found none that holds the SLO (%s)", users, a.Stop)
		}
		return plan.UsersCapacity{Users: *a.Load, Low: a.LoadCILow, High: a.LoadCIHigh,
			Source: fmt.Sprintf("simulated: the users search of capacity --backend sim --user-profile %s (find --by users against %s), from %d up to %d people (%d × %d)",
				p.Name, DefaultCapacitySLO, users, top, planCapacityFactor, users)}, nil
	}
}

// peopleProber is find's Prober for plan --users: each pass of a probe
// is one level of that many people on a fresh simulated server, seeded
// by the pass (seed + pass) so that a repeat draws other conversations,
// and a probe's level pools its passes' counted turns.
type peopleProber struct {
	cfg     sim.Config
	profile workload.Profile
	seed    int64
	// turns are each load's counted turns over its passes, last the
	// latest pass's alone.
	turns map[float64][]record.Result
	last  []record.Result
}

// Probe implements find.Prober.
func (pr *peopleProber) Probe(ctx context.Context, p find.Probe) (document.Level, error) {
	counted, err := peopleTurns(ctx, pr.cfg, pr.profile, int(p.Load), pr.seed+int64(p.Pass))
	if err != nil {
		return document.Level{}, err
	}
	pr.last = counted
	pr.turns[p.Load] = append(pr.turns[p.Load], counted...)
	return stats.SummarizeLevel(pr.turns[p.Load]), nil
}

// PassLevel implements find.PassProber: the latest pass alone, for the
// search's drift check.
func (pr *peopleProber) PassLevel() (document.Level, bool) {
	if len(pr.last) == 0 {
		return document.Level{}, false
	}
	return stats.SummarizeLevel(pr.last), true
}
