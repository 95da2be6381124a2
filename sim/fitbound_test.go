package sim

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/limits"
)

// TestFitBoundsLevelsAndReportsProgress: a run of more than
// limits.MaxFitLevels levels is fitted on that many, spread from its
// lowest load to its highest, its other levels predicted (not fitted)
// and a note says so; Progress hears of each run fitted.
func TestFitBoundsLevelsAndReportsProgress(t *testing.T) {
	doc := readSweep(t)
	doc.Runs = doc.Runs[5:6] // vllm-fp16kv-chat
	run := &doc.Runs[0]
	n := limits.MaxFitLevels + 6
	base := run.Levels[0]
	run.Levels = run.Levels[:0]
	for c := 1; c <= n; c++ {
		l := base
		l.Concurrency, l.Requests = c, 8
		run.Levels = append(run.Levels, l)
	}
	var calls []string
	prof, err := FitDocument(doc, FitOptions{MaxIter: 2, Seed: 1, Progress: func(label string, done, total int) {
		calls = append(calls, label+" "+string(rune('0'+done))+"/"+string(rune('0'+total)))
	}})
	if prof == nil {
		t.Fatalf("fit: %v", err)
	}
	rp := prof.Runs[0]
	if len(rp.FitLevels) != limits.MaxFitLevels || rp.FitLevels[0] != 1 || rp.FitLevels[len(rp.FitLevels)-1] != n {
		t.Fatalf("fitted on %d levels %v, want %d from 1 to %d", len(rp.FitLevels), rp.FitLevels, limits.MaxFitLevels, n)
	}
	predicted := map[int]bool{}
	for _, r := range rp.Residuals {
		if !r.Fitted {
			predicted[r.Level] = true
		}
	}
	if len(predicted) != n-limits.MaxFitLevels {
		t.Errorf("%d levels predicted, want %d", len(predicted), n-limits.MaxFitLevels)
	}
	if !strings.Contains(strings.Join(rp.Notes, " "), "fitted on 64 of its 70 levels") {
		t.Errorf("notes %q do not say the levels were bounded", rp.Notes)
	}
	if len(calls) != 1 || calls[0] != rp.Label+" 1/1" {
		t.Errorf("progress calls %q, want one for %s", calls, rp.Label)
	}
}
