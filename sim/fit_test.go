package sim

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
)

// TestResolveModel: model names as servers and documents spell them
// resolve to a preset and the weight format the name says.
func TestResolveModel(t *testing.T) {
	cases := []struct{ name, preset, quant string }{
		{"qwen2.5-7b", "qwen2.5-7b", ""},
		{"Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", "awq"},
		{"/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", "qwen2.5-7b", "q4_k_m"},
		{"qwen2.5:7b-instruct", "qwen2.5-7b", "q4_k_m"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
		{"Qwen/Qwen3-8B-FP8", "qwen3-8b", "fp8"},
	}
	for _, tc := range cases {
		m, q, err := resolveModel(tc.name)
		if err != nil || m.Name != tc.preset || string(q) != tc.quant {
			t.Errorf("resolveModel(%q) = %s, %q, %v; want %s, %q", tc.name, m.Name, q, err, tc.preset, tc.quant)
		}
	}
	if _, _, err := resolveModel("acme/frobnicator-13b"); !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "frobnicator") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestSpecErrors: bad input is one clear error naming what to fix, and
// errors.Is tells usage errors apart.
func TestSpecErrors(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		want error
		text string
	}{
		{"unknown GPU", Spec{Backend: backend.VLLM, GPU: "RTX 9090", Model: "qwen2.5-7b"}, ErrUnknownGPU, "RTX 9090"},
		{"unknown model", Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "gpt-5"}, ErrUnknownModel, "gpt-5"},
		{"model does not fit", Spec{Backend: backend.VLLM, GPU: "RTX 3060 12GB", Model: "llama-3.1-70b"}, ErrDoesNotFit, "GiB more"},
		{"llama.cpp weights do not fit", Spec{Backend: backend.LlamaCpp, GPU: "RTX 3060 12GB", Model: "qwen2.5-32b", Quant: "q8_0"}, ErrDoesNotFit, "qwen2.5-32b"},
		{"context larger than the cache", Spec{Backend: backend.VLLM, GPU: "RTX 4060 Ti 16GB", Model: "qwen2.5-14b", Quant: "awq", Server: Server{MaxModelLen: 131072}}, ErrDoesNotFit, "max_model_len"},
		{"unknown backend", Spec{Backend: "tgi", GPU: "RTX 4090", Model: "qwen2.5-7b"}, ErrBadInput, "tgi"},
		{"unknown quant", Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b", Quant: "q3"}, ErrBadInput, "q3"},
		{"unknown KV dtype", Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b", KVDtype: "fp4"}, ErrBadInput, "fp4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Config()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v; want %v mentioning %q, on one line", err, tc.want, tc.text)
			}
		})
	}
}

// TestFitTooFewLevels: a run without a measured figure cannot be fitted.
func TestFitTooFewLevels(t *testing.T) {
	doc := readSweep(t)
	doc.Runs = doc.Runs[5:6]
	for i := range doc.Runs[0].Levels {
		l := &doc.Runs[0].Levels[i]
		l.ThroughputTokS, l.TTFTP50Ms, l.TPOTP50Ms = nil, nil, nil
	}
	if _, err := FitDocument(doc, FitOptions{LowestOnly: true}); !errors.Is(err, ErrTooFewLevels) {
		t.Errorf("err = %v, want ErrTooFewLevels", err)
	}
	if _, err := FitDocument(&document.Document{}, FitOptions{}); !errors.Is(err, ErrTooFewLevels) {
		t.Errorf("empty document: err = %v, want ErrTooFewLevels", err)
	}
}

// TestFitReportsResiduals: a fit that cannot reach its targets returns its
// residuals as a *FitError, with the profile.
func TestFitReportsResiduals(t *testing.T) {
	doc := readSweep(t)
	doc.Runs = doc.Runs[5:6] // vllm-fp16kv-chat
	l := &doc.Runs[0].Levels[0]
	tpot := 1.0 // 1 ms per token of a 4.5 GB model: 4.5 TB/s on a 0.9 TB/s GPU
	l.TPOTP50Ms = &tpot
	prof, err := FitDocument(doc, FitOptions{LowestOnly: true, MaxIter: 60})
	var fe *FitError
	if !errors.As(err, &fe) || prof == nil || len(fe.Residuals) == 0 || !strings.Contains(err.Error(), "tpot_p50_ms") {
		t.Fatalf("err = %v, profile %v; want a FitError naming the TPOT", err, prof != nil)
	}
	if prof.Runs[0].TargetsMet {
		t.Error("profile says the targets were met")
	}
}

// TestFitBatchDocument: the batch-shaped document names no model: the fit
// takes the bytes per step and the image cost as free parameters, says so,
// and reproduces both records.
func TestFitBatchDocument(t *testing.T) {
	doc, err := document.ReadFile("../examples/vllm-text-image-example.json")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := FitDocument(doc, FitOptions{Seed: 1})
	if err != nil {
		t.Fatalf("fit: %v", err)
	}
	rp := prof.Runs[0]
	if !rp.FreeModel || !reflect.DeepEqual(rp.Fitted, []string{"weight_bytes_per_step", "image_flops"}) {
		t.Errorf("fitted %v (free model %v)", rp.Fitted, rp.FreeModel)
	}
	if !strings.Contains(strings.Join(rp.Notes, " "), "free parameters") {
		t.Errorf("notes do not say the model was free: %v", rp.Notes)
	}
	if rp.Server.MaxNumSeqs != 32 || rp.Server.MaxNumBatchedTokens != 8192 || rp.Server.MaxModelLen != 1024 {
		t.Errorf("profile settings not applied: %+v", rp.Server)
	}
}

// TestProfileRoundTrip: a profile written as JSON and read back predicts
// the same numbers.
func TestProfileRoundTrip(t *testing.T) {
	doc := readSweep(t)
	doc.Runs = doc.Runs[4:5] // ollama-q4km
	prof, err := FitDocument(doc, FitOptions{LowestOnly: true, Seed: 1, MaxIter: 40})
	if err != nil {
		var fe *FitError
		if !errors.As(err, &fe) {
			t.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(prof, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"sim_profile_version": 1`, `"memory_efficiency"`, `"request_latency_ns"`, `"settings_chosen"`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("profile JSON lacks %s", field)
		}
	}
	var back Profile
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	specs, _ := RunSpecs(doc)
	_, r1, err1 := Predict(prof.Runs[0].Config(), &specs[0], 3)
	_, r2, err2 := Predict(back.Runs[0].Config(), &specs[0], 3)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(r1, r2) {
		t.Errorf("predictions differ after the round trip: %v %v", err1, err2)
	}
}

// BenchmarkFit is docs/simulation.md's `sim fit` example: fitting the engine to
// two runs of examples/multi-backend-sweep.json (llamacpp-f16kv-chat,
// vllm-fp16kv-chat) on every level, as `servebench sim fit --run …`
// does. It measures the engine-only driver (RunLevel) that the fit calls
// for each candidate profile.
func BenchmarkFit(b *testing.B) {
	doc := readSweep(b)
	specs, err := RunSpecs(doc)
	if err != nil {
		b.Fatal(err)
	}
	var want []RunSpec
	for _, s := range specs {
		if s.Label == "llamacpp-f16kv-chat" || s.Label == "vllm-fp16kv-chat" {
			want = append(want, s)
		}
	}
	if len(want) != 2 {
		b.Fatalf("found %d of the README's two runs", len(want))
	}
	for b.Loop() {
		p, err := FitRuns(want, FitOptions{})
		var fe *FitError
		if err != nil && !errors.As(err, &fe) {
			b.Fatal(err)
		}
		if len(p.Runs) != 2 {
			b.Fatalf("fitted %d runs, want 2", len(p.Runs))
		}
	}
}

// TestFitLeavesOutUnsimulableRuns: a run the simulator cannot run as the
// document describes it (here a 70B model on a 12 GB board) is left out
// and reported, and the document's other runs are fitted; a document of
// such runs alone is ErrTooFewLevels.
func TestFitLeavesOutUnsimulableRuns(t *testing.T) {
	specs, err := RunSpecs(readSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	var ok RunSpec
	for _, s := range specs {
		if s.Label == "vllm-fp16kv-chat" {
			ok = s
		}
	}
	bad := ok
	bad.Label, bad.Spec.GPU, bad.Spec.GPUGiB, bad.Spec.Model = "too-big", "RTX 3060 12GB", 0, "llama-3.1-70b"
	p, err := FitRuns([]RunSpec{ok, bad}, FitOptions{LowestOnly: true, MaxIter: 40})
	var fe *FitError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("err = %v, want the other run fitted", err)
	}
	if len(p.Runs) != 1 || p.Runs[0].Label != ok.Label {
		t.Fatalf("fitted %d runs, want %s alone", len(p.Runs), ok.Label)
	}
	if len(p.Skipped) != 1 || p.Skipped[0].Label != "too-big" || !strings.Contains(p.Skipped[0].Reason, "does not fit") {
		t.Errorf("skipped = %+v, want too-big with its reason", p.Skipped)
	}
	if _, err := FitRuns([]RunSpec{bad}, FitOptions{LowestOnly: true}); !errors.Is(err, ErrTooFewLevels) {
		t.Errorf("only unsimulable runs: err = %v, want ErrTooFewLevels", err)
	}
}
