package launch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/tinymodel"
)

func tinySpec(t *testing.T) modelspec.Spec {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	m, err := modelspec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The actual sizes are what Ollama v0.6.5 logged for the testbed's tiny
// model (scripts/ollama-testbed; 2 layers, 2 KV heads of 16, num_ctx 2048
// per slot): "KV self size = 0.50 MiB" with OLLAMA_NUM_PARALLEL=1 and
// "KV self size = 2.00 MiB" with 4.
func TestCalibrateOllamaTiny(t *testing.T) {
	m := tinySpec(t)
	tests := []struct {
		name       string
		p          Profile
		loggedMiB  float64
		wantTokens int
		wantMiB    float64
	}{
		{"np1", Profile{Backend: backend.Ollama, Parallel: ptr(1)}, 0.5, 2048, 0.5},
		{"np4", Profile{Backend: backend.Ollama, Parallel: ptr(4)}, 2.0, 8192, 2.0},
		{"np4 q8 without flash attention stays f16", Profile{Backend: backend.Ollama, Parallel: ptr(4), KVCacheDtype: ptr("q8_0")}, 2.0, 8192, 2.0},
		{"np2 ctx4096 q8 with flash attention", Profile{Backend: backend.Ollama, Parallel: ptr(2), ContextLength: ptr(4096), KVCacheDtype: ptr("q8_0"), FlashAttention: ptr(true)}, 1.0625, 8192, 1.06},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &document.Capacity{KVMiB: &tc.loggedMiB}
			rec, _, err := Calibrate(&tc.p, m, 24, c, "/x/ollama-np.log")
			if err != nil {
				t.Fatal(err)
			}
			if rec.PredictedTokens != tc.wantTokens || rec.ActualTokens != tc.wantTokens || rec.ErrorPct != 0 {
				t.Errorf("predicted %d actual %d error %v%%, want %d both", rec.PredictedTokens, rec.ActualTokens, rec.ErrorPct, tc.wantTokens)
			}
			if rec.PredictedKVMiB == nil || *rec.PredictedKVMiB != tc.wantMiB {
				t.Errorf("predicted KV MiB %v, want %v", rec.PredictedKVMiB, tc.wantMiB)
			}
			if !strings.HasPrefix(rec.Source, "ollama-np.log: logged KV size") || rec.Backend != "ollama" {
				t.Errorf("source %q backend %q", rec.Source, rec.Backend)
			}
		})
	}
}

func TestCalibrateWithLoggedTokens(t *testing.T) {
	m := tinySpec(t)
	cells := 4096
	p := &Profile{Backend: backend.LlamaCpp, ContextLength: ptr(4096), Parallel: ptr(1)}
	rec, _, err := Calibrate(p, m, 24, &document.Capacity{Cells: &cells}, "l.log")
	if err != nil {
		t.Fatal(err)
	}
	if rec.ActualTokens != 4096 || rec.PredictedTokens != 4096 || rec.ErrorPct != 0 {
		t.Errorf("%+v", rec)
	}
	if _, _, err := Calibrate(p, m, 24, &document.Capacity{}, "l.log"); err == nil {
		t.Error("empty capacity accepted")
	}
}

func TestPlanModelArg(t *testing.T) {
	tests := []struct {
		name string
		p    Profile
		file string
		want string
	}{
		{"explicit", Profile{Backend: backend.VLLM, Model: "Qwen/x", PlanModel: "qwen2.5-7b"}, "", "qwen2.5-7b"},
		{"llamacpp gguf", Profile{Backend: backend.LlamaCpp, Model: "/m.gguf"}, "", "/m.gguf"},
		{"ollama blob", Profile{Backend: backend.Ollama, Model: "tiny"}, "/blobs/sha256-1", "/blobs/sha256-1"},
		{"vllm without plan_model", Profile{Backend: backend.VLLM, Model: "Qwen/x"}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanModelArg(&tc.p, tc.file); got != tc.want {
				t.Errorf("got %q want %q", got, tc.want)
			}
		})
	}
}
