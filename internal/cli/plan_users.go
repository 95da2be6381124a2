package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/workload"
)

// plan --users judges each configuration that holds the users with the
// model of people of `run --backend sim --users N` and asks capacity's
// question of it with capacity's search: the same simulated server
// (simrun, on the engine's virtual clock, each level on a fresh one as
// capacity's), the same profile's conversations (workload.People) and
// load's users method, levels of people counting defaultUserTurns turns,
// judged against DefaultCapacitySLO by the search of find and capacity.
// The verdict at N is that search's verdict of its first probe, at N
// (measured again while undecided, as capacity measures a probe), so
// that plan's verdict at N and capacity's probe at N are one judgement;
// the predicted users are the same search carried on (plan_capacity.go).

// usersSearches are the users searches of plan --users' configurations,
// one per configuration: its verdict at the users asked for is the
// search's first probe (performance), its capacity the search carried to
// its end (capacity).
type usersSearches struct {
	ctx     context.Context
	profile workload.Profile
	seed    int64
	bounds  []slo.Bound
	byCand  map[*plan.Candidate]*peopleSearch
}

// newUsersSearches readies the searches for people of profile p, seeded
// with seed.
func newUsersSearches(ctx context.Context, p workload.Profile, seed int64) *usersSearches {
	bounds, err := slo.Parse(DefaultCapacitySLO)
	if err != nil {
		panic(err) // a constant
	}
	return &usersSearches{ctx: ctx, profile: p, seed: seed, bounds: bounds, byCand: map[*plan.Candidate]*peopleSearch{}}
}

// search is c's users search from users people, its first probe
// decided: made on the first call, kept for the later ones.
func (u *usersSearches) search(c *plan.Candidate, users int) (*peopleSearch, error) {
	if ps := u.byCand[c]; ps != nil {
		return ps, nil // plan.Recommend asks capacity of c after its performance, with the same users
	}
	cfg, err := sim.CandidateConfig(c, users)
	if err != nil {
		return nil, err
	}
	ps, err := newPeopleSearch(u.ctx, cfg, u.profile, u.seed, u.bounds, users)
	if err != nil {
		return nil, err
	}
	if err := ps.first(u.ctx); err != nil {
		return nil, err
	}
	u.byCand[c] = ps
	return ps, nil
}

// performance is plan.Recommend's ThroughputFunc: the search's verdict
// of its first probe, users people, with that level's figures pooled
// over its passes.
func (u *usersSearches) performance(c *plan.Candidate, users int) (plan.Performance, error) {
	ps, err := u.search(c, users)
	if err != nil {
		return plan.Performance{}, err
	}
	pr, ok := ps.result(float64(users))
	if !ok {
		return plan.Performance{}, fmt.Errorf("the simulated level of %d people was not measured", users)
	}
	l := pr.Level()
	if l.ThroughputTokS == nil || l.TTFTP50Ms == nil || l.TPOTP50Ms == nil {
		return plan.Performance{}, fmt.Errorf("the simulated level of %d people finished no turn", users)
	}
	holds := pr.Verdict == find.Pass
	counted := ps.pr.turns[float64(users)]
	return plan.Performance{TokPerS: *l.ThroughputTokS, TTFTP50Ms: *l.TTFTP50Ms, TPOTP50Ms: *l.TPOTP50Ms,
		HoldsSLO: &holds, Verdict: verdictWords(slo.Judge(slo.Of(&l), u.bounds)), SLO: DefaultCapacitySLO, ErrorNote: failedTurns(counted),
		Source: fmt.Sprintf("simulated (servebench's simulator, documented defaults, no fit): %d %s people as run --backend sim --users %d --user-profile %s sends them, judged as capacity's search judges its probe there (%d counted turns a pass, each on a fresh server, measured again while undecided)",
			users, u.profile.Name, users, u.profile.Name, defaultUserTurns)}, nil
}

// failedTurns says how many of the counted turns failed and with which
// errors, the most common first ("3 of 72 counted turns failed: HTTP
// 400: the request exceeds the available context size"); "" when none
// did.
func failedTurns(counted []record.Result) string {
	byError := map[string]int{}
	var order []string
	failed := 0
	for i := range counted {
		if counted[i].OK() {
			continue
		}
		failed++
		e := counted[i].Error
		if e == "" {
			e = string(counted[i].Reason)
		}
		if byError[e] == 0 {
			order = append(order, e)
		}
		byError[e]++
	}
	if failed == 0 {
		return ""
	}
	slices.SortStableFunc(order, func(a, b string) int { return byError[b] - byError[a] })
	parts := make([]string, len(order))
	for i, e := range order {
		parts[i] = fmt.Sprintf("%s (%d)", e, byError[e])
	}
	return fmt.Sprintf("%d of %d counted turns failed: %s", failed, len(counted), strings.Join(parts, "; "))
}

// verdictWords is a judgement in words, naming the figures that decided:
// "breaks: ttft_p95 1712.4 ms > 1000 ms", or "holds: ttft_p95 310.52 ms
// ≤ 1000 ms, tpot_p95 41.3 ms ≤ 100 ms".
func verdictWords(j slo.Judgement) string {
	if !j.Pass() {
		parts := make([]string, len(j.Broken))
		for i, b := range j.Broken {
			parts[i] = b.String()
		}
		return "breaks: " + strings.Join(parts, ", ")
	}
	parts := make([]string, len(j.Checks))
	for i, c := range j.Checks {
		parts[i] = c.String()
	}
	return "holds: " + strings.Join(parts, ", ")
}
