package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
)

var rtx4090 = Device{Name: "GeForce RTX 4090", MemoryGiB: 23.63}

// TestRecommendRanking: every configuration that holds the users is
// listed, ranked by class of weight precision (16-bit, 8-bit, 4-bit),
// then KV cache loss (lossless, 8-bit, 4-bit), then fewer GPUs, then
// headroom; each one's own plan holds the users.
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
		pk := [4]float64{float64(precisionClass(p.BitsPerWeight)), float64(kvLoss(p.KVDtype)), float64(p.GPUs), -p.HeadroomPct}
		ck := [4]float64{float64(precisionClass(c.BitsPerWeight)), float64(kvLoss(c.KVDtype)), float64(c.GPUs), -c.HeadroomPct}
		if slices.Compare(pk[:], ck[:]) > 0 {
			t.Errorf("%d ranked after %d: %s %s %s ×%d / %s %s %s ×%d", i, i-1, c.Backend, c.Quant, c.KVDtype, c.GPUs, p.Backend, p.Quant, p.KVDtype, p.GPUs)
		}
	}
	best := rec.Fits[0]
	if best.BitsPerWeight != 16 || kvLoss(best.KVDtype) != 0 {
		t.Errorf("best %s %s %s ×%d, want 16-bit weights with a lossless KV cache", best.Backend, best.Quant, best.KVDtype, best.GPUs)
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
	hook := func(c *Candidate, users int) (Performance, error) {
		calls++
		if users != 8 || c.Inputs.Model.Name != m.Name {
			t.Errorf("hook got %d users, model %q", users, c.Inputs.Model.Name)
		}
		if c.Backend == backend.SGLang {
			return Performance{}, errors.New("no SGLang profile")
		}
		return Performance{TokPerS: 1000 * float64(c.GPUs), TTFTP50Ms: 100, TPOTP50Ms: 10, Source: "test"}, nil
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
		case c.Backend == backend.VLLM && (c.PredictedTokS == nil || *c.PredictedTokS != 1000*float64(c.GPUs) ||
			c.PredictedTTFTP50Ms == nil || *c.PredictedTTFTP50Ms != 100 || c.PredictedTPOTP50Ms == nil || *c.PredictedTPOTP50Ms != 10):
			t.Errorf("vLLM: %+v", c)
		}
	}
	if rec.PerformanceSource != "test" {
		t.Errorf("performance source %q", rec.PerformanceSource)
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

// TestFormatFor: llama.cpp and Ollama are planned in the GGUF format they
// load for a Hugging Face format a person names; other families keep it.
func TestFormatFor(t *testing.T) {
	cases := []struct {
		k    backend.Kind
		q    Quant
		want Quant
	}{
		{backend.LlamaCpp, "awq", "q4_k_m"}, {backend.Ollama, "gptq", "q4_k_m"},
		{backend.LlamaCpp, "fp8", "q8_0"}, {backend.Ollama, "int8", "q8_0"},
		{backend.LlamaCpp, "bf16", "fp16"}, {backend.LlamaCpp, "q4_0", "q4_0"},
		{backend.VLLM, "awq", "awq"}, {backend.SGLang, "fp8", "fp8"},
	}
	for _, c := range cases {
		if got := FormatFor(c.k, c.q); got != c.want {
			t.Errorf("FormatFor(%s, %s) = %s, want %s", c.k, c.q, got, c.want)
		}
	}
	m, _ := modelspec.Preset("qwen2.5-14b")
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 1, Context: 4096, Users: 20, Quants: []Quant{"awq"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.QuantAsked != "awq" {
		t.Errorf("QuantAsked %q, want awq", rec.QuantAsked)
	}
	for _, c := range rec.Fits {
		if (c.Backend == backend.LlamaCpp || c.Backend == backend.Ollama) && c.Quant != "q4_k_m" {
			t.Errorf("%s planned with %s weights, want q4_k_m", c.Backend, c.Quant)
		}
	}
}

// TestRecommendSLOFirst: a configuration whose users the hook judges
// within the SLO ranks before one judged to break it, and one not judged
// (the hook failed) between them, whatever the weight precision; among
// equals the precision order stays.
func TestRecommendSLOFirst(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	holds := func(b bool) *bool { return &b }
	hook := func(c *Candidate, _ int) (Performance, error) {
		switch {
		case c.GPUs > 1:
			return Performance{}, errors.New("one GPU only")
		case c.BitsPerWeight >= 16:
			return Performance{TokPerS: 1, HoldsSLO: holds(false), Verdict: "breaks: ttft_p95", SLO: "ttft_p95=1s"}, nil
		}
		return Performance{TokPerS: 1, HoldsSLO: holds(true), Verdict: "holds", SLO: "ttft_p95=1s"}, nil
	}
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 2, Context: 4096, Users: 4, Backends: []backend.Kind{backend.VLLM}, Throughput: hook})
	if err != nil {
		t.Fatal(err)
	}
	if rec.SLO != "ttft_p95=1s" {
		t.Errorf("recommendation's SLO %q", rec.SLO)
	}
	last, lastBits := -1, 0.0
	for i, c := range rec.Fits {
		r := sloRank(c.HoldsSLO)
		if r < last || r == last && precisionClass(c.BitsPerWeight) < precisionClass(lastBits) {
			t.Errorf("fit %d (%s %s, %d GPUs, SLO rank %d) after SLO rank %d", i, c.Quant, c.KVDtype, c.GPUs, r, last)
		}
		last, lastBits = r, c.BitsPerWeight
	}
	if rec.Fits[0].HoldsSLO == nil || !*rec.Fits[0].HoldsSLO || rec.Fits[len(rec.Fits)-1].HoldsSLO == nil || *rec.Fits[len(rec.Fits)-1].HoldsSLO {
		t.Errorf("first %+v, last %+v: want a holding one first and a breaking one last", rec.Fits[0].HoldsSLO, rec.Fits[len(rec.Fits)-1].HoldsSLO)
	}
}

// TestRecommendHeadroomInUsers: among configurations that tie on the SLO
// verdict, the weight precision, the KV loss and the GPU count, more
// predicted users rank first (the hook's capacity, whatever the KV
// headroom), one whose capacity search failed after those with one and
// by KV headroom among themselves, its failure kept as its note; the
// capacity is asked only of configurations that hold the SLO, and the
// headroom in users is the predicted users less the users.
func TestRecommendHeadroomInUsers(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	holds := func(b bool) *bool { return &b }
	hook := func(c *Candidate, _ int) (Performance, error) {
		return Performance{TokPerS: 1, HoldsSLO: holds(c.BitsPerWeight < 16), Verdict: "v", SLO: "ttft_p95=1s"}, nil
	}
	// the capacity grows as the KV headroom shrinks, so that ranking by
	// it reverses the KV order; llama.cpp's search fails
	asked := 0
	capacity := func(c *Candidate, users int) (UsersCapacity, error) {
		asked++
		if c.HoldsSLO == nil || !*c.HoldsSLO {
			t.Errorf("capacity asked of %s %s, which does not hold the SLO", c.Backend, c.Quant)
		}
		if c.Backend == backend.LlamaCpp {
			return UsersCapacity{}, errors.New("no search")
		}
		lo := float64(users)
		return UsersCapacity{Users: float64(users) + 1000/(1+max(c.HeadroomPct, 0)), Low: &lo, Source: "test"}, nil
	}
	rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 1, Context: 4096, Users: 4, SequenceTokens: 1958,
		Backends: []backend.Kind{backend.VLLM, backend.SGLang, backend.LlamaCpp}, Throughput: hook, Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	if asked == 0 || rec.CapacitySource != "test" {
		t.Fatalf("capacity asked %d times, source %q", asked, rec.CapacitySource)
	}
	tie := func(a, b *Candidate) bool {
		return sloRank(a.HoldsSLO) == sloRank(b.HoldsSLO) && precisionClass(a.BitsPerWeight) == precisionClass(b.BitsPerWeight) &&
			kvLoss(a.KVDtype) == kvLoss(b.KVDtype) && a.GPUs == b.GPUs
	}
	reversed := false
	for i := range rec.Fits {
		c := &rec.Fits[i]
		switch {
		case c.HoldsSLO != nil && *c.HoldsSLO && c.Backend != backend.LlamaCpp:
			if c.PredictedUsers == nil || c.HeadroomUsers == nil || *c.HeadroomUsers != *c.PredictedUsers-4 {
				t.Errorf("%s %s %s: predicted %v, headroom %v users: want predicted − 4", c.Backend, c.Quant, c.KVDtype, c.PredictedUsers, c.HeadroomUsers)
			}
		case c.PredictedUsers != nil:
			t.Errorf("%s %s %s: predicted users %v without a capacity", c.Backend, c.Quant, c.KVDtype, *c.PredictedUsers)
		case c.HoldsSLO != nil && *c.HoldsSLO && c.CapacityNote != "no search":
			t.Errorf("%s %s %s: capacity note %q", c.Backend, c.Quant, c.KVDtype, c.CapacityNote)
		}
		if i == 0 || !tie(&rec.Fits[i-1], c) {
			continue
		}
		p := &rec.Fits[i-1]
		switch {
		case p.PredictedUsers == nil && c.PredictedUsers != nil:
			t.Errorf("fit %d (%s) with predicted users after fit %d (%s) without", i, c.Backend, i-1, p.Backend)
		case p.PredictedUsers != nil && c.PredictedUsers != nil && *p.PredictedUsers < *c.PredictedUsers:
			t.Errorf("fit %d (%s, %v users) after fit %d (%s, %v users)", i, c.Backend, *c.PredictedUsers, i-1, p.Backend, *p.PredictedUsers)
		case p.PredictedUsers == nil && c.PredictedUsers == nil && p.HeadroomPct < c.HeadroomPct:
			t.Errorf("fit %d (%s, %v%%) after fit %d (%s, %v%%) with neither predicted", i, c.Backend, c.HeadroomPct, i-1, p.Backend, p.HeadroomPct)
		}
		reversed = reversed || p.PredictedUsers != nil && c.PredictedUsers != nil && p.HeadroomPct < c.HeadroomPct
	}
	if !reversed {
		t.Error("no tie ranked by predicted users against the KV headroom order: the test does not exercise the key")
	}
}

// TestRecommendPeopleSlots: for people, plan's llama.cpp gives each slot
// the whole context (-c = context × slots), so a conversation's p95 fits
// a slot whenever it fits the context, and the recommendation says
// conversations overflow exactly when their p95 is longer than it.
func TestRecommendPeopleSlots(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	for _, tc := range []struct {
		name            string
		context, tokens int
	}{
		{"chat fits", 4096, 1958},
		{"code overflows", 4096, 7288},
		{"exactly the context", 2048, 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Recommend(Request{Model: m, GPU: rtx4090, MaxGPUs: 1, Context: tc.context, Users: 64, SequenceTokens: tc.tokens, Backends: []backend.Kind{backend.LlamaCpp}})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Overflows != (tc.tokens > tc.context) {
				t.Errorf("overflows %v with p95 %d of a %d context", rec.Overflows, tc.tokens, tc.context)
			}
			if len(rec.Fits) == 0 {
				t.Fatal("no llama.cpp configuration holds the people")
			}
			for _, c := range rec.Fits {
				if in := c.Inputs; in.LlamaCpp.Parallel < 1 || in.Context != tc.context*in.LlamaCpp.Parallel {
					t.Errorf("%s %s: -c %d over %d slots: want %d a slot", c.Quant, c.KVDtype, in.Context, in.LlamaCpp.Parallel, tc.context)
				}
			}
		})
	}
}
