package cli

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simrun"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// plan --users predicts each configuration that holds the users with the
// model of people of `run --backend sim --users N`: the same simulated
// server (simrun, on the engine's virtual clock), the same profile's
// conversations (workload.People) and load's users method, one level of
// N people counting defaultUserTurns turns, judged against
// DefaultCapacitySLO by slo.Judge, the test of find and capacity.

// usersPerformance is plan.Recommend's ThroughputFunc for people of
// profile p, seeded with seed.
func usersPerformance(ctx context.Context, p workload.Profile, seed int64) plan.ThroughputFunc {
	bounds, err := slo.Parse(DefaultCapacitySLO)
	if err != nil {
		panic(err) // a constant
	}
	return func(c *plan.Candidate, users int) (plan.Performance, error) {
		if n := len(c.Inputs.GPUs); n > 1 {
			return plan.Performance{}, fmt.Errorf("the simulator models one GPU: %d GPUs split the model (tensor parallel or layers), whose communication it does not model yet, so their people are not judged", n)
		}
		cfg, err := sim.CandidateConfig(c, users)
		if err != nil {
			return plan.Performance{}, err
		}
		counted, err := peopleTurns(ctx, cfg, p, users, seed)
		if err != nil {
			return plan.Performance{}, err
		}
		l := stats.SummarizeLevel(counted)
		if l.ThroughputTokS == nil || l.TTFTP50Ms == nil || l.TPOTP50Ms == nil {
			return plan.Performance{}, fmt.Errorf("the simulated level of %d people finished no turn", users)
		}
		j := slo.Judge(slo.Of(&l), bounds)
		holds := j.Pass()
		return plan.Performance{TokPerS: *l.ThroughputTokS, TTFTP50Ms: *l.TTFTP50Ms, TPOTP50Ms: *l.TPOTP50Ms,
			HoldsSLO: &holds, Verdict: verdictWords(j), SLO: DefaultCapacitySLO, ErrorNote: failedTurns(counted),
			Source: fmt.Sprintf("simulated (servebench's simulator, documented defaults, no fit): %d %s people as run --backend sim --users %d --user-profile %s sends them, %d counted turns",
				users, p.Name, users, p.Name, defaultUserTurns)}, nil
	}
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

// peopleTurns simulates one level of n people of profile p on a fresh
// server of cfg and returns its counted turns (the warm-up left out).
func peopleTurns(ctx context.Context, cfg sim.Config, p workload.Profile, n int, seed int64) ([]record.Result, error) {
	v, err := simrun.New(cfg, simrun.Options{Seed: seed, Chat: true})
	if err != nil {
		return nil, err
	}
	spec := workload.Spec{Scenario: workload.Chat, PromptTokens: int(math.Round(p.First.Mean)), MaxTokens: int(math.Round(p.Answer.Mean)), Seed: seed}
	b := workload.NewBuilder(spec, v.Client())
	if err := b.Calibrate(ctx); err != nil {
		return nil, err
	}
	k := &load.Collect{}
	sw := &load.Sweep{Run: "plan", Method: load.Users, Levels: []load.Level{{Level: n, Concurrency: n, Requests: defaultUserTurns}},
		Seed: seed, Client: v.Client(), Source: b, People: &workload.People{Builder: b, Profile: p, Seed: seed},
		Sink: k, Observe: []load.Observer{v.Observer()}, Clock: v}
	if _, err := sw.Do(ctx); err != nil {
		return nil, err
	}
	var counted []record.Result
	for _, r := range k.Results {
		if !r.Warmup {
			counted = append(counted, r)
		}
	}
	return counted, nil
}
