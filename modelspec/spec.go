// Package modelspec describes a model as the planner needs it (Spec: the
// attention shape, the matrix sizes, the vocabulary) and builds that
// description from a built-in preset, a Hugging Face config.json, a GGUF
// file (read by package gguf) or the GGUF metadata Ollama's /api/show
// returns.
package modelspec

import "fmt"

// LayerKind says what attention a transformer layer uses, which decides how
// many KV cells it keeps.
type LayerKind int

// Layer kinds.
const (
	// FullAttention layers attend over the whole context and keep a KV cell
	// per token.
	FullAttention LayerKind = iota
	// SlidingAttention layers attend over the last SlidingWindow tokens only.
	SlidingAttention
)

// Spec is what the planner needs to know about a model: its attention
// shape (for KV bytes), its matrix sizes (for weights and activations) and
// its vocabulary (for logits).
type Spec struct {
	// Name is the preset name, config path or GGUF path.
	Name string `json:"name"`
	// Preset is the name of the built-in preset the spec is ("" when it
	// was read from a file or a server), for calibration records.
	Preset string `json:"-"`
	// Arch is the architecture, e.g. "qwen2", "llama", "deepseek_v3".
	Arch string `json:"arch,omitempty"`
	// Layers is the number of transformer blocks (num_hidden_layers).
	Layers int `json:"n_layers"`
	// Heads is the number of query heads (num_attention_heads).
	Heads int `json:"n_heads"`
	// KVHeads is the number of key/value heads (num_key_value_heads).
	KVHeads int `json:"n_kv_heads"`
	// HeadDim is the per-head dimension (head_dim, else hidden/heads).
	HeadDim int `json:"head_dim"`
	// Hidden is the residual width (hidden_size).
	Hidden int `json:"hidden_size"`
	// Intermediate is the dense MLP width (intermediate_size).
	Intermediate int `json:"intermediate_size"`
	// Vocab is the vocabulary size (vocab_size).
	Vocab int `json:"vocab_size"`
	// ParamsB is the published parameter count in billions (0 = unknown;
	// then it is computed from the dimensions).
	ParamsB float64 `json:"params_b,omitempty"`
	// TiedEmbeddings is true when lm_head shares the embedding matrix.
	TiedEmbeddings bool `json:"tie_word_embeddings"`
	// QKVBias is true when the q/k/v projections have a bias (Qwen2).
	QKVBias bool `json:"qkv_bias,omitempty"`
	// SlidingWindow is the window of sliding-attention layers (0 = none).
	SlidingWindow int `json:"sliding_window,omitempty"`
	// LayerKinds gives each layer's attention; nil means all full.
	LayerKinds []LayerKind `json:"-"`
	// KVLoraRank and QKRopeHeadDim are the MLA latent dims (DeepSeek):
	// each layer caches one latent of KVLoraRank+QKRopeHeadDim per token.
	KVLoraRank    int `json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim int `json:"qk_rope_head_dim,omitempty"`
	// Experts, ExpertsPerToken, MoEIntermediate and DenseLayers describe a
	// mixture-of-experts MLP (0 = dense model).
	Experts         int `json:"n_routed_experts,omitempty"`
	ExpertsPerToken int `json:"num_experts_per_tok,omitempty"`
	MoEIntermediate int `json:"moe_intermediate_size,omitempty"`
	DenseLayers     int `json:"first_k_dense_replace,omitempty"`
	// Dtype is the checkpoint dtype (torch_dtype): "bfloat16", "float16",
	// "float32"; empty means bfloat16.
	Dtype string `json:"torch_dtype,omitempty"`
	// MaxContext is the trained context (max_position_embeddings,
	// n_ctx_train).
	MaxContext int `json:"max_position_embeddings,omitempty"`
	// WeightsBytes is the real size of the weight tensors when known (a
	// GGUF file); 0 = unknown.
	WeightsBytes int64 `json:"weights_bytes,omitempty"`
	// FileType names the GGUF quantization (e.g. "Q4_K_M"), if from GGUF.
	FileType string `json:"file_type,omitempty"`
}

// IsMLA reports whether the model caches a multi-head latent (DeepSeek MLA)
// instead of per-head keys and values.
func (m *Spec) IsMLA() bool { return m.KVLoraRank > 0 }

// Kind returns the attention kind of layer i.
func (m *Spec) Kind(i int) LayerKind {
	if i < len(m.LayerKinds) {
		return m.LayerKinds[i]
	}
	return FullAttention
}

// KVElementsPerToken is the number of cached elements one token needs in
// one layer: K and V (2 × kv_heads × head_dim), or one MLA latent
// (kv_lora_rank + qk_rope_head_dim).
func (m *Spec) KVElementsPerToken() int {
	if m.IsMLA() {
		return m.KVLoraRank + m.QKRopeHeadDim
	}
	return 2 * m.KVHeads * m.HeadDim
}

// EmbdGQA is llama.cpp's n_embd_k_gqa (= n_embd_v_gqa): kv_heads × head_dim.
func (m *Spec) EmbdGQA() int { return m.KVHeads * m.HeadDim }

// Validate checks that the dimensions the planner divides or multiplies by
// are present and sane; the error names the field.
func (m *Spec) Validate() error {
	check := func(field string, v, max int) error {
		if v <= 0 || v > max {
			return fmt.Errorf("model %s: field %s = %d is missing or out of range", m.Name, field, v)
		}
		return nil
	}
	for _, c := range []struct {
		f   string
		v   int
		max int
	}{
		{"num_hidden_layers", m.Layers, 10000},
		{"num_attention_heads", m.Heads, 100000},
		{"num_key_value_heads", m.KVHeads, 100000},
		{"head_dim", m.HeadDim, 100000},
		{"hidden_size", m.Hidden, 1 << 20},
		{"vocab_size", m.Vocab, 1 << 24},
	} {
		if err := check(c.f, c.v, c.max); err != nil {
			return err
		}
	}
	if m.Intermediate < 0 || m.Intermediate > 1<<22 {
		return fmt.Errorf("model %s: field intermediate_size = %d is out of range", m.Name, m.Intermediate)
	}
	if m.SlidingWindow < 0 {
		return fmt.Errorf("model %s: field sliding_window = %d is negative", m.Name, m.SlidingWindow)
	}
	return nil
}

// ParamSplit is a model's parameter count split by how quantizers treat
// them: Linear parameters (attention and MLP projections) get quantized;
// Embedding and LMHead stay in 16 bits; Other (norms, biases) too.
type ParamSplit struct {
	Linear, Embedding, LMHead, Other int64
}

// Total is the sum of all parameters.
func (p ParamSplit) Total() int64 { return p.Linear + p.Embedding + p.LMHead + p.Other }

// Params splits the model's parameters. For dense models with full
// dimensions the split is computed from the architecture (q, k, v, o, gate,
// up, down per layer; embedding; untied lm_head; norms and q/k/v biases).
// When the published count differs by more than 1% from that (a vision
// tower, MoE experts, MLA projections), the difference is counted as linear
// parameters, since those are what quantizers compress.
func (m *Spec) Params() ParamSplit {
	h, kvd, qd := int64(m.Hidden), int64(m.KVHeads*m.HeadDim), int64(m.Heads*m.HeadDim)
	perLayer := h*qd + 2*h*kvd + qd*h + 3*h*int64(m.Intermediate)
	var p ParamSplit
	p.Linear = int64(m.Layers) * perLayer
	p.Embedding = int64(m.Vocab) * h
	if !m.TiedEmbeddings {
		p.LMHead = p.Embedding
	}
	p.Other = int64(m.Layers)*2*h + h
	if m.QKVBias {
		p.Other += int64(m.Layers) * (qd + 2*kvd)
	}
	if m.ParamsB > 0 {
		pub := int64(m.ParamsB * 1e9)
		if d := float64(pub-p.Total()) / float64(pub); d > 0.01 || d < -0.01 {
			p.Linear = pub - p.Embedding - p.LMHead - p.Other
			if p.Linear < 0 {
				p.Linear = 0
			}
		}
	}
	return p
}
