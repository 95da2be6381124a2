package plan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/modelspec"
)

// loadSeed reads the reference sweep document, examples/multi-backend-sweep.json.
func loadSeed(t *testing.T) *document.Document {
	t.Helper()
	b, err := os.ReadFile(testenv.RepoFile(t, "examples/multi-backend-sweep.json"))
	if err != nil {
		t.Fatalf("seed document: %v", err)
	}
	var d document.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestAWQWeightsGiveSeedWeights: the --quant awq estimate (int4 linear
// layers with group-128 fp16 scales and 4-bit zeros; embeddings and untied
// lm_head fp16) gives the seed's 5.188 GiB for Qwen2.5-7B.
func TestAWQWeightsGiveSeedWeights(t *testing.T) {
	m, err := modelspec.Preset("qwen2.5-7b")
	if err != nil {
		t.Fatal(err)
	}
	p := m.Params()
	if got := p.Total(); got != 7_615_616_512 {
		t.Errorf("qwen2.5-7b parameters = %d, want 7,615,616,512 (published 7.62B)", got)
	}
	got := round(float64(WeightsBytes(&m, "awq"))/GiB, 3)
	if got != 5.188 {
		t.Errorf("awq weights = %.4f GiB, want 5.188 (seed)", got)
	}
}

// TestSeedReproducesCalibration runs the seed planner on the seed's
// calibration inputs and checks its predicted tokens and error_pct.
func TestSeedReproducesCalibration(t *testing.T) {
	d := loadSeed(t)
	if len(d.Calibration) != 2 {
		t.Fatalf("seed has %d calibration records", len(d.Calibration))
	}
	for _, rec := range d.Calibration {
		t.Run(rec.KVCacheDtype, func(t *testing.T) {
			m, err := modelspec.Preset(rec.Preset)
			if err != nil {
				t.Fatal(err)
			}
			dt, err := ParseKVDtype(rec.KVCacheDtype)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Plan(Inputs{
				Model: m, Server: backend.VLLM, CapacityModel: SeedFormula, GPUGiB: rec.GPUGiB,
				Quant: "awq", KVDtypes: []KVDtype{dt}, Context: 32768,
				VLLM: VLLMSettings{Utilization: rec.GPUMemoryUtilization},
			})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Predictions[0]
			if p.WeightsGiB != rec.WeightsGiB {
				t.Errorf("weights %.3f, seed %.3f", p.WeightsGiB, rec.WeightsGiB)
			}
			if p.PredictedTokens != rec.PredictedTokens {
				t.Errorf("predicted %d tokens, seed %d", p.PredictedTokens, rec.PredictedTokens)
			}
			if e := errorPct(p.PredictedTokens, rec.ActualTokens); e != rec.ErrorPct {
				t.Errorf("error_pct %.1f, seed %.1f", e, rec.ErrorPct)
			}
		})
	}
}

// seedPresetNames are the seven models of the seed planner's table,
// sorted.
var seedPresetNames = []string{"llama-3.1-8b", "mistral-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-7b", "qwen3-14b", "qwen3-8b"}

// TestSeedPlannerBlockMatchesSeed: our presets give the seed's planner
// table and constants exactly.
func TestSeedPlannerBlockMatchesSeed(t *testing.T) {
	d := loadSeed(t)
	var ms []modelspec.Spec
	for _, n := range seedPresetNames {
		m, err := modelspec.Preset(n)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	got, _ := json.Marshal(seedPlanner(ms...))
	want, _ := json.Marshal(d.Planner)
	if string(got) != string(want) {
		t.Errorf("planner block differs:\n got %s\nwant %s", got, want)
	}
}
