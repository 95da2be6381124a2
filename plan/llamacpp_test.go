package plan

import (
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/tinymodel"
)

// TestLlamaKVTinyGGUF: the testbed's Ollama logs "KV self size = 2.00
// MiB" for the tiny model at num_ctx 2048 × 4 slots; the same figure
// comes from the spec read from the model's GGUF file, in both dtypes
// the model is written in.
func TestLlamaKVTinyGGUF(t *testing.T) {
	for _, dt := range []tinymodel.Dtype{tinymodel.F32, tinymodel.F16} {
		t.Run(string(dt), func(t *testing.T) {
			spec := tinymodel.DefaultSpec()
			spec.Dtype = dt
			path := filepath.Join(t.TempDir(), "tiny.gguf")
			if err := tinymodel.WriteFile(path, spec); err != nil {
				t.Fatal(err)
			}
			m, err := modelspec.ReadGGUF(path)
			if err != nil {
				t.Fatal(err)
			}
			kv, err := llamaKVSize(&m, 2048*4, 4, 512, KVFP16, KVFP16)
			if err != nil || kv.MiB() != 2.00 {
				t.Errorf("KV %.2f MiB (%v), want 2.00", kv.MiB(), err)
			}
		})
	}
}
