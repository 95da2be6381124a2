package modelspec

import (
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/tinymodel"
)

// TestGGUFTinyModel reads the tiny model's metadata and tensor sizes.
// Expected weights are the architecture's arithmetic: token embedding
// and output (vocab × dim), per layer q/o (dim²), k/v (dim × kv_dim),
// gate/up/down (3 × dim × ffn) and two norms, plus the output norm.
func TestGGUFTinyModel(t *testing.T) {
	for _, dt := range []tinymodel.Dtype{tinymodel.F32, tinymodel.F16} {
		t.Run(string(dt), func(t *testing.T) {
			spec := tinymodel.DefaultSpec()
			spec.Dtype = dt
			path := filepath.Join(t.TempDir(), "tiny.gguf")
			if err := tinymodel.WriteFile(path, spec); err != nil {
				t.Fatal(err)
			}
			m, err := ReadGGUF(path)
			if err != nil {
				t.Fatal(err)
			}
			kvDim := spec.Dim / spec.Heads * spec.KVHeads
			if m.Arch != "llama" || m.Layers != spec.Layers || m.Hidden != spec.Dim || m.Heads != spec.Heads ||
				m.KVHeads != spec.KVHeads || m.HeadDim != spec.Dim/spec.Heads || m.Intermediate != spec.FFN ||
				m.MaxContext != spec.Ctx || m.EmbdGQA() != kvDim {
				t.Errorf("spec %+v", m)
			}
			vocab := int64(m.Vocab)
			if vocab < 256+3 {
				t.Errorf("vocab %d: byte vocabulary has at least 259 tokens", vocab)
			}
			elem := int64(4)
			if dt == tinymodel.F16 {
				elem = 2
			}
			d, ffn, L := int64(spec.Dim), int64(spec.FFN), int64(spec.Layers)
			mats := 2*vocab*d + L*(2*d*d+2*d*int64(kvDim)+3*d*ffn)
			norms := L*2*d + d // norms stay f32
			want := mats*elem + norms*4
			if m.TiedEmbeddings {
				want -= vocab * d * elem
			}
			if m.WeightsBytes != want {
				t.Errorf("tensor bytes %d, want %d", m.WeightsBytes, want)
			}
		})
	}
}
