package modelspec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/internal/jsonerr"
)

// hfConfig is the subset of a Hugging Face config.json the planner reads.
// Pointers distinguish "absent" from zero.
type hfConfig struct {
	ModelType         string                     `json:"model_type"`
	Architectures     []string                   `json:"architectures"`
	NumHiddenLayers   *int                       `json:"num_hidden_layers"`
	NumAttentionHeads *int                       `json:"num_attention_heads"`
	NumKeyValueHeads  *int                       `json:"num_key_value_heads"`
	HeadDim           *int                       `json:"head_dim"`
	HiddenSize        *int                       `json:"hidden_size"`
	IntermediateSize  *int                       `json:"intermediate_size"`
	VocabSize         *int                       `json:"vocab_size"`
	TieWordEmbeddings *bool                      `json:"tie_word_embeddings"`
	SlidingWindow     *int                       `json:"sliding_window"`
	UseSlidingWindow  *bool                      `json:"use_sliding_window"`
	SlidingWindowPat  *int                       `json:"sliding_window_pattern"`
	LayerTypes        []string                   `json:"layer_types"`
	TorchDtype        string                     `json:"torch_dtype"`
	Dtype             string                     `json:"dtype"`
	MaxPosition       *int                       `json:"max_position_embeddings"`
	KVLoraRank        *int                       `json:"kv_lora_rank"`
	QKRopeHeadDim     *int                       `json:"qk_rope_head_dim"`
	QKNopeHeadDim     *int                       `json:"qk_nope_head_dim"`
	NRoutedExperts    *int                       `json:"n_routed_experts"`
	NumExperts        *int                       `json:"num_experts"`
	NumLocalExperts   *int                       `json:"num_local_experts"`
	NumExpertsPerTok  *int                       `json:"num_experts_per_tok"`
	MoEIntermediate   *int                       `json:"moe_intermediate_size"`
	FirstKDense       *int                       `json:"first_k_dense_replace"`
	AttentionBias     *bool                      `json:"attention_bias"`
	ExpertsPerToken   *int                       `json:"experts_per_token"`
	NSharedExperts    *int                       `json:"n_shared_experts"`
	SharedExpertInter *int                       `json:"shared_expert_intermediate_size"`
	IntermediateMLP   *int                       `json:"intermediate_size_mlp"`
	InterleaveMoEStep *int                       `json:"interleave_moe_layer_step"`
	AttentionChunk    *int                       `json:"attention_chunk_size"`
	NoRopeLayers      []int                      `json:"no_rope_layers"`
	NoRopeInterval    *int                       `json:"no_rope_layer_interval"`
	TextConfig        json.RawMessage            `json:"text_config"`
	VisionConfig      json.RawMessage            `json:"vision_config"`
	MMTokensPerImage  *int                       `json:"mm_tokens_per_image"`
	Hybrid            map[string]json.RawMessage `json:"-"`
}

// hybridFields are config.json fields of hybrid linear-attention or state
// space (Mamba) models, whose recurrent state the planner does not model.
var hybridFields = []string{
	"ssm_cfg", "mamba_d_state", "mamba_d_conv", "mamba_expand", "ssm_state_size", "state_size",
	"linear_conv_kernel_dim", "linear_num_key_heads", "full_attention_interval", "hybrid_override_pattern",
	"attn_layer_period", "attn_layer_indices", "layers_block_type", "linear_attn_config",
}

// hybridModelTypes are model_type values of such models.
var hybridModelTypes = map[string]bool{
	"mamba": true, "mamba2": true, "jamba": true, "falcon_h1": true, "falcon_mamba": true, "qwen3_next": true,
	"nemotron_h": true, "granitemoehybrid": true, "zamba": true, "zamba2": true, "lfm2": true, "bamba": true,
	"rwkv": true, "recurrent_gemma": true, "minimax": true, "minimax_m1": true,
}

// readHFConfig reads a Hugging Face config.json (path is the file or the
// model folder holding it). Vision-language models are read from their
// text_config. Errors name the file and the field.
func readHFConfig(path string) (Spec, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "config.json")
	}
	// Real config.json files are a few KiB (filecap.Config: 16 MiB).
	b, err := filecap.ReadFile(path, filecap.Config, "a config.json")
	if filecap.IsTooLarge(err) {
		return Spec{}, fmt.Errorf("%s: %v", path, err)
	}
	if err != nil {
		return Spec{}, err
	}
	m, err := ParseHFConfig(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %v", path, err)
	}
	m.Name = path
	return m, nil
}

// ParseHFConfig parses config.json bytes into a Spec.
func ParseHFConfig(b []byte) (Spec, error) {
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return Spec{}, jsonerr.Describe(err)
	}
	if err := json.Unmarshal(b, &c.Hybrid); err != nil {
		return Spec{}, jsonerr.Describe(err)
	}
	if len(c.TextConfig) > 0 && string(c.TextConfig) != "null" {
		return c.outer()
	}
	if err := c.refuseHybrid(); err != nil {
		return Spec{}, err
	}
	m, err := c.spec()
	if err != nil {
		return m, err
	}
	if err := c.vision(&m); err != nil {
		return Spec{}, err
	}
	return m, m.Validate()
}

// outer reads a config whose text model is its text_config (a
// vision-language model's): the inner config's Spec, with what the outer
// one says of the architecture, dtype, tied embeddings and context where
// the inner is silent, and the outer's vision tower.
func (c *hfConfig) outer() (Spec, error) {
	inner, err := ParseHFConfig(c.TextConfig)
	if err != nil {
		return Spec{}, fmt.Errorf("text_config: %v", err)
	}
	if inner.Arch == "" {
		inner.Arch = c.ModelType
	}
	if inner.Dtype == "" {
		inner.Dtype = firstNonEmpty(c.TorchDtype, c.Dtype)
	}
	if c.TieWordEmbeddings != nil {
		inner.TiedEmbeddings = *c.TieWordEmbeddings
	}
	if inner.MaxContext == 0 && c.MaxPosition != nil {
		inner.MaxContext = *c.MaxPosition
	}
	if err := c.vision(&inner); err != nil {
		return Spec{}, err
	}
	return inner, nil
}

// refuseHybrid refuses hybrid linear-attention/state-space models, by
// model type, by a field only they have, or by a layer type that is
// neither full nor sliding attention.
func (c *hfConfig) refuseHybrid() error {
	if hybridModelTypes[strings.ToLower(c.ModelType)] {
		return fmt.Errorf("model_type %q is a hybrid linear-attention/state-space model: not supported yet", c.ModelType)
	}
	for _, f := range hybridFields {
		if v, ok := c.Hybrid[f]; ok && string(v) != "null" {
			return fmt.Errorf("field %s: hybrid linear-attention/state-space (Mamba) models are not supported yet", f)
		}
	}
	for _, lt := range c.LayerTypes {
		if lt != "full_attention" && lt != "sliding_attention" {
			return fmt.Errorf("field layer_types: layer type %q (hybrid linear-attention/Mamba) is not supported yet", lt)
		}
	}
	return nil
}

// vision reads the vision_config of a vision-language model into m.
func (c *hfConfig) vision(m *Spec) error {
	if len(c.VisionConfig) == 0 || string(c.VisionConfig) == "null" {
		return nil
	}
	mm := 0
	if c.MMTokensPerImage != nil {
		mm = *c.MMTokensPerImage
	}
	v, err := parseVisionConfig(c.VisionConfig, strings.ToLower(c.ModelType), mm)
	if err != nil {
		return err
	}
	m.Vision = v
	return nil
}

// spec reads the text model's fields into a Spec and validates it: the
// dimensions (dims), the model class's defaults, multi-head latent
// attention (mla), the experts (moe), sliding windows and chunked
// attention.
func (c *hfConfig) spec() (Spec, error) {
	var m Spec
	if err := c.dims(&m); err != nil {
		return m, err
	}
	if c.IntermediateSize != nil {
		m.Intermediate = *c.IntermediateSize
	}
	m.Arch = c.ModelType
	m.Dtype = firstNonEmpty(c.TorchDtype, c.Dtype)
	// Absent tie_word_embeddings takes the model class's default: true
	// for Gemma, false for Llama, Qwen, Mistral, DeepSeek and most others.
	m.TiedEmbeddings = strings.HasPrefix(c.ModelType, "gemma")
	if c.TieWordEmbeddings != nil {
		m.TiedEmbeddings = *c.TieWordEmbeddings
	}
	if c.MaxPosition != nil {
		m.MaxContext = *c.MaxPosition
	}
	m.QKVBias = qkvBiasTypes[c.ModelType] || (c.AttentionBias != nil && *c.AttentionBias)
	if err := c.mla(&m); err != nil {
		return m, err
	}
	for _, e := range []*int{c.NRoutedExperts, c.NumExperts, c.NumLocalExperts} {
		if e != nil && *e > 0 {
			m.Experts = *e
		}
	}
	if err := c.moe(&m); err != nil {
		return m, err
	}
	if err := c.sliding(&m); err != nil {
		return m, err
	}
	c.chunked(&m)
	return m, m.Validate()
}

// qkvBiasTypes are the model types whose attention has Q, K and V biases
// without saying attention_bias (Qwen2 and its vision-language models).
var qkvBiasTypes = map[string]bool{"qwen2": true, "qwen2_vl": true, "qwen2_5_vl": true}

// positive is a dimension field's value: present and above zero.
func positive(field string, v *int) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("field %s is missing", field)
	}
	if *v <= 0 {
		return 0, fmt.Errorf("field %s = %d must be > 0", field, *v)
	}
	return *v, nil
}

// hfDim is one dimension field of config.json and where the Spec keeps
// it.
type hfDim struct {
	field string
	v     *int
	dst   *int
}

// dims reads the dimensions: layers, heads, hidden size and vocabulary,
// which every config gives (Gemma 3's vocabulary has a class default),
// then the KV heads and head width, which default to the heads and
// hidden/heads.
func (c *hfConfig) dims(m *Spec) error {
	if c.VocabSize == nil && strings.HasPrefix(c.ModelType, "gemma3") {
		v := 262208 // Gemma3TextConfig's default; hub configs omit it
		c.VocabSize = &v
	}
	for _, d := range []hfDim{
		{"num_hidden_layers", c.NumHiddenLayers, &m.Layers},
		{"num_attention_heads", c.NumAttentionHeads, &m.Heads},
		{"hidden_size", c.HiddenSize, &m.Hidden},
		{"vocab_size", c.VocabSize, &m.Vocab},
	} {
		n, err := positive(d.field, d.v)
		if err != nil {
			return err
		}
		*d.dst = n
	}
	m.KVHeads, m.HeadDim = m.Heads, m.Hidden/m.Heads
	for _, d := range []hfDim{
		{"num_key_value_heads", c.NumKeyValueHeads, &m.KVHeads},
		{"head_dim", c.HeadDim, &m.HeadDim},
	} {
		if d.v == nil {
			continue
		}
		n, err := positive(d.field, d.v)
		if err != nil {
			return err
		}
		*d.dst = n
	}
	return nil
}

// mla reads multi-head latent attention (DeepSeek V2/V3): the compressed
// KV rank and the RoPE part of the head, whose head width is the no-RoPE
// and RoPE parts together.
func (c *hfConfig) mla(m *Spec) error {
	if c.KVLoraRank == nil || *c.KVLoraRank <= 0 {
		return nil
	}
	m.KVLoraRank = *c.KVLoraRank
	r, err := positive("qk_rope_head_dim", c.QKRopeHeadDim)
	if err != nil {
		return err
	}
	m.QKRopeHeadDim = r
	if c.QKNopeHeadDim != nil {
		m.HeadDim = *c.QKNopeHeadDim + m.QKRopeHeadDim
	}
	return nil
}

// moe reads the mixture-of-experts fields. Mixtral and gpt-oss give the
// expert width as intermediate_size; Llama 4 gives it as
// intermediate_size (its shared expert has the same width) and its dense
// MLP as intermediate_size_mlp; DeepSeek's shared experts are
// n_shared_experts of moe_intermediate_size.
func (c *hfConfig) moe(m *Spec) error {
	if m.Experts == 0 {
		return nil
	}
	for _, k := range []*int{c.ExpertsPerToken, c.NumExpertsPerTok} {
		if k != nil {
			m.ExpertsPerToken = *k
		}
	}
	if m.ExpertsPerToken <= 0 || m.ExpertsPerToken > m.Experts {
		return fmt.Errorf("field num_experts_per_tok = %d must be in 1..%d (the experts)", m.ExpertsPerToken, m.Experts)
	}
	m.MoEIntermediate = m.Intermediate
	if c.MoEIntermediate != nil {
		m.MoEIntermediate = *c.MoEIntermediate
	}
	if strings.HasPrefix(c.ModelType, "llama4") {
		m.SharedExpertIntermediate = m.Intermediate
		if c.IntermediateMLP != nil {
			m.Intermediate = *c.IntermediateMLP
		}
	}
	if c.SharedExpertInter != nil {
		m.SharedExpertIntermediate = *c.SharedExpertInter
	}
	if c.NSharedExperts != nil {
		m.SharedExpertIntermediate = *c.NSharedExperts * m.MoEIntermediate
	}
	if c.FirstKDense != nil {
		m.DenseLayers = *c.FirstKDense
	}
	if c.InterleaveMoEStep != nil {
		m.MoELayerStep = *c.InterleaveMoEStep
	}
	if m.MoEIntermediate <= 0 || m.MoEIntermediate > 1<<22 {
		return fmt.Errorf("field moe_intermediate_size = %d is missing or out of range", m.MoEIntermediate)
	}
	return nil
}

// chunked sets Llama 4's layout: with attention_chunk_size, a layer whose
// no_rope_layers entry is 0 (NoPE) attends globally and the others within
// chunks; without the list, every no_rope_layer_interval-th layer (4 by
// default) is global (transformers' Llama4TextConfig).
func (c *hfConfig) chunked(m *Spec) {
	if c.AttentionChunk == nil || *c.AttentionChunk <= 0 || m.SlidingWindow > 0 {
		return
	}
	m.AttentionChunk = *c.AttentionChunk
	interval := 4
	if c.NoRopeInterval != nil && *c.NoRopeInterval > 0 {
		interval = *c.NoRopeInterval
	}
	m.LayerKinds = make([]LayerKind, m.Layers)
	for i := range m.LayerKinds {
		global := (i+1)%interval == 0
		if len(c.NoRopeLayers) == m.Layers {
			global = c.NoRopeLayers[i] == 0
		}
		if !global {
			m.LayerKinds[i] = ChunkedAttention
		}
	}
}

// sliding sets the sliding-window layout: layer_types when given; else
// Gemma's sliding_window_pattern (every pattern-th layer global); else a
// sliding_window on every layer (Mistral v0.1) unless use_sliding_window
// is false (Qwen2 ships a window it does not use).
func (c *hfConfig) sliding(m *Spec) error {
	if c.SlidingWindow == nil || *c.SlidingWindow <= 0 || (c.UseSlidingWindow != nil && !*c.UseSlidingWindow) {
		return nil
	}
	m.SlidingWindow = *c.SlidingWindow
	switch {
	case len(c.LayerTypes) > 0:
		if len(c.LayerTypes) != m.Layers {
			return fmt.Errorf("field layer_types has %d entries for %d layers", len(c.LayerTypes), m.Layers)
		}
		m.LayerKinds = make([]LayerKind, m.Layers)
		for i, lt := range c.LayerTypes {
			if lt == "sliding_attention" {
				m.LayerKinds[i] = SlidingAttention
			}
		}
	case c.SlidingWindowPat != nil && *c.SlidingWindowPat > 0:
		m.LayerKinds = slidingPattern(m.Layers, *c.SlidingWindowPat)
	case m.Arch == "gemma2":
		m.LayerKinds = slidingPattern(m.Layers, 2)
	case strings.HasPrefix(m.Arch, "gemma3"):
		// transformers' Gemma3TextConfig default sliding_window_pattern
		m.LayerKinds = slidingPattern(m.Layers, 6)
	default:
		m.LayerKinds = slidingPattern(m.Layers, m.Layers+1)
	}
	return nil
}

// firstNonEmpty returns the first of s that is not "".
func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
