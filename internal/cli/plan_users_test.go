package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/plan"
)

// users4090 are the 4090 question's servers, one per family: the
// configuration plan --users is asked about and capacity measures.
var users4090 = []users4090Case{
	{"vLLM", "vllm", "awq", "auto"},
	{"llama.cpp", "llamacpp", "q4_k_m", "f16"},
}

// users4090Case is one of them: its family, weights and KV dtype.
type users4090Case struct{ name, family, quant, kv string }

// users4090Common are the 4090 question's GPU, model and context.
var users4090Common = []string{"--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--context", "4096"}

// planJSON is plan --users users --json for tc's configuration on one GPU.
func (tc users4090Case) planJSON(t *testing.T, users int) plan.Recommendation {
	t.Helper()
	args := append([]string{"plan", "--gpus", "1", "--backend", tc.family, "--quant", tc.quant, "--kv-dtype", tc.kv, "--users", itoa(users), "--json"}, users4090Common...)
	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("plan --users %d: exit %d: %s", users, code, stderr)
	}
	var rec plan.Recommendation
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestPlanUsersAgreesWithCapacity: the two answers to "how many users"
// agree with each other on the simulator (compared with each other, not
// with fixed numbers, which the engine's calibration moves), for the 4090
// question (Qwen2.5-14B, 4,096-token context) on vLLM (AWQ) and on
// llama.cpp (q4_k_m): capacity answers N* (lo–hi) for the server plan
// --users proposes; plan --users says that configuration holds lo people
// within the default SLO and breaks at hi + 1, naming a figure capacity
// names as the one that broke. For llama.cpp that server is plan's: as
// many slots of the context as fit (read from plan's answer), with flash
// attention. Both simulate each probe on a fresh server, and plan's
// verdict at N is the first probe of capacity's own search from N, so
// they agree at the edge by construction.
func TestPlanUsersAgreesWithCapacity(t *testing.T) {
	common := users4090Common
	for _, tc := range users4090 {
		t.Run(tc.name, func(t *testing.T) {
			verdict := func(users int) plan.Candidate {
				t.Helper()
				rec := tc.planJSON(t, users)
				for _, c := range rec.Fits {
					if c.GPUs == 1 && c.HoldsSLO != nil {
						t.Logf("plan --users %d: %.1f sequences, %s", users, c.Sequences, c.SLOVerdict)
						return c
					}
				}
				t.Fatalf("plan --users %d: no judged %s configuration on one GPU among %d fits", users, tc.name, len(rec.Fits))
				return plan.Candidate{}
			}
			server := append([]string{"--backend", "sim", "--scheduler", tc.family, "--quant", tc.quant, "--kv-dtype", tc.kv, "--quiet"}, common...)
			slots := 0
			if tc.family == "llamacpp" {
				// plan's llama.cpp for many people: the slots that fit
				slots = int(verdict(256).Sequences)
				if slots < 1 || slots >= 256 {
					t.Fatalf("plan's llama.cpp server has %d slots; want 1 to 255", slots)
				}
				server = append(server, "--flash-attn", "--parallel", itoa(slots))
				server = append(server, "--context", itoa(4096*slots))
			}
			out := filepath.Join(t.TempDir(), "capacity.json")
			code, stdout, stderr := run(t, append([]string{"capacity", "--out", out}, server...)...)
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
			if lo <= slots {
				t.Fatalf("capacity's low end %d is within plan's %d slots: plan would propose another server there", lo, slots)
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
		})
	}
}

// TestPlanPredictedUsersAgreesWithCapacity: plan --users' predicted
// users of a configuration (its users search, from N up to 16 × N, each
// probe on a fresh simulated server) agree with capacity --backend sim's
// answer for the same server and seed (one search from 1 on one server):
// the same number, or intervals that overlap. They are compared with each
// other, not with fixed numbers. N is a quarter of capacity's low end,
// so that plan's search brackets the answer rather than stopping at its
// cap, and for llama.cpp more than plan's slots, so that plan proposes
// the server capacity measures (as many slots of the context as fit).
func TestPlanPredictedUsersAgreesWithCapacity(t *testing.T) {
	common := users4090Common
	for _, tc := range users4090 {
		t.Run(tc.name, func(t *testing.T) {
			fit := func(users int) plan.Candidate {
				t.Helper()
				rec := tc.planJSON(t, users)
				if len(rec.Fits) != 1 {
					t.Fatalf("plan --users %d: %d fits; want the one configuration asked for", users, len(rec.Fits))
				}
				return rec.Fits[0]
			}
			server := append([]string{"--backend", "sim", "--scheduler", tc.family, "--quant", tc.quant, "--kv-dtype", tc.kv, "--seed", "1", "--quiet"}, common...)
			slots := 0
			if tc.family == "llamacpp" {
				slots = int(fit(256).Sequences)
				server = append(server, "--flash-attn", "--parallel", itoa(slots), "--context", itoa(4096*slots))
			}
			out := filepath.Join(t.TempDir(), "capacity.json")
			if code, _, stderr := run(t, append([]string{"capacity", "--out", out}, server...)...); code != 0 {
				t.Fatalf("capacity: exit %d: %s", code, stderr)
			}
			a := readAnswer(t, out)
			if a.Load == nil || a.LoadCILow == nil || a.LoadCIHigh == nil {
				t.Fatalf("capacity answered %v (%v–%v): want a bounded answer", a.Load, a.LoadCILow, a.LoadCIHigh)
			}
			users := max(slots+1, int(*a.LoadCILow)/4, 1)
			c := fit(users)
			if c.PredictedUsers == nil || c.PredictedUsersLow == nil || c.HeadroomUsers == nil {
				t.Fatalf("plan --users %d: predicted users %v (low %v), %s %s: want a prediction", users, c.PredictedUsers, c.PredictedUsersLow, c.SLOVerdict, c.CapacityNote)
			}
			if *c.HeadroomUsers != *c.PredictedUsers-float64(users) {
				t.Errorf("plan --users %d: headroom %v users with %v predicted; want predicted − %d", users, *c.HeadroomUsers, *c.PredictedUsers, users)
			}
			high := "∞"
			if c.PredictedUsersHigh != nil {
				high = fmt.Sprint(*c.PredictedUsersHigh)
			}
			t.Logf("capacity: %v (%v–%v); plan --users %d: %v (%v–%s)", *a.Load, *a.LoadCILow, *a.LoadCIHigh, users, *c.PredictedUsers, *c.PredictedUsersLow, high)
			same := *c.PredictedUsers == *a.Load
			overlap := *c.PredictedUsersLow <= *a.LoadCIHigh && (c.PredictedUsersHigh == nil || *a.LoadCILow <= *c.PredictedUsersHigh)
			if !same && !overlap {
				t.Errorf("plan --users %d predicts %v users (%v–%s); capacity answers %v (%v–%v): want the same answer or overlapping intervals",
					users, *c.PredictedUsers, *c.PredictedUsersLow, high, *a.Load, *a.LoadCILow, *a.LoadCIHigh)
			}
		})
	}
}
