package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/find"
)

// simServer is the simulated server of the fresh-level tests: vLLM (AWQ)
// on an RTX 4090, Qwen2.5-14B with a 4,096-token context.
var simServer = []string{"--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "awq", "--context", "4096", "--seed", "3", "--quiet"}

// TestSimLevelIndependentOfPath: a simulated level starts on a fresh
// server, so its figures are those of the level alone, whatever the
// sweep or search ran before it: run --users A,B gives level B the
// figures run --users B does, and a users search that reaches a load
// late (from --start 1, after six doublings) gives it the passes,
// requests, verdict and figures of one that starts there (--start 64).
func TestSimLevelIndependentOfPath(t *testing.T) {
	t.Run("run", func(t *testing.T) {
		levels := map[string]document.Level{}
		for _, users := range []string{"8,48", "48"} {
			out := filepath.Join(t.TempDir(), "run.json")
			if code, _, stderr := run(t, append([]string{"run", "--users", users, "--out", out}, simServer...)...); code != 0 {
				t.Fatalf("run --users %s: exit %d: %s", users, code, stderr)
			}
			doc := readDoc(t, out)
			ls := doc.Runs[0].Levels
			levels[users] = ls[len(ls)-1]
		}
		late, alone := levels["8,48"], levels["48"]
		if late.Requests == 0 || late.TTFTP95Ms == nil {
			t.Fatalf("run --users 8,48: level 48 counted %d turns, TTFT p95 %v: want a measured level", late.Requests, late.TTFTP95Ms)
		}
		if a, b := marshal(t, late), marshal(t, alone); a != b {
			t.Errorf("level 48 after level 8:\n%s\nwant as run alone:\n%s", a, b)
		}
	})
	t.Run("capacity", func(t *testing.T) {
		const load = 64
		probes := map[string]find.ProbeResult{}
		for _, start := range []string{"1", itoa(load)} {
			out := filepath.Join(t.TempDir(), "capacity.json")
			if code, _, stderr := run(t, append([]string{"capacity", "--start", start, "--out", out}, simServer...)...); code != 0 {
				t.Fatalf("capacity --start %s: exit %d: %s", start, code, stderr)
			}
			a := readAnswer(t, out)
			for _, p := range a.Probes {
				if p.Load == load {
					probes[start] = p
				}
			}
			if _, ok := probes[start]; !ok {
				t.Fatalf("capacity --start %s: no probe at %d users among %d", start, load, len(a.Probes))
			}
		}
		late, first := probes["1"], probes[itoa(load)]
		if late.Passes == 0 || len(late.Checks) == 0 {
			t.Fatalf("the probe at %d users: %d passes, %d checks: want a measured probe", load, late.Passes, len(late.Checks))
		}
		if a, b := marshal(t, late), marshal(t, first); a != b {
			t.Errorf("the probe at %d users reached from 1:\n%s\nwant as the first probe of a search from %d:\n%s", load, a, load, b)
		}
	})
}

// marshal is v as JSON, for comparing whole levels and probes.
func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
