package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/serverlog"
	"github.com/servebench/servebench/tinymodel"
)

// tinyGGUF writes the testbed's tiny model and returns its path.
func tinyGGUF(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeLog writes a server log of lines named name and returns its path.
func writeLog(t *testing.T, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The logged sizes are what Ollama v0.6.5 logged for the testbed's tiny
// model (scripts/ollama-testbed; 2 layers, 2 KV heads of 16, num_ctx 2048
// per slot): "KV self size = 0.50 MiB" with OLLAMA_NUM_PARALLEL=1 and
// "KV self size = 2.00 MiB" with 4. A log with only that line gives no
// token capacity: the record's actual tokens stay 0 (unknown) and its
// error is on the KV size, as servebench calibrate's is (it used to be
// on tokens derived from the logged size and the predicted bytes per
// token, a figure the server never reported).
func TestCalibrateOllamaTiny(t *testing.T) {
	tiny := tinyGGUF(t)
	tests := []struct {
		name       string
		p          Profile
		logged     string
		wantTokens int
		wantMiB    float64
	}{
		{"np1", Profile{Backend: backend.Ollama, Parallel: ptr(1)}, "0.50", 2048, 0.5},
		{"np4", Profile{Backend: backend.Ollama, Parallel: ptr(4)}, "2.00", 8192, 2.0},
		{"np4 q8 without flash attention stays f16", Profile{Backend: backend.Ollama, Parallel: ptr(4), KVCacheDtype: ptr("q8_0")}, "2.00", 8192, 2.0},
		{"np2 ctx4096 q8 with flash attention", Profile{Backend: backend.Ollama, Parallel: ptr(2), ContextLength: ptr(4096), KVCacheDtype: ptr("q8_0"), FlashAttention: ptr(true)}, "1.06", 8192, 1.06},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.PlanModel = tiny
			log := writeLog(t, "ollama-np.log", "llama_init_from_model: KV self size  =    "+tc.logged+" MiB, K (f16):    0.25 MiB, V (f16):    0.25 MiB")
			rec, _, err := calibrateFile(t, &tc.p, log, 24)
			if err != nil {
				t.Fatal(err)
			}
			if rec.PredictedTokens != tc.wantTokens || rec.ActualTokens != 0 || rec.ErrorPct != 0 {
				t.Errorf("predicted %d actual %d error %v%%, want %d, 0 (not logged) and 0%%", rec.PredictedTokens, rec.ActualTokens, rec.ErrorPct, tc.wantTokens)
			}
			if rec.PredictedKVMiB == nil || *rec.PredictedKVMiB != tc.wantMiB || rec.ActualKVMiB == nil || *rec.ActualKVMiB != tc.wantMiB {
				t.Errorf("KV MiB predicted %v actual %v, want %v both", rec.PredictedKVMiB, rec.ActualKVMiB, tc.wantMiB)
			}
			if rec.Source != "log ollama-np.log; no token capacity: error_pct is on the KV size in MiB" || rec.Backend != "ollama" {
				t.Errorf("source %q backend %q", rec.Source, rec.Backend)
			}
		})
	}
}

// TestCalibrateFromTestbedLog: the testbed's whole start-up (n_seq_max,
// n_ctx, kv_size cells, KV self size) gives actual tokens, and the knobs
// the profile leaves unset come from the log.
func TestCalibrateFromTestbedLog(t *testing.T) {
	log := writeLog(t, "ollama-np4.log",
		"llama_init_from_model: n_seq_max     = 4",
		"llama_init_from_model: n_ctx         = 8192",
		"llama_kv_cache_init: kv_size = 8192, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 2, can_shift = 1",
		"llama_init_from_model: KV self size  =    2.00 MiB, K (f16):    1.00 MiB, V (f16):    1.00 MiB")
	p := &Profile{Backend: backend.Ollama, PlanModel: tinyGGUF(t)}
	rec, _, err := calibrateFile(t, p, log, 24)
	if err != nil {
		t.Fatal(err)
	}
	if rec.PredictedTokens != 8192 || rec.ActualTokens != 8192 || rec.ErrorPct != 0 || rec.Source != "log ollama-np4.log" {
		t.Errorf("%+v", rec)
	}
}

func TestCalibrateWithLoggedTokens(t *testing.T) {
	p := &Profile{Backend: backend.LlamaCpp, ContextLength: ptr(4096), Parallel: ptr(1), PlanModel: tinyGGUF(t)}
	log := writeLog(t, "l.log", "llama_kv_cache_unified:      CUDA0 KV buffer size =     1.00 MiB",
		"llama_kv_cache_unified: size =    1.00 MiB (  4096 cells,   2 layers,  1 seqs), K (f16):    0.50 MiB, V (f16):    0.50 MiB")
	rec, _, err := calibrateFile(t, p, log, 24)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ActualTokens != 4096 || rec.PredictedTokens != 4096 || rec.ErrorPct != 0 {
		t.Errorf("%+v", rec)
	}
	if _, _, err := calibrateFile(t, p, writeLog(t, "empty.log", "nothing"), 24); err == nil {
		t.Error("empty capacity accepted")
	}
	if _, _, err := calibrateFile(t, &Profile{Backend: backend.VLLM, Model: "Qwen/x", Path: "v.yaml"}, log, 24); err == nil || !strings.Contains(err.Error(), "set plan_model in profile v.yaml") {
		t.Errorf("vLLM profile without plan_model: %v", err)
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
			if got := planModelArg(&tc.p, tc.file); got != tc.want {
				t.Errorf("got %q want %q", got, tc.want)
			}
		})
	}
}

// calibrateFile reads the log at path once and calibrates p against it,
// as run --profile does.
func calibrateFile(t *testing.T, p *Profile, path string, deviceGiB float64) (*record.Calibration, []string, error) {
	t.Helper()
	lg, err := serverlog.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Calibrate(p, &lg, path, deviceGiB)
}
