package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/find"
)

// TestCapacityStopsDecisivelyBrokenLevel: a search's probe far past what
// the server sustains (2,048 people on the simulated RTX 4090, whose
// answer is about 1,024) stops once its TTFT p95 is decisively above the
// budget, well before its 2,048 counted turns, and its level says so; a
// probe that holds (256 people) runs its whole length and says nothing.
func TestCapacityStopsDecisivelyBrokenLevel(t *testing.T) {
	common := []string{"capacity", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "awq",
		"--context", "4096", "--max-repeats", "0", "--quiet"}
	for _, tc := range []struct {
		users   int
		stopped bool
	}{{2048, true}, {256, false}} {
		t.Run(fmt.Sprint(tc.users), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "capacity.json")
			n := fmt.Sprint(tc.users)
			code, _, stderr := run(t, append(common, "--start", n, "--max-load", n, "--out", out)...)
			if code != 0 {
				t.Fatalf("capacity: exit %d: %s", code, stderr)
			}
			d := readDoc(t, out)
			if len(d.Runs) != 1 || len(d.Runs[0].Levels) != 1 {
				t.Fatalf("want one run of one level, got %+v", d.Runs)
			}
			l := d.Runs[0].Levels[0]
			note := ""
			for _, w := range l.Warnings {
				if strings.HasPrefix(w, "stopped after ") {
					note = w
				}
			}
			a := readAnswer(t, out)
			if tc.stopped {
				want := fmt.Sprintf("stopped after %d of %d counted turns: ttft_p95 decisively above 1000 ms", l.Requests, tc.users)
				if note != want || l.Requests >= tc.users || a.Stop != find.FirstLoadFails {
					t.Fatalf("level of %d requests, note %q, stop %s: want fewer than %d requests, note %q, %s", l.Requests, note, a.Stop, tc.users, want, find.FirstLoadFails)
				}
				return
			}
			if note != "" || l.Requests < tc.users {
				t.Fatalf("level of %d requests, note %q: want at least %d and no note", l.Requests, note, tc.users)
			}
		})
	}
}
