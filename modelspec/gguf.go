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
	get := func(k string) (int, bool) {
		if v, ok := info.Ints[a+"."+k]; ok && v < 1<<31 {
			return int(v), true
		}
		if arr, ok := info.IntArrays[a+"."+k]; ok && len(arr) > 0 {
			if v := maxOf(arr); v < 1<<31 {
				return int(v), true
			}
		}
		return 0, false
	}
	m := Spec{Name: name, Arch: a, WeightsBytes: info.TensorBytes, TiedEmbeddings: !info.HasOutput, Dtype: "float16"}
	var ok bool
	for _, k := range []struct {
		key string
		dst *int
	}{{"block_count", &m.Layers}, {"embedding_length", &m.Hidden}, {"attention.head_count", &m.Heads}} {
		if *k.dst, ok = get(k.key); !ok || *k.dst == 0 {
			return m, fmt.Errorf("%s: key %s.%s is missing", name, a, k.key)
		}
	}
	m.KVHeads = m.Heads
	if v, ok := get("attention.head_count_kv"); ok && v > 0 {
		m.KVHeads = v
	}
	m.HeadDim = m.Hidden / m.Heads
	if v, ok := get("attention.key_length"); ok && v > 0 {
		m.HeadDim = v
	}
	m.Intermediate, _ = get("feed_forward_length")
	m.MaxContext, _ = get("context_length")
	m.SlidingWindow, _ = get("attention.sliding_window")
	if v, ok := get("vocab_size"); ok {
		m.Vocab = v
	} else if info.TokenCount > 0 && info.TokenCount < 1<<24 {
		m.Vocab = int(info.TokenCount)
	} else {
		return m, fmt.Errorf("%s: neither key %s.vocab_size nor tokenizer.ggml.tokens is present", name, a)
	}
	if v, ok := get("attention.kv_lora_rank"); ok && v > 0 {
		m.KVLoraRank = v
		m.QKRopeHeadDim, _ = get("rope.dimension_count")
	}
	m.Experts, _ = get("expert_count")
	m.ExpertsPerToken, _ = get("expert_used_count")
	m.MoEIntermediate, _ = get("expert_feed_forward_length")
	m.DenseLayers, _ = get("leading_dense_block_count")
	if m.Experts > 0 && m.MoEIntermediate == 0 {
		m.MoEIntermediate = m.Intermediate // Mixtral: experts of feed_forward_length
	}
	if v, ok := get("expert_shared_feed_forward_length"); ok {
		m.SharedExpertIntermediate = v
	} else if v, ok := get("expert_shared_count"); ok {
		m.SharedExpertIntermediate = v * m.MoEIntermediate
	}
	m.MoELayerStep, _ = get("interleave_moe_layer_step")
	m.LayerBytes = append([]int64(nil), info.LayerBytes...)
	m.OutputBytes, m.OutputNormBytes, m.TokenEmbdBytes = info.OutputBytes, info.OutputNormBytes, info.TokenEmbdBytes
	m.FileType = info.FileType()
	switch m.FileType {
	case "F32":
		m.Dtype = "float32"
	case "BF16":
		m.Dtype = "bfloat16"
	}
	if m.SlidingWindow > 0 {
		m.LayerKinds = ggufSlidingLayout(a, m.Layers)
	}
	return m, m.Validate()
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
