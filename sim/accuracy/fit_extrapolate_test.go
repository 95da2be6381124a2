package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/sim"
)

// sweepKey groups the corpus's cases into single-server sweeps: one
// source, server, board, model, weight format, memory share and
// workload, at several concurrencies.
func sweepKey(c Case) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%g|%d|%d|%d", c.Source, c.Server, c.GPU, c.Preset, c.Quant, c.GPUMemoryUtilization, c.TP, c.PromptTokens, c.OutputTokens)
}

// sweepCase is c as a fit's level: its load keyed by its concurrency
// (a burst's request count) and its published throughput, TPOT and TTFT
// (means where published, else medians) as targets.
func sweepCase(c Case) sim.Case {
	w, l := level(c)
	l.Key = max(l.Concurrency, 1)
	sc := sim.Case{Workload: w, Load: l}
	thr := sim.MetricThroughput
	if l.Method == load.Batch {
		thr = sim.MetricAggregate
	}
	for _, t := range []struct {
		metric string
		v      []*float64
	}{{thr, []*float64{c.Measured.OutputTokS}}, {sim.MetricTPOT, []*float64{c.Measured.TPOTMeanMs, c.Measured.TPOTMedianMs}},
		{sim.MetricTTFT, []*float64{c.Measured.TTFTMeanMs, c.Measured.TTFTMedianMs}}} {
		for _, v := range t.v {
			if v != nil {
				sc.Targets = append(sc.Targets, sim.Target{Metric: t.metric, Measured: *v})
				break
			}
		}
	}
	return sc
}

// corpusSweeps are the corpus's single-server sweeps of at least three
// concurrencies the simulator runs, as RunSpecs.
func corpusSweeps(t *testing.T) []sim.RunSpec {
	f, err := os.Open("../../" + corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string][]Case{}
	var order []string
	for _, c := range cases {
		if c.llamaBench() {
			continue
		}
		if _, err := spec(c); err != nil {
			continue
		}
		k := sweepKey(c)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []sim.RunSpec
	for _, k := range order {
		g := groups[k]
		keys := map[int]bool{}
		rs := sim.RunSpec{Label: g[0].Source + " " + g[0].Preset + " " + g[0].GPU}
		rs.Spec, _ = spec(g[0])
		for _, c := range g {
			sc := sweepCase(c)
			if keys[sc.Load.Key] {
				continue // a repeat at the same concurrency
			}
			keys[sc.Load.Key] = true
			rs.Cases = append(rs.Cases, sc)
		}
		slices.SortFunc(rs.Cases, func(a, b sim.Case) int { return a.Load.Key - b.Load.Key })
		if len(rs.Cases) >= 3 {
			out = append(out, rs)
		}
	}
	return out
}

// corpusKnownMisses are the sweeps (by subtest name) whose held-out
// throughput the fit misses today, with why; a listed sweep that meets
// the tolerance fails the test. None today: dennislee22's Qwen2-7B at
// gpu_memory_utilization 0.25 (100 requests measured 2125 tok/s, fewer
// than 50's 2338, the cache full) came within it (+18%) once an A100's
// tensor rate was taken at the clock it sustains.
var corpusKnownMisses = map[string]string{}

// TestFitExtrapolatesCorpusSweeps: a fit on each corpus sweep's two
// lowest concurrencies predicts the throughput of its levels up to 8×
// the higher of them within ±20%.
func TestFitExtrapolatesCorpusSweeps(t *testing.T) {
	// A sweep with no level within 8× of its two lowest has nothing to
	// hold out: it is left out before the subtests (CI refuses a skip).
	var fits, helds []sim.RunSpec
	for _, rs := range corpusSweeps(t) {
		fit, held := rs, rs
		fit.Cases, held.Cases = rs.Cases[:2], nil
		for _, c := range rs.Cases[2:] {
			if c.Load.Key <= 8*fit.Cases[1].Load.Key {
				held.Cases = append(held.Cases, c)
			}
		}
		if len(held.Cases) > 0 {
			fits, helds = append(fits, fit), append(helds, held)
		}
	}
	if len(fits) < 2 {
		t.Fatalf("found %d single-server sweeps in the corpus with a level to hold out, want at least 2", len(fits))
	}
	for i := range fits {
		fit, held := fits[i], helds[i]
		t.Run(fit.Label, func(t *testing.T) {
			miss := false
			defer func() {
				why, ok := corpusKnownMisses[t.Name()]
				switch {
				case ok && !miss:
					t.Errorf("listed as a known miss (%s) but now meets ±20%%: take it off the list", why)
				case ok:
					t.Logf("known miss: %s", why)
				}
			}()
			p, err := sim.FitRuns([]sim.RunSpec{fit}, sim.FitOptions{})
			var fe *sim.FitError
			if err != nil && !errors.As(err, &fe) {
				t.Fatal(err)
			}
			rp := &p.Runs[0]
			_, res, err := sim.Predict(rp.Config(), &held, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rp.Residuals {
				t.Logf("fitted   c=%d %s measured %.4g predicted %.4g (%+.1f%%)", r.Level, r.Metric, r.Measured, r.Predicted, r.ErrorPct)
			}
			for _, r := range res {
				t.Logf("held-out c=%d %s measured %.4g predicted %.4g (%+.1f%%)", r.Level, r.Metric, r.Measured, r.Predicted, r.ErrorPct)
				if (r.Metric == sim.MetricThroughput || r.Metric == sim.MetricAggregate) && math.Abs(r.ErrorPct) > 20 {
					miss = true
					if _, ok := corpusKnownMisses[t.Name()]; ok {
						continue
					}
					t.Errorf("held-out level %d: throughput %+.1f%% (measured %.4g, predicted %.4g), beyond ±20%%", r.Level, r.ErrorPct, r.Measured, r.Predicted)
				}
			}
		})
	}
}
