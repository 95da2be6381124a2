package modelspec

import (
	"fmt"
	"path/filepath"

	"github.com/servebench/servebench/gguf"
)

// FromGGUF turns GGUF metadata into a Spec; errors name the missing key.
func FromGGUF(info *gguf.Info, name string) (Spec, error) {
	a := info.Arch
	if a == "" {
		return Spec{}, fmt.Errorf("%s: key general.architecture is missing", name)
	}
	r := ggufKeys{info: info, arch: a}
	m := Spec{Name: name, Arch: a, WeightsBytes: info.TensorBytes, TiedEmbeddings: !info.HasOutput, Dtype: "float16"}
	var ok bool
	for _, k := range []struct {
		key string
		dst *int
	}{{"block_count", &m.Layers}, {"embedding_length", &m.Hidden}, {"attention.head_count", &m.Heads}} {
		if *k.dst, ok = r.get(k.key); !ok || *k.dst == 0 {
			return m, fmt.Errorf("%s: key %s.%s is missing", name, a, k.key)
		}
	}
	m.KVHeads = r.positiveOr("attention.head_count_kv", m.Heads)
	m.HeadDim = r.positiveOr("attention.key_length", m.Hidden/m.Heads)
	m.Intermediate, _ = r.get("feed_forward_length")
	m.MaxContext, _ = r.get("context_length")
	m.SlidingWindow, _ = r.get("attention.sliding_window")
	if v, ok := r.get("vocab_size"); ok {
		m.Vocab = v
	} else if info.TokenCount > 0 && info.TokenCount < 1<<24 {
		m.Vocab = int(info.TokenCount)
	} else {
		return m, fmt.Errorf("%s: neither key %s.vocab_size nor tokenizer.ggml.tokens is present", name, a)
	}
	if v, ok := r.get("attention.kv_lora_rank"); ok && v > 0 {
		m.KVLoraRank = v
		m.QKRopeHeadDim, _ = r.get("rope.dimension_count")
	}
	r.experts(&m)
	m.LayerBytes = append([]int64(nil), info.LayerBytes...)
	m.OutputBytes, m.OutputNormBytes, m.TokenEmbdBytes = info.OutputBytes, info.OutputNormBytes, info.TokenEmbdBytes
	m.FileType = info.FileType()
	if d, ok := ggufFileDtypes[m.FileType]; ok {
		m.Dtype = d
	}
	if m.SlidingWindow > 0 {
		m.LayerKinds = ggufSlidingLayout(a, m.Layers)
	}
	return m, m.Validate()
}

// ggufFileDtypes are the dtypes of the unquantized file types other than
// float16, the default.
var ggufFileDtypes = map[string]string{"F32": "float32", "BF16": "bfloat16"}

// ggufKeys reads an architecture's integer keys (<arch>.<key>) of GGUF
// metadata.
type ggufKeys struct {
	info *gguf.Info
	arch string
}

// get is the key's value, or for a per-layer array its largest; false
// when absent or past an int32.
func (r ggufKeys) get(k string) (int, bool) {
	if v, ok := r.info.Ints[r.arch+"."+k]; ok && v < 1<<31 {
		return int(v), true
	}
	if arr, ok := r.info.IntArrays[r.arch+"."+k]; ok && len(arr) > 0 {
		if v := maxOf(arr); v < 1<<31 {
			return int(v), true
		}
	}
	return 0, false
}

// positiveOr is the key's value when present and positive, else def.
func (r ggufKeys) positiveOr(k string, def int) int {
	if v, ok := r.get(k); ok && v > 0 {
		return v
	}
	return def
}

// experts reads the mixture-of-experts keys: the experts and those a
// token uses, their width (Mixtral's are feed_forward_length wide), the
// leading dense layers, the shared experts (by width, or by count of
// routed-expert widths) and the MoE layer step.
func (r ggufKeys) experts(m *Spec) {
	m.Experts, _ = r.get("expert_count")
	m.ExpertsPerToken, _ = r.get("expert_used_count")
	m.MoEIntermediate, _ = r.get("expert_feed_forward_length")
	m.DenseLayers, _ = r.get("leading_dense_block_count")
	if m.Experts > 0 && m.MoEIntermediate == 0 {
		m.MoEIntermediate = m.Intermediate // Mixtral: experts of feed_forward_length
	}
	if v, ok := r.get("expert_shared_feed_forward_length"); ok {
		m.SharedExpertIntermediate = v
	} else if v, ok := r.get("expert_shared_count"); ok {
		m.SharedExpertIntermediate = v * m.MoEIntermediate
	}
	m.MoELayerStep, _ = r.get("interleave_moe_layer_step")
}

// ggufSlidingLayout is llama.cpp's per-architecture sliding-window layout:
// Gemma 2 and gpt-oss alternate (even layers sliding: set_swa_pattern(2)),
// Gemma 3 has five sliding layers then one global; otherwise every layer
// uses the window.
func ggufSlidingLayout(arch string, layers int) []LayerKind {
	switch arch {
	case "gemma2", "gpt-oss":
		k := make([]LayerKind, layers)
		for i := range k {
			if i%2 == 0 {
				k[i] = SlidingAttention
			}
		}
		return k
	case "gemma3":
		return slidingPattern(layers, 6)
	}
	return slidingPattern(layers, layers+1)
}

// maxOf is the largest of v, which is not empty.
func maxOf(v []uint64) uint64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// FromModelInfo builds a spec from GGUF metadata given as JSON (the
// "model_info" of Ollama's /api/show): numbers become Ints, number lists
// IntArrays, "general.*" strings Strings. Weights are unknown there.
func FromModelInfo(name string, mi map[string]any) (Spec, error) {
	info := &gguf.Info{Ints: map[string]uint64{}, IntArrays: map[string][]uint64{}, Strings: map[string]string{}, HasOutput: true}
	for k, v := range mi {
		switch x := v.(type) {
		case float64:
			if x >= 0 && x < 1<<53 {
				info.Ints[k] = uint64(x)
			}
		case string:
			info.Strings[k] = x
		case []any:
			if k == "tokenizer.ggml.tokens" {
				info.TokenCount = uint64(len(x))
				continue
			}
			var arr []uint64
			for _, e := range x {
				if f, ok := e.(float64); ok && f >= 0 && f < 1<<53 {
					arr = append(arr, uint64(f))
				}
			}
			if len(arr) == len(x) && len(arr) > 0 {
				info.IntArrays[k] = arr
			}
		}
	}
	info.Arch = info.Strings["general.architecture"]
	if v, ok := info.Ints["tokenizer.ggml.tokens"]; ok && info.TokenCount == 0 {
		info.TokenCount = v
	}
	return FromGGUF(info, name)
}

// ReadGGUF reads a GGUF file into a Spec named after the file (and its
// general.name when it has one).
func ReadGGUF(path string) (Spec, error) {
	info, err := gguf.Read(path)
	if err != nil {
		return Spec{}, err
	}
	m, err := FromGGUF(info, path)
	if err == nil {
		m.Name = filepath.Base(path)
		if n := info.Strings["general.name"]; n != "" {
			m.Name = n + " (" + m.Name + ")"
		}
	}
	return m, err
}
