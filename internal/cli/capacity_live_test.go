package cli

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/internal/testenv"
)

// TestCapacityLiveTestbed: servebench capacity against the Ollama testbed
// (4 slots) answers twice with intervals that overlap. An answer may be
// a lower bound only ("≥ N": under the race detector on 2 busy cores one
// search ended at 112 users with no level broken) and then reaches up
// without end; it must still hold someone. The think time is
// shortened to 300 ms (a chat user's is about 100 s: the search would take
// hours of real time), and the lengths to 32-token messages and answers,
// so the search fits in minutes.
func TestCapacityLiveTestbed(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	start := time.Now()
	var answers [2]find.Answer
	for i := range answers {
		out := filepath.Join(dir, "capacity"+itoa(i)+".json")
		code, stdout, stderr := run(t, "capacity", "--url", url, "--model", model, "--quiet", "--out", out,
			"--think-time", "const:300ms", "--prompt-tokens", "32", "--followup-tokens", "32", "--max-tokens", "32", "--max-repeats", "1")
		if code != 0 {
			t.Fatalf("capacity: exit %d: %s", code, stderr)
		}
		t.Logf("run %d: %s", i+1, firstLine(stdout))
		a := readAnswer(t, out)
		if a.Load == nil || a.LoadCILow == nil || *a.Load < 1 {
			t.Fatalf("run %d: answer %v (from %v): want at least one user held", i+1, a.Load, a.LoadCILow)
		}
		answers[i] = a
	}
	t.Logf("two searches in %v", time.Since(start).Round(time.Second))
	// The two intervals overlap or lie within one step of the search's
	// resolution: each run's interval is its own sampling interval, and
	// on 2 busy cores (the race detector, a stress load beside CI) the
	// spread between runs moved an edge by one step (80–111 and 112–159;
	// 80–95 and ≥ 112), which no interval of one search can know.
	if !intervalsOverlap(answers[0], answers[1], oneStep(answers[0], answers[1])) {
		t.Errorf("the two answers' intervals are more than one step apart:\n%s\n%s", answers[0].Line(), answers[1].Line())
	}
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
