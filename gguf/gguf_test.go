package gguf

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

// TestReadTinyModel reads the tiny model's metadata and tensor table:
// the keys the planner uses, the vocabulary's length, and one tensor per
// matrix and norm (token embedding, output, output norm, nine per layer).
func TestReadTinyModel(t *testing.T) {
	spec := tinymodel.DefaultSpec()
	path, _ := tinyGGUF(t, spec)
	info, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != 3 || info.Arch != "llama" || info.Ints["llama.block_count"] != uint64(spec.Layers) ||
		info.Ints["llama.embedding_length"] != uint64(spec.Dim) || info.TokenCount < 256+3 {
		t.Errorf("metadata %+v", info)
	}
	if want := 3 + 9*spec.Layers; info.Tensors != want || !info.HasOutput {
		t.Errorf("%d tensors (output %v), want %d with output.weight", info.Tensors, info.HasOutput, want)
	}
	if info.FileType() == "" {
		t.Errorf("general.file_type %v not named", info.Ints["general.file_type"])
	}
	// Per-layer sizes (what llama.cpp and Ollama place per device): one
	// entry per layer, all equal, and with the non-repeating tensors they
	// add up to every tensor's bytes.
	if len(info.LayerBytes) != spec.Layers || info.OutputBytes == 0 || info.OutputNormBytes == 0 || info.TokenEmbdBytes == 0 {
		t.Fatalf("layer sizes %v, output %d, norm %d, embd %d", info.LayerBytes, info.OutputBytes, info.OutputNormBytes, info.TokenEmbdBytes)
	}
	sum := info.OutputBytes + info.OutputNormBytes + info.TokenEmbdBytes
	for _, b := range info.LayerBytes {
		sum += b
		if b != info.LayerBytes[0] {
			t.Errorf("layer sizes differ: %v", info.LayerBytes)
		}
	}
	if sum != info.TensorBytes {
		t.Errorf("per-layer and non-repeating sizes add up to %d, tensors %d", sum, info.TensorBytes)
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
			_, err := Parse(bytes.NewReader(c.b), int64(len(c.b)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FuzzParse: any bytes parse without panic; what parses has tensors no
// larger than the input. (modelspec's FuzzGGUFSpec holds the spec built
// from what parses to the planner's checks.)
func FuzzParse(f *testing.F) {
	_, good := tinyGGUF(f, tinymodel.DefaultSpec())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:64])
	f.Add([]byte("GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		if info.TensorBytes > int64(len(b)) {
			t.Fatalf("tensor bytes %d > file %d", info.TensorBytes, len(b))
		}
	})
}
