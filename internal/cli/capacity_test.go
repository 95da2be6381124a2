package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/find"
)

// llamaUsers is the 4090 question on simulated llama.cpp (its default 4
// slots sharing the 4,096-token context).
var llamaUsers = []string{"--backend", "sim", "--scheduler", "llamacpp", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "q4_k_m", "--context", "4096", "--quiet"}

// TestCapacityAgreesWithRunUsers: servebench capacity answers in one
// sentence first, and is find --by users with the default SLO (the same
// answer); a run --users level at the answer's low end meets the SLO and
// one well above its high end breaks it. "Well above" is 1.5 × (high + 1):
// a 72-turn p95 is the level's fourth-largest TTFT, and near the edge two
// levels of one load can fall on either side of 1 s (at high + 1 = 96
// users one run measured 936 ms after the search saw 80 break), so the
// search's interval is not yet wide enough to hold at high + 1 itself.
// Each simulated level starts on a fresh server, so run --users' level at
// the low end is the first pass of the search's probe there: where that
// pass alone breaks the SLO, the search did not take it as its verdict
// but measured the load again, and its pooled passes meet the SLO.
func TestCapacityAgreesWithRunUsers(t *testing.T) {
	dir := t.TempDir()
	capOut, findOut := filepath.Join(dir, "capacity.json"), filepath.Join(dir, "find.json")
	code, stdout, stderr := run(t, append([]string{"capacity", "--out", capOut}, llamaUsers...)...)
	if code != 0 {
		t.Fatalf("capacity: exit %d: %s", code, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "SIMULATED: RTX 4090, qwen2.5-14b Q4_K_M, llama.cpp: ") || !strings.Contains(first, " chat users (") ||
		!strings.HasSuffix(first, "at TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms") {
		t.Errorf("first line %q: want the answer's sentence", first)
	}
	if code, _, stderr := run(t, append([]string{"find", "--by", "users", "--slo", DefaultCapacitySLO, "--out", findOut}, llamaUsers...)...); code != 0 {
		t.Fatalf("find: exit %d: %s", code, stderr)
	}
	a, b := readAnswer(t, capOut), readAnswer(t, findOut)
	if a.Load == nil || a.LoadCILow == nil || a.LoadCIHigh == nil || b.Load == nil || *a.Load != *b.Load || *a.LoadCILow != *b.LoadCILow || *a.LoadCIHigh != *b.LoadCIHigh {
		t.Fatalf("capacity's answer %v (%v–%v) and find --by users' %v (%v–%v): want one bounded answer, the same", a.Load, a.LoadCILow, a.LoadCIHigh, b.Load, b.LoadCILow, b.LoadCIHigh)
	}
	lo, hi := int(*a.LoadCILow), int(*a.LoadCIHigh)
	t.Logf("capacity: %s", first)
	runOut := filepath.Join(dir, "run.json")
	above := (hi + 1) * 3 / 2
	args := append([]string{"run", "--users", itoa(lo) + "," + itoa(above), "--slo", DefaultCapacitySLO, "--out", runOut}, llamaUsers...)
	if code, _, stderr := run(t, args...); code != 0 {
		t.Fatalf("run --users: exit %d: %s", code, stderr)
	}
	levels := readDoc(t, runOut).Runs[0].Levels
	meets := func(i int) bool {
		l := levels[i]
		return l.TTFTP95Ms != nil && *l.TTFTP95Ms <= 1000 && l.TPOTP95Ms != nil && *l.TPOTP95Ms <= 100
	}
	if !meets(0) && !measuredAgainAndMet(a, float64(lo)) {
		t.Errorf("run --users %d (the answer's low end): TTFT p95 %v ms, TPOT p95 %v ms; want the SLO met, or the search's probe there measured again and met over its passes", lo, *levels[0].TTFTP95Ms, *levels[0].TPOTP95Ms)
	}
	if meets(1) {
		t.Errorf("run --users %d (well above the answer's high end): TTFT p95 %v ms, TPOT p95 %v ms; want the SLO broken", above, *levels[1].TTFTP95Ms, *levels[1].TPOTP95Ms)
	}
}

// measuredAgainAndMet says a's probe at load was measured more than once
// and met the SLO over its passes pooled.
func measuredAgainAndMet(a find.Answer, load float64) bool {
	for _, p := range a.Probes {
		if p.Load == load {
			return p.Passes > 1 && p.Verdict == find.Pass
		}
	}
	return false
}

// readAnswer is the one answer of a find (or capacity) document.
func readAnswer(t *testing.T, path string) find.Answer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Find []find.Answer `json:"find"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Find) != 1 {
		t.Fatalf("%s: %v, %d answers; want one", path, err, len(doc.Find))
	}
	return doc.Find[0]
}
