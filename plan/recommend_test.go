package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
)

var rtx4090 = Device{Name: "GeForce RTX 4090", MemoryGiB: 23.63}

// TestRecommendRanking: every configuration that holds the users is
// listed, ranked by weight precision, then fewer GPUs, then headroom;
// each one's own plan holds the users.
func TestRecommendRanking(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 4, Context: 32768, Users: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Fits) == 0 || rec.Tried <= len(rec.Fits) || len(rec.Nearest) != 0 {
		t.Fatalf("%d of %d fit, %d nearest", len(rec.Fits), rec.Tried, len(rec.Nearest))
	}
	for i, c := range rec.Fits {
		if !c.Holds || c.Sequences < 16 || c.Missing != "" || c.PredictedTokS != nil {
			t.Errorf("%d: %+v holds %v with %.1f sequences", i, c, c.Holds, c.Sequences)
		}
		if i == 0 {
			continue
		}
		p := rec.Fits[i-1]
		if p.BitsPerWeight < c.BitsPerWeight || (p.BitsPerWeight == c.BitsPerWeight && (p.GPUs > c.GPUs ||
			(p.GPUs == c.GPUs && p.HeadroomPct < c.HeadroomPct))) {
			t.Errorf("%d ranked after %d: %+v / %+v", i, i-1, c, p)
		}
	}
	best := rec.Fits[0]
	if best.BitsPerWeight != 16 || best.GPUs != 1 {
		t.Errorf("best %+v, want 16-bit weights on one GPU", best)
	}
	res, err := Plan(best.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Predictions[0]; !p.Fits || p.Host != nil {
		t.Errorf("the best configuration's own plan: %+v", p)
	}
}

// TestRecommendNone: when nothing holds the users, Nearest lists the
// closest configurations and what each lacks.
func TestRecommendNone(t *testing.T) {
	m, _ := modelspec.Preset("llama-3.1-70b")
	rec, err := Recommend(Request{Model: m, GPU: Device{Name: "GeForce RTX 3060 12GB", MemoryGiB: 12}, MaxGPUs: 2, Context: 131072, Users: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Fits) != 0 || len(rec.Nearest) == 0 {
		t.Fatalf("%d fit, %d nearest", len(rec.Fits), len(rec.Nearest))
	}
	for _, c := range rec.Nearest {
		if c.Holds || c.Missing == "" {
			t.Errorf("nearest %+v without what is missing", c)
		}
	}
}

// TestRecommendHook: the throughput hook is called for every fitting
// configuration and its answer (or error) kept beside it.
func TestRecommendHook(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	calls := 0
	hook := func(c *Candidate, users int) (float64, error) {
		calls++
		if users != 8 || c.Inputs.Model.Name != m.Name {
			t.Errorf("hook got %d users, model %q", users, c.Inputs.Model.Name)
		}
		if c.Backend == backend.SGLang {
			return 0, errors.New("no SGLang profile")
		}
		return 1000 * float64(c.GPUs), nil
	}
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 2, Context: 8192, Users: 8, Backends: []backend.Kind{backend.VLLM, backend.SGLang}, Throughput: hook})
	if err != nil {
		t.Fatal(err)
	}
	if calls != len(rec.Fits) || calls == 0 {
		t.Fatalf("%d calls for %d fits", calls, len(rec.Fits))
	}
	for _, c := range rec.Fits {
		switch {
		case c.Backend == backend.SGLang && (c.PredictedTokS != nil || !strings.Contains(c.ThroughputNote, "no SGLang")):
			t.Errorf("SGLang: %+v", c)
		case c.Backend == backend.VLLM && (c.PredictedTokS == nil || *c.PredictedTokS != 1000*float64(c.GPUs)):
			t.Errorf("vLLM: %+v", c)
		}
	}
}

// TestRecommendNarrowed: a backend or format given narrows the search;
// bad requests are InputErrors.
func TestRecommendNarrowed(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 1, Context: 8192, Users: 4, Backends: []backend.Kind{backend.LlamaCpp}, Quants: []Quant{"q4_k_m"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Tried != 3 {
		t.Errorf("tried %d, want llama.cpp q4_k_m × 3 KV dtypes × 1 GPU", rec.Tried)
	}
	for _, c := range append(rec.Fits, rec.Nearest...) {
		if c.Backend != backend.LlamaCpp || c.Quant != "q4_k_m" {
			t.Errorf("%+v outside the narrowing", c)
		}
	}
	var ie *InputError
	for _, r := range []Request{{Model: m, GPU: rtx4090, Context: 8192, Users: 0}, {Model: m, GPU: rtx4090, Context: 0, Users: 1},
		{Model: m, GPU: Device{}, Context: 8192, Users: 1}, {Model: m, GPU: rtx4090, Context: 8192, Users: 1, MaxGPUs: MaxGPUs + 1}} {
		if _, err := Recommend(r); !errors.As(err, &ie) {
			t.Errorf("%+v: error %v, want an InputError", r, err)
		}
	}
}
