// Package tinymodel generates a tiny random-weight GGUF model of the llama
// architecture that real servers (Ollama, llama.cpp) load and run.
//
// Its output is gibberish by design, but it behaves in three ways tests rely
// on under greedy decoding, for any prompt:
//   - it never emits EOS, so it generates exactly the tokens asked for;
//   - it emits only printable ASCII byte tokens (0x21–0x7E), so streams never
//     carry partial UTF-8;
//   - it never emits the same token twice in a row (Ollama ends a stream
//     after about 30 identical tokens).
//
// The construction: next-token prediction is a single permutation cycle π
// over the printable byte tokens. Row π(t) of output.weight equals row t of
// token_embd.weight and every other output row is zero; all other weights
// are small (σ = 0.02), so the residual stream is dominated by the current
// token's embedding and argmax(logits) = π(current token).
package tinymodel

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Dtype is the storage type of the 2-D weight tensors (norms are always
// F32, as llama.cpp requires).
type Dtype string

// Supported weight storage types.
const (
	F32 Dtype = "f32"
	F16 Dtype = "f16"
)

// Spec describes the model to generate.
type Spec struct {
	Layers  int    // transformer blocks (llama.block_count)
	Dim     int    // hidden size (llama.embedding_length)
	Heads   int    // attention heads (llama.attention.head_count)
	KVHeads int    // key/value heads (llama.attention.head_count_kv)
	FFN     int    // feed-forward size (llama.feed_forward_length)
	Ctx     int    // trained context length (llama.context_length)
	Seed    uint64 // seed of the random weights and the permutation
	Dtype   Dtype  // storage of 2-D tensors
	// Vocab is the vocabulary size (llama.vocab_size): 0 = the built-in
	// vocabulary's BaseVocab tokens; more pads it with filler tokens, so
	// that a generated model's token_embd and output head have a real
	// model's size (the output head is read whole every decode step).
	Vocab int
}

// BaseVocab is the size of the built-in vocabulary: 3 special tokens,
// 256 byte tokens and the word pieces.
var BaseVocab = 3 + 256 + len(words)

// maxVocab bounds Spec.Vocab.
const maxVocab = 1 << 20

// DefaultSpec is the testbed's model: 2 layers, 64 wide, 4 heads, 2 KV heads.
func DefaultSpec() Spec {
	return Spec{Layers: 2, Dim: 64, Heads: 4, KVHeads: 2, FFN: 128, Ctx: 4096, Seed: 1, Dtype: F32}
}

// FieldError is an invalid Spec field; Field is the command-line flag name.
type FieldError struct {
	Field string
	Msg   string
}

// Error is "--FIELD: MSG", naming the flag to fix.
func (e *FieldError) Error() string { return "--" + e.Field + ": " + e.Msg }

// Validate reports the first invalid field of s as a *FieldError.
func (s Spec) Validate() error {
	switch {
	case s.Layers < 1:
		return &FieldError{"layers", fmt.Sprintf("must be at least 1, got %d", s.Layers)}
	case s.Heads < 1:
		return &FieldError{"heads", fmt.Sprintf("must be at least 1, got %d", s.Heads)}
	case s.Dim < 1 || s.Dim%s.Heads != 0:
		return &FieldError{"dim", fmt.Sprintf("must be a positive multiple of --heads %d, got %d", s.Heads, s.Dim)}
	case (s.Dim/s.Heads)%2 != 0:
		return &FieldError{"dim", fmt.Sprintf("head size dim/heads = %d must be even (RoPE rotates pairs)", s.Dim/s.Heads)}
	case s.KVHeads < 1 || s.Heads%s.KVHeads != 0:
		return &FieldError{"kv-heads", fmt.Sprintf("must divide --heads %d, got %d", s.Heads, s.KVHeads)}
	case s.FFN < 1:
		return &FieldError{"ffn", fmt.Sprintf("must be at least 1, got %d", s.FFN)}
	case s.Ctx < 16:
		return &FieldError{"ctx", fmt.Sprintf("must be at least 16, got %d", s.Ctx)}
	case s.Vocab != 0 && (s.Vocab < BaseVocab || s.Vocab > maxVocab):
		return &FieldError{"vocab", fmt.Sprintf("must be 0 (the built-in %d tokens) or %d to %d, got %d", BaseVocab, BaseVocab, maxVocab, s.Vocab)}
	case s.Dtype != F32 && s.Dtype != F16:
		return &FieldError{"dtype", fmt.Sprintf("must be f32 or f16, got %q", s.Dtype)}
	}
	return nil
}

// Token ids of the special tokens.
const (
	UnkID = 0
	BOSID = 1
	EOSID = 2
	// FirstByteID is the id of <0x00>; byte b has id FirstByteID+b.
	FirstByteID = 3
)

// llama.cpp token types.
const (
	typeNormal  = 1
	typeUnknown = 2
	typeControl = 3
	typeByte    = 6
)

// words are the ▁word pieces of the vocabulary, after the byte tokens.
var words = []string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
}

// Vocab returns the built-in vocabulary's token strings, scores and
// llama.cpp token types.
func Vocab() (tokens []string, scores []float32, types []int32) { return VocabOf(0) }

// VocabOf is Vocab padded to n tokens (n > BaseVocab) with filler word
// pieces "▁tN", which greedy decoding never emits (their output rows are
// zero).
func VocabOf(n int) (tokens []string, scores []float32, types []int32) {
	tokens = []string{"<unk>", "<s>", "</s>"}
	types = []int32{typeUnknown, typeControl, typeControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, typeByte)
	}
	for _, w := range words {
		tokens = append(tokens, "\u2581"+w)
		types = append(types, typeNormal)
	}
	for i := len(tokens); i < n; i++ {
		tokens = append(tokens, fmt.Sprintf("\u2581t%d", i))
		types = append(types, typeNormal)
	}
	scores = make([]float32, len(tokens))
	for i := FirstByteID + 256; i < len(tokens); i++ {
		scores[i] = -float32(i - FirstByteID - 256)
	}
	return tokens, scores, types
}

// Printable reports whether token id is one of the byte tokens the model
// generates (0x21–0x7E).
func Printable(id int) bool {
	return id >= FirstByteID+0x21 && id <= FirstByteID+0x7e
}

// Next returns π, the next-token permutation the weights encode: next[t] is
// the token greedy decoding emits after t, for every printable t.
func Next(seed uint64) map[int]int {
	var cycle []int
	for b := 0x21; b <= 0x7e; b++ {
		cycle = append(cycle, FirstByteID+b)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(cycle), func(i, j int) { cycle[i], cycle[j] = cycle[j], cycle[i] })
	next := make(map[int]int, len(cycle))
	for i, t := range cycle {
		next[t] = cycle[(i+1)%len(cycle)]
	}
	return next
}

// Write writes the model of spec to w as GGUF v3.
func Write(w io.Writer, spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	tokens, scores, types := VocabOf(spec.Vocab)
	meta := []kv{
		{"general.architecture", "llama"},
		{"general.name", "servebench-tiny"},
		{"general.alignment", uint32(alignment)},
		{"general.file_type", fileType(spec.Dtype)},
		{"llama.context_length", uint32(spec.Ctx)},
		{"llama.embedding_length", uint32(spec.Dim)},
		{"llama.block_count", uint32(spec.Layers)},
		{"llama.feed_forward_length", uint32(spec.FFN)},
		{"llama.attention.head_count", uint32(spec.Heads)},
		{"llama.attention.head_count_kv", uint32(spec.KVHeads)},
		{"llama.rope.dimension_count", uint32(spec.Dim / spec.Heads)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.vocab_size", uint32(len(tokens))},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.unknown_token_id", uint32(UnkID)},
		{"tokenizer.ggml.bos_token_id", uint32(BOSID)},
		{"tokenizer.ggml.eos_token_id", uint32(EOSID)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
	return writeGGUF(w, meta, tensors(spec, len(tokens)))
}

func fileType(d Dtype) uint32 {
	if d == F16 {
		return 1 // MOSTLY_F16
	}
	return 0 // ALL_F32
}

// tensors builds the llama tensors of spec for a vocabulary of n tokens.
func tensors(spec Spec, n int) []*tensor {
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed+1))
	half := spec.Dtype == F16
	dim, gqa := spec.Dim, spec.Dim/spec.Heads*spec.KVHeads
	normal := func(count int, sigma float64) []float32 {
		v := make([]float32, count)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * sigma)
		}
		return v
	}
	ones := func(count int) []float32 {
		v := make([]float32, count)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	mat := func(name string, in, out int) *tensor {
		return &tensor{name: name, dims: []uint64{uint64(in), uint64(out)}, data: normal(in*out, 0.02), f16: half}
	}
	embd := normal(n*dim, 1)
	output := make([]float32, n*dim)
	for t, next := range Next(spec.Seed) {
		copy(output[next*dim:(next+1)*dim], embd[t*dim:(t+1)*dim])
	}
	ts := []*tensor{{name: "token_embd.weight", dims: []uint64{uint64(dim), uint64(n)}, data: embd, f16: half}}
	for l := 0; l < spec.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			&tensor{name: p + "attn_norm.weight", dims: []uint64{uint64(dim)}, data: ones(dim)},
			mat(p+"attn_q.weight", dim, dim),
			mat(p+"attn_k.weight", dim, gqa),
			mat(p+"attn_v.weight", dim, gqa),
			mat(p+"attn_output.weight", dim, dim),
			&tensor{name: p + "ffn_norm.weight", dims: []uint64{uint64(dim)}, data: ones(dim)},
			mat(p+"ffn_gate.weight", dim, spec.FFN),
			mat(p+"ffn_up.weight", dim, spec.FFN),
			mat(p+"ffn_down.weight", spec.FFN, dim),
		)
	}
	return append(ts,
		&tensor{name: "output_norm.weight", dims: []uint64{uint64(dim)}, data: ones(dim)},
		&tensor{name: "output.weight", dims: []uint64{uint64(dim), uint64(n)}, data: output, f16: half},
	)
}

// WriteFile writes the model to path atomically: to a temporary file in the
// same folder, renamed into place only when complete, so a failure leaves no
// file behind.
func WriteFile(path string, spec Spec) (err error) {
	if err := spec.Validate(); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tinymodel-*.gguf")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = Write(f, spec); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
