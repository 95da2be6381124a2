package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/plan"
)

// vllmUsers is the 4090 question on simulated vLLM: Qwen2.5-14B AWQ with
// a 4,096-token max_model_len.
var vllmUsers = []string{"--backend", "sim", "--scheduler", "vllm", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "awq", "--context", "4096", "--quiet"}

// TestPlanUsersAgreesWithCapacity: the two answers to "how many users"
// agree with each other on the simulator (compared with each other, not
// with fixed numbers, which the engine's calibration moves): capacity
// answers N* (lo–hi) for vLLM serving the 4090 question; plan --users
// says the same configuration holds lo people within the default SLO
// and breaks at hi + 1, naming a figure capacity names as the one that
// broke. plan simulates each level on a fresh server and capacity's
// search one level after another on one, so they agree at the edge only
// because both run the same people through the same load method.
func TestPlanUsersAgreesWithCapacity(t *testing.T) {
	out := filepath.Join(t.TempDir(), "capacity.json")
	code, stdout, stderr := run(t, append([]string{"capacity", "--out", out}, vllmUsers...)...)
	if code != 0 {
		t.Fatalf("capacity: exit %d: %s", code, stderr)
	}
	a := readAnswer(t, out)
	if a.LoadCILow == nil || a.LoadCIHigh == nil || len(a.FailedBy) == 0 {
		t.Fatalf("capacity answered %v (%v–%v), failed by %v: want a bounded answer and what broke above it", a.Load, a.LoadCILow, a.LoadCIHigh, a.FailedBy)
	}
	lo, hi := int(*a.LoadCILow), int(*a.LoadCIHigh)
	first, _, _ := strings.Cut(stdout, "\n")
	t.Logf("capacity: %s", first)
	verdict := func(users int) plan.Candidate {
		t.Helper()
		code, stdout, stderr := run(t, "plan", "--model", "qwen2.5-14b", "--gpu", "RTX 4090", "--gpus", "1", "--backend", "vllm", "--quant", "awq",
			"--kv-dtype", "auto", "--context", "4096", "--users", itoa(users), "--json")
		if code != 0 {
			t.Fatalf("plan --users %d: exit %d: %s", users, code, stderr)
		}
		var rec plan.Recommendation
		if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
			t.Fatal(err)
		}
		for _, c := range rec.Fits {
			if c.Quant == "awq" && c.KVDtype == plan.KVAuto && c.GPUs == 1 && c.HoldsSLO != nil {
				t.Logf("plan --users %d: %s", users, c.SLOVerdict)
				return c
			}
		}
		t.Fatalf("plan --users %d: no judged vLLM AWQ configuration on one GPU among %d fits", users, len(rec.Fits))
		return plan.Candidate{}
	}
	if c := verdict(lo); !*c.HoldsSLO || !strings.HasPrefix(c.SLOVerdict, "holds: ") {
		t.Errorf("plan --users %d (capacity's low end): %s; want holds", lo, c.SLOVerdict)
	}
	c := verdict(hi + 1)
	if *c.HoldsSLO || !strings.HasPrefix(c.SLOVerdict, "breaks: ") {
		t.Fatalf("plan --users %d (above capacity's high end): %s; want breaks", hi+1, c.SLOVerdict)
	}
	named := false
	for _, b := range a.FailedBy {
		named = named || strings.Contains(c.SLOVerdict, string(b.Bound.Metric)+" ")
	}
	if !named {
		t.Errorf("plan --users %d breaks by %q; capacity's search broke by %v: want a figure in common", hi+1, c.SLOVerdict, a.FailedBy)
	}
}
