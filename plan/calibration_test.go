package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/serverlog"
)

func TestErrorPct(t *testing.T) {
	for _, c := range []struct {
		p, a int
		want float64
	}{{143040, 158048, -9.5}, {286096, 272304, 5.1}, {100, 100, 0}} {
		if got := errorPct(c.p, c.a); got != c.want {
			t.Errorf("errorPct(%d, %d) = %v, want %v", c.p, c.a, got, c.want)
		}
	}
}

// TestFitAndApply: a fitted correction multiplies later predictions of the
// same backend, GPU and dtype only, keeps the uncorrected figure, and
// survives a save and load.
func TestFitAndApply(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	in := Inputs{Model: m, Server: backend.VLLM, GPUName: "GeForce RTX 5070 Ti", GPUGiB: 15.92, Quant: "awq", Context: 32768}
	res, err := Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	auto := res.Predictions[0]
	rec := calibrationRecord("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", &res.Inputs, &auto, 158048, "test")
	var f CalibrationFile
	c := f.Fit(rec, in.GPUName)
	if c.Factor != 158048.0/float64(auto.PredictedTokens) || c.GPU != "rtx5070ti" {
		t.Fatalf("correction %+v", c)
	}
	path := filepath.Join(t.TempDir(), "cal.json")
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCalibration(path)
	if err != nil {
		t.Fatal(err)
	}
	in.Corrections = loaded
	res2, _ := Plan(in)
	got, fp8 := res2.Predictions[0], res2.Predictions[1]
	if got.Correction == nil || got.UncorrectedTokens != auto.PredictedTokens || got.PredictedTokens != 158048 || got.Blocks != 9878 {
		t.Errorf("corrected auto %+v", got)
	}
	if fp8.Correction != nil {
		t.Errorf("fp8 got auto's correction")
	}
	in.GPUName, in.GPUGiB = "GeForce RTX 4090", 23.63
	res3, _ := Plan(in)
	if res3.Predictions[0].Correction != nil {
		t.Errorf("another GPU got the correction")
	}
}

func TestLoadCalibrationErrors(t *testing.T) {
	dir := t.TempDir()
	// A missing file is an error for plan (item 13) and an
	// empty file for calibrate --fit, which creates it.
	if _, err := LoadCalibration(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "none.json: no such file or directory") {
		t.Errorf("missing file: %v", err)
	}
	missing, err := LoadOrNewCalibration(filepath.Join(dir, "none.json"))
	if err != nil || len(missing.Corrections) != 0 {
		t.Errorf("missing file for --fit: %v %v", missing, err)
	}
	huge := filepath.Join(dir, "huge.json")
	os.WriteFile(huge, make([]byte, 16<<20+1), 0o644)
	if _, err := LoadCalibration(huge); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("oversized file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"corrections":[{"backend":"vllm","factor":-1}]}`), 0o644)
	if _, err := LoadCalibration(bad); err == nil || !strings.Contains(err.Error(), "corrections[0].factor") {
		t.Errorf("bad factor: %v", err)
	}
	os.WriteFile(bad, []byte(`{`), 0o644)
	if _, err := LoadCalibration(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad json: %v", err)
	}
}

// TestApplyLogOllama: an Ollama log's n_ctx (total) and n_seq_max give
// num_ctx per slot and the slots.
func TestApplyLogOllama(t *testing.T) {
	nctx, nseq := 8192, 4
	in := Inputs{Server: backend.Ollama}
	notes, err := in.takeStated(&Observed{Log: &serverlog.Capacity{NCtx: &nctx, NSeq: &nseq, TypeK: "q8_0"}})
	if err != nil || in.Context != 2048 || in.LlamaCpp.Parallel != 4 || in.KVDtypes[0] != KVQ8_0 || !in.LlamaCpp.FlashAttention || len(notes) != 3 {
		t.Errorf("%+v %v %v", in, notes, err)
	}
	in = Inputs{Server: backend.Ollama, Context: 4096, Given: Given{Context: true}}
	in.takeStated(&Observed{Log: &serverlog.Capacity{NCtx: &nctx}})
	if in.Context != 4096 {
		t.Errorf("a flag the user set was overridden: %d", in.Context)
	}
}

// TestComputeBufferEstimate holds the llama.cpp compute-buffer estimate
// against the logs where it is close: the testbed's tiny model without
// flash attention (80.51 MiB logged by Ollama 0.6.5) and Llama-3.1-8B
// with flash attention at n_ubatch 1024 (613.01 MiB, kv-capacity-logs.json).
func TestComputeBufferEstimate(t *testing.T) {
	tiny := modelspec.Spec{Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, Hidden: 64, Intermediate: 128, Vocab: 299}
	llama, _ := modelspec.Preset("llama-3.1-8b")
	for _, c := range []struct {
		name      string
		m         *modelspec.Spec
		nkv, ub   int
		fa        bool
		logged    float64
		tolerance float64
	}{
		{"tiny no FA", &tiny, 8192, 512, false, 80.51, 0.02},
		{"llama-3.1-8b FA", &llama, 16384, 1024, true, 613.01, 0.01},
	} {
		got := llamaComputeMiB(c.m, c.nkv, c.ub, c.fa)
		if d := (got - c.logged) / c.logged; d > c.tolerance || d < -c.tolerance {
			t.Errorf("%s: %.2f MiB, logged %.2f", c.name, got, c.logged)
		}
	}
}

// FuzzParseCalibration: a hand-edited calibration file never panics the
// planner; accepted factors are in range and apply cleanly.
func FuzzParseCalibration(f *testing.F) {
	f.Add([]byte(`{"corrections":[{"backend":"vllm","gpu":"rtx5070ti","kv_cache_dtype":"auto","factor":0.97}]}`))
	f.Add([]byte(`{"corrections":[{"factor":1e308}],"calibration":[{"model":"m"}]}`))
	f.Add([]byte(`[]`))
	m, _ := modelspec.Preset("qwen3-8b")
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := parseCalibration(b)
		if err != nil {
			return
		}
		for _, c := range cf.Corrections {
			if !(c.Factor > 0 && c.Factor < 100) {
				t.Fatalf("accepted factor %v", c.Factor)
			}
		}
		if _, err := Plan(Inputs{Model: m, Server: backend.VLLM, GPUName: "GeForce RTX 5070 Ti", GPUGiB: 15.92, Corrections: cf}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCompareWithoutTokens: with only MiB figures, error_pct is the size
// error and the source says so, never a 0 that reads as "no error"; with
// no figure the prediction has, compare fails.
func TestCompareWithoutTokens(t *testing.T) {
	res := &Result{Model: modelspec.Spec{Name: "m"}}
	p := &Prediction{PredictedTokens: 4096, KVMiB: 512, WeightsGiB: 1}
	kv, total := 400.0, 1600.0
	c, err := compare(res, p, actual{KVMiB: &kv, TotalMiB: &total, Source: "log x"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Record.ActualTokens != 0 || c.Record.ErrorPct != 28 || *c.KVErrorPct != 28 ||
		c.Record.Source != "log x; no token capacity: error_pct is on the KV size in MiB" {
		t.Errorf("KV only: record %+v, kv error %v", c.Record, *c.KVErrorPct)
	}
	c, err = compare(res, p, actual{TotalMiB: &total}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := *c.TotalErrorPct; want == 0 || c.Record.ErrorPct != want ||
		c.Record.Source != "no token capacity: error_pct is on the total size in MiB" {
		t.Errorf("total only: record %+v, total error %v", c.Record, want)
	}
	c, err = compare(res, p, actual{Tokens: 4000, KVMiB: &kv, Source: "log x"}, "")
	if err != nil || c.Record.ErrorPct != 2.4 || c.Record.Source != "log x" {
		t.Errorf("tokens known: record %+v, err %v", c.Record, err)
	}
	if _, err := compare(res, &Prediction{PredictedTokens: 4096}, actual{KVMiB: &kv}, ""); err == nil {
		t.Error("no comparable figure: want an error, got a record")
	}
}

// TestCompareMemoryTerms: a vLLM log's memory terms are set beside the
// prediction's, term by term; the CUDA-graph term only where the log does
// not say the estimate went uncharged; terms the log lacks are left out.
func TestCompareMemoryTerms(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	res, err := Plan(Inputs{Model: m, Server: backend.VLLM, GPUName: "NVIDIA GeForce RTX 5070 Ti", GPUGiB: 15.92,
		Quant: "awq", KVDtypes: []KVDtype{KVFP8}, Context: 32768})
	if err != nil {
		t.Fatal(err)
	}
	f := func(x float64) *float64 { return &x }
	no, yes := false, true
	terms := memoryTerms{Weights: f(5.19), Activation: f(0.38), CUDAGraphs: f(1.39), AvailableKV: f(7.27), GraphsCharged: &yes}
	c, err := compare(res, &res.Predictions[0], actual{Tokens: 272304, Source: "log", Terms: terms}, "qwen2.5-7b")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tc := range c.Terms {
		names = append(names, tc.Term)
		if tc.DiffGiB != round(tc.PredictedGiB-tc.LogGiB, 3) {
			t.Errorf("%s: diff %v, want predicted − log", tc.Term, tc.DiffGiB)
		}
	}
	if strings.Join(names, ",") != "weights,activation peak,CUDA graphs charged,KV cache" {
		t.Errorf("terms %v", names)
	}
	if g := c.Terms[2]; g.PredictedGiB != 0.658 || g.DiffGiB != -0.732 {
		t.Errorf("CUDA graphs: %+v", g)
	}
	terms.GraphsCharged = &no
	c, _ = compare(res, &res.Predictions[0], actual{Tokens: 272304, Source: "log", Terms: terms}, "")
	for _, tc := range c.Terms {
		if tc.Term == "CUDA graphs charged" {
			t.Error("compared a CUDA-graph estimate the log says was not charged")
		}
	}
	res.Inputs.Backend = backend.LlamaCpp
	if c, _ := compare(res, &res.Predictions[0], actual{Tokens: 1, Terms: terms}, ""); c.Terms != nil {
		t.Error("memory terms for a llama.cpp plan")
	}
}

// TestApplyLogVLLM: the version and the CUDA-graph charge a vLLM log
// states become inputs unless their flags were given.
func TestApplyLogVLLM(t *testing.T) {
	no := false
	log := &serverlog.Capacity{VLLMVersion: "0.27.1", CUDAGraphEstimateApplied: &no}
	in := Inputs{Server: backend.VLLM}
	notes, _ := in.takeStated(&Observed{Log: log})
	if in.VLLM.VLLMVersion != (VLLMVersion{0, 27, 1}) || in.VLLM.GraphEstimate != GraphEstimateOff || len(notes) != 2 {
		t.Errorf("version %v estimate %q notes %q", in.VLLM.VLLMVersion, in.VLLM.GraphEstimate, notes)
	}
	in = Inputs{Server: backend.VLLM, Given: Given{VLLMVersion: true, GraphEstimate: true}, VLLM: VLLMSettings{GraphEstimate: GraphEstimateAuto}}
	in.takeStated(&Observed{Log: log})
	if !in.VLLM.VLLMVersion.latest() || in.VLLM.GraphEstimate != GraphEstimateAuto {
		t.Errorf("flags given, yet the log changed version %v estimate %q", in.VLLM.VLLMVersion, in.VLLM.GraphEstimate)
	}
}
