package modelspec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servebench/servebench/internal/suggest"
)

// presets are built-in model specs with values from each model's published
// Hugging Face config.json (num_hidden_layers, num_attention_heads,
// num_key_value_heads, head_dim, hidden_size, intermediate_size,
// vocab_size, tie_word_embeddings, sliding window layout, MLA dims) and the
// parameter count on its model card. The first seven are the seed planner's
// table (multi-backend-sweep.json "planner.models").
var presets = map[string]Spec{
	"qwen2.5-7b":  qwen2("qwen2.5-7b", 28, 28, 4, 3584, 18944, 152064, 7.62, false),
	"qwen2.5-14b": qwen2("qwen2.5-14b", 48, 40, 8, 5120, 13824, 152064, 14.7, false),
	"qwen2.5-32b": qwen2("qwen2.5-32b", 64, 40, 8, 5120, 27648, 152064, 32.5, false),
	"qwen3-8b":    qwen3("qwen3-8b", 36, 32, 8, 4096, 12288, 8.19, false),
	"qwen3-14b":   qwen3("qwen3-14b", 40, 40, 8, 5120, 17408, 14.8, false),
	"llama-3.1-8b": {Name: "llama-3.1-8b", Arch: "llama", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		Hidden: 4096, Intermediate: 14336, Vocab: 128256, ParamsB: 8.03, MaxContext: 131072, Dtype: "bfloat16"},
	"mistral-7b": {Name: "mistral-7b", Arch: "mistral", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		Hidden: 4096, Intermediate: 14336, Vocab: 32768, ParamsB: 7.25, MaxContext: 32768, Dtype: "bfloat16"},

	"llama-3.2-1b": {Name: "llama-3.2-1b", Arch: "llama", Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 64,
		Hidden: 2048, Intermediate: 8192, Vocab: 128256, ParamsB: 1.24, TiedEmbeddings: true, MaxContext: 131072, Dtype: "bfloat16"},
	"llama-3.2-3b": {Name: "llama-3.2-3b", Arch: "llama", Layers: 28, Heads: 24, KVHeads: 8, HeadDim: 128,
		Hidden: 3072, Intermediate: 8192, Vocab: 128256, ParamsB: 3.21, TiedEmbeddings: true, MaxContext: 131072, Dtype: "bfloat16"},
	"llama-3.1-70b": {Name: "llama-3.1-70b", Arch: "llama", Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128,
		Hidden: 8192, Intermediate: 28672, Vocab: 128256, ParamsB: 70.6, MaxContext: 131072, Dtype: "bfloat16"},
	"qwen2-7b":    qwen2("qwen2-7b", 28, 28, 4, 3584, 18944, 152064, 7.62, false),
	"qwen2.5-3b":  qwen2("qwen2.5-3b", 36, 16, 2, 2048, 11008, 151936, 3.09, true),
	"qwen2.5-72b": qwen2("qwen2.5-72b", 80, 64, 8, 8192, 29568, 152064, 72.7, false),
	// Qwen2.5-VL-7B and -3B: text_config of the VL checkpoints and their
	// vision_config (32 blocks, width 1280, SwiGLU MLP 3420, patch 14,
	// 2×2 merge, 2 frames per patch; the processor's max_pixels
	// 12,845,056); the published 8.29B and 3.75B include the vision tower.
	"qwen2.5-vl-7b": withVision(withArch(qwen2("qwen2.5-vl-7b", 28, 28, 4, 3584, 18944, 152064, 8.29, false), "qwen2_5_vl", 128000), qwenVLVision()),
	"qwen2.5-vl-3b": withVision(withArch(qwen2("qwen2.5-vl-3b", 36, 16, 2, 2048, 11008, 151936, 3.75, true), "qwen2_5_vl", 128000), qwenVLVision()),
	"qwen3-4b":      qwen3("qwen3-4b", 36, 32, 8, 2560, 9728, 4.02, true),
	"qwen3-32b":     qwen3("qwen3-32b", 64, 64, 8, 5120, 25600, 32.8, false),
	"phi-4": {Name: "phi-4", Arch: "phi3", Layers: 40, Heads: 40, KVHeads: 10, HeadDim: 128,
		Hidden: 5120, Intermediate: 17920, Vocab: 100352, ParamsB: 14.7, MaxContext: 16384, Dtype: "bfloat16"},
	// Gemma 3 27B: sliding window 1024 on five of every six layers
	// (sliding_window_pattern 6: layer i is global when (i+1) % 6 == 0).
	"gemma-3-27b": {Name: "gemma-3-27b", Arch: "gemma3", Layers: 62, Heads: 32, KVHeads: 16, HeadDim: 128,
		Hidden: 5376, Intermediate: 21504, Vocab: 262208, ParamsB: 27.4, TiedEmbeddings: true,
		SlidingWindow: 1024, LayerKinds: slidingPattern(62, 6), MaxContext: 131072, Dtype: "bfloat16",
		// SigLIP: 27 blocks, width 1152, MLP 4304, 896-pixel images of
		// 14-pixel patches, pooled to mm_tokens_per_image 256
		Vision: &VisionSpec{Depth: 27, Hidden: 1152, Intermediate: 4304, Heads: 16, PatchSize: 14, Channels: 3, ImageSize: 896, TokensPerImage: 256}},
	// DeepSeek-V3: MLA (kv_lora_rank 512 + qk_rope_head_dim 64 cached per
	// layer), 256 routed experts (8 per token), first 3 layers dense.
	"deepseek-v3": {Name: "deepseek-v3", Arch: "deepseek_v3", Layers: 61, Heads: 128, KVHeads: 128, HeadDim: 192,
		Hidden: 7168, Intermediate: 18432, Vocab: 129280, ParamsB: 671, KVLoraRank: 512, QKRopeHeadDim: 64,
		Experts: 256, ExpertsPerToken: 8, MoEIntermediate: 2048, SharedExpertIntermediate: 2048, DenseLayers: 3, MaxContext: 163840, Dtype: "bfloat16"},

	// Mixture-of-experts presets, from each model's published config.json.
	// Qwen3-30B-A3B: 48 layers, 128 experts of 768 (8 per token), 4 KV
	// heads of 128; 30.5B total, 3.3B activated (model card).
	"qwen3-30b-a3b": {Name: "qwen3-30b-a3b", Arch: "qwen3_moe", Layers: 48, Heads: 32, KVHeads: 4, HeadDim: 128, Hidden: 2048,
		Intermediate: 6144, Vocab: 151936, ParamsB: 30.5, Experts: 128, ExpertsPerToken: 8, MoEIntermediate: 768,
		MaxContext: 40960, Dtype: "bfloat16"},
	// Mixtral-8x7B: 8 experts of 14336 (2 per token), 8 KV heads; 46.7B
	// total, 12.9B active (model card).
	"mixtral-8x7b": {Name: "mixtral-8x7b", Arch: "mixtral", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Hidden: 4096,
		Intermediate: 14336, Vocab: 32000, ParamsB: 46.7, Experts: 8, ExpertsPerToken: 2, MoEIntermediate: 14336,
		MaxContext: 32768, Dtype: "bfloat16"},
	// gpt-oss-20b and -120b: width 2880, 64 heads of 64 with 8 KV heads,
	// layer_types alternating sliding (window 128) and full attention,
	// experts of 2880 (4 per token) stored in MXFP4; 21B / 117B total,
	// 3.6B / 5.1B active (model card).
	"gpt-oss-20b":  gptOSS("gpt-oss-20b", 24, 32, 20.9),
	"gpt-oss-120b": gptOSS("gpt-oss-120b", 36, 128, 116.8),
	// Llama 4 Scout (17B-16E): 48 layers, 16 experts of 8192 plus a
	// shared expert (1 routed per token), chunked attention of 8192 on
	// three of every four layers (no_rope_layers), and a 34-block vision
	// encoder; 109B total (109,676,279,296), 17B active.
	"llama-4-scout": {Name: "llama-4-scout", Arch: "llama4", Layers: 48, Heads: 40, KVHeads: 8, HeadDim: 128, Hidden: 5120,
		Intermediate: 16384, Vocab: 202048, ParamsB: 109.68, Experts: 16, ExpertsPerToken: 1, MoEIntermediate: 8192,
		SharedExpertIntermediate: 8192, AttentionChunk: 8192, LayerKinds: chunkedPattern(48, 4), MaxContext: 10485760, Dtype: "bfloat16",
		Vision: &VisionSpec{Depth: 34, Hidden: 1408, Intermediate: 5632, Heads: 16, PatchSize: 14, Channels: 3, ImageSize: 336,
			TokensPerImage: 144, MaxTiles: 17}},
}

// gptOSS is a gpt-oss preset with layers layers and experts experts.
func gptOSS(name string, layers, experts int, params float64) Spec {
	kinds := make([]LayerKind, layers)
	for i := range kinds {
		if i%2 == 0 {
			kinds[i] = SlidingAttention
		}
	}
	return Spec{Name: name, Arch: "gpt_oss", Layers: layers, Heads: 64, KVHeads: 8, HeadDim: 64, Hidden: 2880,
		Intermediate: 2880, Vocab: 201088, ParamsB: params, QKVBias: true, Experts: experts, ExpertsPerToken: 4,
		MoEIntermediate: 2880, SlidingWindow: 128, LayerKinds: kinds, MaxContext: 131072, Dtype: "bfloat16"}
}

// qwenVLVision is the vision_config of Qwen2.5-VL (3B and 7B alike).
func qwenVLVision() *VisionSpec {
	return &VisionSpec{Depth: 32, Hidden: 1280, Intermediate: 3420, Heads: 16, PatchSize: 14, Channels: 3,
		MaxPixels: qwenVLMaxPixels, SpatialMerge: 2, TemporalPatch: 2, GatedMLP: true}
}

func withVision(m Spec, v *VisionSpec) Spec {
	m.Vision = v
	return m
}

// chunkedPattern marks every layer chunked except each interval-th
// (Llama 4's no_rope_layers: those are global).
func chunkedPattern(layers, interval int) []LayerKind {
	k := make([]LayerKind, layers)
	for i := range k {
		if (i+1)%interval != 0 {
			k[i] = ChunkedAttention
		}
	}
	return k
}

func qwen2(name string, layers, heads, kv, hidden, inter, vocab int, params float64, tied bool) Spec {
	return Spec{Name: name, Arch: "qwen2", Layers: layers, Heads: heads, KVHeads: kv, HeadDim: hidden / heads,
		Hidden: hidden, Intermediate: inter, Vocab: vocab, ParamsB: params, TiedEmbeddings: tied, QKVBias: true,
		MaxContext: 32768, Dtype: "bfloat16"}
}

func qwen3(name string, layers, heads, kv, hidden, inter int, params float64, tied bool) Spec {
	return Spec{Name: name, Arch: "qwen3", Layers: layers, Heads: heads, KVHeads: kv, HeadDim: 128,
		Hidden: hidden, Intermediate: inter, Vocab: 151936, ParamsB: params, TiedEmbeddings: tied,
		MaxContext: 40960, Dtype: "bfloat16"}
}

func withArch(m Spec, arch string, ctx int) Spec {
	m.Arch, m.MaxContext = arch, ctx
	return m
}

// slidingPattern marks every layer sliding except each pattern-th (Gemma's
// sliding_window_pattern).
func slidingPattern(layers, pattern int) []LayerKind {
	k := make([]LayerKind, layers)
	for i := range k {
		if (i+1)%pattern != 0 {
			k[i] = SlidingAttention
		}
	}
	return k
}

// PresetNames lists the built-in presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a copy of the built-in spec called name (case-insensitive),
// or an error listing the closest names.
func Preset(name string) (Spec, error) {
	if m, ok := presets[strings.ToLower(name)]; ok {
		m = m.clone()
		m.Preset = strings.ToLower(name)
		return m, nil
	}
	return Spec{}, fmt.Errorf("unknown model preset %q; closest: %s", name, strings.Join(suggest.Closest(name, PresetNames(), 3), ", "))
}

// clone is a copy of m that shares no slice or pointer with it.
func (m Spec) clone() Spec {
	m.LayerKinds = append([]LayerKind(nil), m.LayerKinds...)
	if m.Vision != nil {
		v := *m.Vision
		m.Vision = &v
	}
	return m
}
