package sim

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// extrapolationSpan is how far past the fitted levels a fit on a sweep's
// two lowest levels is held to predict: levels up to 8× the higher
// fitted concurrency.
const extrapolationSpan = 8

// extrapolationTolerance is the largest throughput error a held-out
// level may show.
const extrapolationTolerance = 0.20

// extrapolationMaxIter is the optimizer's budget per fit of the test:
// the fits of two levels converge well within it, and the default 200
// would take the test twice as long for predictions within 2% of these.
const extrapolationMaxIter = 60

// splitLowest splits rs into its two lowest levels (by key) and the
// levels up to extrapolationSpan × the higher of them.
func splitLowest(rs RunSpec) (fit, held RunSpec, ok bool) {
	var keys []int
	for _, c := range rs.Cases {
		if !slices.Contains(keys, c.Load.Key) {
			keys = append(keys, c.Load.Key)
		}
	}
	slices.Sort(keys)
	if len(keys) < 3 {
		return rs, rs, false
	}
	fit, held = rs, rs
	fit.Cases, held.Cases = nil, nil
	for _, c := range rs.Cases {
		switch {
		case c.Load.Key <= keys[1]:
			fit.Cases = append(fit.Cases, c)
		case c.Load.Key <= extrapolationSpan*keys[1]:
			held.Cases = append(held.Cases, c)
		}
	}
	return fit, held, len(held.Cases) > 0
}

// extrapolate fits the two lowest levels of every run of specs in one
// fit (runs of one server share its chosen settings, as sim fit fits a
// document) and predicts each run's held-out levels: per run, the fitted
// residuals and the held-out ones.
func extrapolate(t testing.TB, specs []RunSpec) (labels []string, in, out [][]Residual) {
	t.Helper()
	var fits, helds []RunSpec
	for _, rs := range specs {
		fit, held, ok := splitLowest(rs)
		if !ok {
			continue
		}
		fits, helds = append(fits, fit), append(helds, held)
	}
	p, err := FitRuns(fits, FitOptions{MaxIter: extrapolationMaxIter})
	var fe *FitError
	if err != nil && !errors.As(err, &fe) {
		t.Fatal(err)
	}
	if len(p.Skipped) > 0 {
		t.Fatalf("runs left out: %s", p.skippedText())
	}
	for i := range p.Runs {
		rp := &p.Runs[i]
		_, res, err := Predict(rp.Config(), &helds[i], 7)
		if err != nil {
			t.Fatalf("%s: predicting held-out levels: %v", rp.Label, err)
		}
		labels, in, out = append(labels, rp.Label), append(in, rp.Residuals), append(out, res)
	}
	return labels, in, out
}

// extrapolationMisses are the runs whose held-out throughput the fit misses
// today, each with why: the test fails if one of them starts to meet
// the tolerance (take it off the list) as it fails any other run that
// misses it.
var extrapolationMisses = map[string]string{
	// C=16 measured 527 tok/s, predicted 269 (−49%):
	// the document records no slot count, and levels 1 and 4 (with the
	// long runs' 8 and 16 of the same server) cannot bound it from above.
	"llamacpp-f16kv-chat": "slot count unbounded by the fitted levels",
	// C=16 measured 99.1 tok/s, predicted 119.9 (+21%): one slot, whose
	// measured TPOT grows from 7.9 to 10.4 ms with the queue, which no
	// step-time term of one sequence follows.
	"ollama-q4km": "TPOT grows with the queue at one slot",
}

// checkExtrapolation logs every residual and fails a held-out
// throughput beyond extrapolationTolerance (or a known miss within it).
func checkExtrapolation(t *testing.T, labels []string, in, out [][]Residual, known map[string]string) {
	for k, label := range labels {
		miss := false
		defer func() {
			why, ok := known[label]
			switch {
			case ok && !miss:
				t.Errorf("%s is listed as a known miss (%s) but now meets ±%.0f%%: take it off the list", label, why, extrapolationTolerance*100)
			case ok:
				t.Logf("%s: known miss: %s", label, why)
			}
		}()
		for _, r := range in[k] {
			t.Logf("%s fitted   c=%d %s measured %.4g predicted %.4g (%+.1f%%)", label, r.Level, r.Metric, r.Measured, r.Predicted, r.ErrorPct)
		}
		for _, r := range out[k] {
			t.Logf("%s held-out c=%d %s measured %.4g predicted %.4g (%+.1f%%)", label, r.Level, r.Metric, r.Measured, r.Predicted, r.ErrorPct)
			if (r.Metric == MetricThroughput || r.Metric == MetricAggregate) && math.Abs(r.ErrorPct) > extrapolationTolerance*100 {
				miss = true
				if _, ok := known[label]; ok {
					continue
				}
				t.Errorf("%s held-out level %d: throughput %+.1f%% (measured %.4g, predicted %.4g), beyond ±%.0f%%",
					label, r.Level, r.ErrorPct, r.Measured, r.Predicted, extrapolationTolerance*100)
			}
		}
	}
}

// extrapolationRuns are the sweep's runs the test fits: each server
// family once, with a chat and a long-prompt run where one server ran
// both (llama.cpp's slot count and vLLM's token budget are chosen over a
// server's runs together, and the long runs' higher levels are what
// bounds llama.cpp's slots). The KV-dtype twins of these runs fit the
// same way and would double the test's time (every run is fitted at
// every candidate setting).
var extrapolationRuns = []string{"llamacpp-f16kv-chat", "llamacpp-f16kv-long", "ollama-q4km", "vllm-fp16kv-chat", "vllm-fp8kv-chat"}

// TestFitExtrapolatesMultiBackendSweep: a fit on each run's two lowest
// levels predicts the throughput of its higher levels (up to 8× the
// fitted concurrency) within ±20%.
func TestFitExtrapolatesMultiBackendSweep(t *testing.T) {
	all, err := RunSpecs(readSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	var specs []RunSpec
	for _, rs := range all {
		if slices.Contains(extrapolationRuns, rs.Label) {
			specs = append(specs, rs)
		}
	}
	if len(specs) != len(extrapolationRuns) {
		t.Fatalf("the sweep has %d of the runs %v", len(specs), extrapolationRuns)
	}
	labels, in, out := extrapolate(t, specs)
	if len(labels) != len(specs) {
		t.Fatalf("fitted %d of %d runs", len(labels), len(specs))
	}
	checkExtrapolation(t, labels, in, out, extrapolationMisses)
}
