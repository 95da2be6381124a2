package report

import (
	"testing"

	"github.com/servebench/servebench/document"
)

// TestLevelWarningsNameTheLoad: a warning several levels give is said once
// per run, naming its levels as the level table names the run's load:
// concurrency, people, or requests/s (a rate level's concurrency is only
// its cap, the same at every rate).
func TestLevelWarningsNameTheLoad(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	level := func(c int, r *float64, w string) document.Level {
		l := document.Level{Warnings: []string{w}, RequestedRate: r}
		l.Concurrency = c
		return l
	}
	for _, tc := range []struct {
		name, method string
		levels       []document.Level
		want         string
	}{
		{"pool", "pool", []document.Level{level(1, nil, "slow 1.5"), level(4, nil, "slow 2.5")},
			"c=1, 4: slow 1.5 (figures of c=1; the other levels' alike)"},
		{"users", "users", []document.Level{level(20, nil, "cut"), level(80, nil, "cut")}, "users 20, 80: cut"},
		{"rate", "rate", []document.Level{level(8, rate(1), "lag"), level(8, rate(2.5), "lag")}, "1, 2.5 req/s: lag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &document.Run{Levels: tc.levels}
			run.Method = tc.method
			var ws []levelWarning
			for _, l := range run.Levels {
				ws = append(ws, levelWarning{loadColumn(run).cell(l), l.Warnings[0]})
			}
			got := foldLevelWarnings(ws, loadColumn(run).words)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
