package tinymodel

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/servebench/servebench/gguf"
)

func TestValidate(t *testing.T) {
	ok := DefaultSpec()
	tests := []struct {
		name  string
		edit  func(*Spec)
		field string
	}{
		{"default is valid", func(*Spec) {}, ""},
		{"zero layers", func(s *Spec) { s.Layers = 0 }, "layers"},
		{"heads do not divide dim", func(s *Spec) { s.Heads = 3 }, "dim"},
		{"odd head size", func(s *Spec) { s.Dim, s.Heads = 12, 4 }, "dim"},
		{"kv heads do not divide heads", func(s *Spec) { s.KVHeads = 3 }, "kv-heads"},
		{"zero kv heads", func(s *Spec) { s.KVHeads = 0 }, "kv-heads"},
		{"ctx below 16", func(s *Spec) { s.Ctx = 15 }, "ctx"},
		{"zero ffn", func(s *Spec) { s.FFN = 0 }, "ffn"},
		{"unknown dtype", func(s *Spec) { s.Dtype = "q4" }, "dtype"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			err := s.Validate()
			var fe *FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.field != "" && !errors.As(err, &fe):
				t.Fatalf("Validate() = %v, want a FieldError for --%s", err, tt.field)
			case tt.field != "" && fe.Field != tt.field:
				t.Fatalf("Validate() names --%s, want --%s", fe.Field, tt.field)
			}
		})
	}
}

func TestNextIsOneCycleOverPrintableTokens(t *testing.T) {
	for _, seed := range []uint64{1, 2, 99} {
		next := Next(seed)
		if len(next) != 0x7e-0x21+1 {
			t.Fatalf("seed %d: %d tokens in the cycle, want %d", seed, len(next), 0x7e-0x21+1)
		}
		start := FirstByteID + int('a')
		tok, steps := start, 0
		for {
			n, ok := next[tok]
			if !ok || !Printable(n) {
				t.Fatalf("seed %d: token %d maps to %d, not a printable token", seed, tok, n)
			}
			if n == tok {
				t.Fatalf("seed %d: token %d maps to itself", seed, tok)
			}
			tok, steps = n, steps+1
			if tok == start {
				break
			}
		}
		if steps != len(next) {
			t.Fatalf("seed %d: cycle through 'a' has %d tokens, want one cycle of %d", seed, steps, len(next))
		}
	}
}

// TestWriteReadsBack reads the file back with the planner's GGUF reader (a
// separate implementation of the format) and checks the metadata llama.cpp
// needs. The testbed test proves that a real server loads it.
func TestWriteReadsBack(t *testing.T) {
	for _, dtype := range []Dtype{F32, F16} {
		t.Run(string(dtype), func(t *testing.T) {
			spec := DefaultSpec()
			spec.Dtype = dtype
			path := filepath.Join(t.TempDir(), "tiny.gguf")
			if err := WriteFile(path, spec); err != nil {
				t.Fatal(err)
			}
			info, err := gguf.Read(path)
			if err != nil {
				t.Fatalf("the planner cannot read the file: %v", err)
			}
			if info.Version != 3 || info.Arch != "llama" {
				t.Errorf("GGUF v%d of %q, want v3 of llama", info.Version, info.Arch)
			}
			want := map[string]uint64{
				"llama.context_length":            4096,
				"llama.embedding_length":          64,
				"llama.block_count":               2,
				"llama.feed_forward_length":       128,
				"llama.attention.head_count":      4,
				"llama.attention.head_count_kv":   2,
				"llama.rope.dimension_count":      16,
				"tokenizer.ggml.bos_token_id":     BOSID,
				"tokenizer.ggml.eos_token_id":     EOSID,
				"tokenizer.ggml.unknown_token_id": UnkID,
			}
			for key, v := range want {
				if got, ok := info.Ints[key]; !ok || got != v {
					t.Errorf("%s = %d (present %v), want %d", key, got, ok, v)
				}
			}
			if info.TokenCount != 3+256+uint64(len(words)) {
				t.Errorf("%d tokens, want %d", info.TokenCount, 3+256+len(words))
			}
			if info.Tensors != 2+9*2+1 || !info.HasOutput {
				t.Errorf("%d tensors (output.weight %v), want %d with output.weight", info.Tensors, info.HasOutput, 2+9*2+1)
			}
			var elems int64
			for _, ts := range tensors(spec, int(info.TokenCount)) {
				elems += int64(len(ts.data))
			}
			perElem := int64(4)
			if dtype == F16 {
				perElem = 2
			}
			if info.TensorBytes > elems*4 || info.TensorBytes < elems*perElem {
				t.Errorf("tensor bytes %d out of range for %d elements", info.TensorBytes, elems)
			}
		})
	}
}

func TestOutputRowsEncodeThePermutation(t *testing.T) {
	spec := DefaultSpec()
	tokens, _, _ := Vocab()
	ts := tensors(spec, len(tokens))
	embd, out := ts[0], ts[len(ts)-1]
	next := Next(spec.Seed)
	dim := spec.Dim
	for id := range tokens {
		row := out.data[id*dim : (id+1)*dim]
		var src = -1
		for t, n := range next {
			if n == id {
				src = t
			}
		}
		if src < 0 {
			if !slices.Equal(row, make([]float32, dim)) {
				t.Fatalf("output row %d (%q) is not zero but no token leads to it", id, tokens[id])
			}
			continue
		}
		if !slices.Equal(row, embd.data[src*dim:(src+1)*dim]) {
			t.Fatalf("output row %d is not the embedding of token %d", id, src)
		}
	}
}

func TestWriteFileLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	spec := DefaultSpec()
	spec.Heads = 3
	var fe *FieldError
	if err := WriteFile(filepath.Join(dir, "bad.gguf"), spec); !errors.As(err, &fe) {
		t.Fatalf("WriteFile = %v, want a spec error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left %d files behind: %v", len(entries), entries)
	}
}

func TestFloat16(t *testing.T) {
	tests := []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"largest half", 65504, 0x7bff},
		{"overflow to inf", 1e6, 0x7c00},
		{"smallest subnormal", 5.960464477539063e-08, 0x0001},
		{"underflow to zero", 1e-9, 0x0000},
		{"one third rounds to nearest", 1.0 / 3, 0x3555},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := float32ToFloat16(tt.in); got != tt.want {
				t.Fatalf("float32ToFloat16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
			}
		})
	}
}

// TestVocabSize: a spec's vocabulary size sets llama.vocab_size and the
// size of token_embd and the output head (F16: 2 bytes × dim per token
// each), so a generated model reads as many bytes per step as a real one.
func TestVocabSize(t *testing.T) {
	size := func(vocab int) *gguf.Info {
		t.Helper()
		spec := DefaultSpec()
		spec.Dtype, spec.Vocab = F16, vocab
		path := filepath.Join(t.TempDir(), "v.gguf")
		if err := WriteFile(path, spec); err != nil {
			t.Fatal(err)
		}
		info, err := gguf.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	base, big := size(0), size(1000)
	if got := big.Ints["llama.vocab_size"]; got != 1000 {
		t.Errorf("llama.vocab_size %d, want 1000", got)
	}
	if d, want := big.TensorBytes-base.TensorBytes, int64(2*(1000-BaseVocab)*64*2); d != want {
		t.Errorf("tensor bytes grew by %d, want %d (token_embd and output at F16)", d, want)
	}
	if err := (Spec{Layers: 1, Dim: 64, Heads: 4, KVHeads: 2, FFN: 8, Ctx: 64, Dtype: F16, Vocab: 10}).Validate(); err == nil {
		t.Error("a vocabulary smaller than the built-in one was accepted")
	}
}
