package plan

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/tinymodel"
)

// tinyGGUF writes the project's tiny test model (the Ollama testbed's).
func tinyGGUF(t testing.TB, spec tinymodel.Spec) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, spec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestGGUFTinyModel reads the tiny model's metadata and tensor sizes.
// Expected weights are the architecture's arithmetic: token embedding
// and output (vocab × dim), per layer q/o (dim²), k/v (dim × kv_dim),
// gate/up/down (3 × dim × ffn) and two norms, plus the output norm.
func TestGGUFTinyModel(t *testing.T) {
	for _, dt := range []tinymodel.Dtype{tinymodel.F32, tinymodel.F16} {
		t.Run(string(dt), func(t *testing.T) {
			spec := tinymodel.DefaultSpec()
			spec.Dtype = dt
			path, _ := tinyGGUF(t, spec)
			m, err := ReadGGUFSpec(path)
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
			// The testbed's Ollama logs "KV self size = 2.00 MiB" for
			// num_ctx 2048 × 4 slots: the same figure from the GGUF.
			kv, err := LlamaKVSize(&m, 2048*4, 4, 512, KVFP16, KVFP16)
			if err != nil || kv.MiB() != 2.00 {
				t.Errorf("KV %.2f MiB (%v), want 2.00", kv.MiB(), err)
			}
		})
	}
}

// TestGGUFBadFiles: truncated and hostile files give an error naming the
// problem, never a panic or a huge allocation.
func TestGGUFBadFiles(t *testing.T) {
	_, good := tinyGGUF(t, tinymodel.DefaultSpec())
	huge := append([]byte(nil), good[:24]...)
	binary.LittleEndian.PutUint64(huge[16:], 1<<62) // metadata_kv_count
	hugeStr := append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(hugeStr[24:], 1<<60) // first key's length
	// One I64 tensor of 2^31 × 2^31 elements: its byte size (2^65)
	// overflows uint64 and must not wrap to a small number.
	wrap := []byte("GGUF\x03\x00\x00\x00")
	wrap = binary.LittleEndian.AppendUint64(wrap, 1) // tensor_count
	wrap = binary.LittleEndian.AppendUint64(wrap, 0) // metadata_kv_count
	wrap = binary.LittleEndian.AppendUint64(wrap, 1)
	wrap = append(wrap, 't')
	wrap = binary.LittleEndian.AppendUint32(wrap, 2)
	wrap = binary.LittleEndian.AppendUint64(wrap, 1<<31)
	wrap = binary.LittleEndian.AppendUint64(wrap, 1<<31)
	wrap = binary.LittleEndian.AppendUint32(wrap, 27) // GGML_TYPE_I64
	wrap = binary.LittleEndian.AppendUint64(wrap, 0)
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"tensor size overflow", wrap, "do not fit"},
		{"empty", nil, "magic"},
		{"not gguf", []byte("PK\x03\x04hello"), "magic"},
		{"version 1", append([]byte("GGUF\x01\x00\x00\x00"), make([]byte, 16)...), "version"},
		{"huge kv count", huge, "exceed"},
		{"huge string", hugeStr, "truncated"},
		{"truncated metadata", good[:200], "exceed"},
		{"truncated tensor data", good[:len(good)/8], "do not fit"},
		{"truncated header", good[:20], "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseGGUF(bytes.NewReader(c.b), int64(len(c.b)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FuzzReadGGUF: any bytes parse without panic; what parses has
// tensors no larger than the input.
func FuzzReadGGUF(f *testing.F) {
	_, good := tinyGGUF(f, tinymodel.DefaultSpec())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:64])
	f.Add([]byte("GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseGGUF(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		if info.TensorBytes > int64(len(b)) {
			t.Fatalf("tensor bytes %d > file %d", info.TensorBytes, len(b))
		}
		if m, err := info.Spec("fuzz"); err == nil {
			if err := m.Validate(); err != nil {
				t.Fatalf("Spec returned an invalid model: %v", err)
			}
		}
	})
}
