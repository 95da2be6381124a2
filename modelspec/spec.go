// Package modelspec describes a model as the planner needs it (Spec: the
// attention shape, the matrix sizes, the vocabulary) and builds that
// description from a built-in preset, a Hugging Face config.json, a GGUF
// file (read by package gguf) or the GGUF metadata Ollama's /api/show
// returns.
package modelspec

import (
	"fmt"
	"strings"
)

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
	// ChunkedAttention layers (Llama 4's local attention) attend within
	// fixed chunks of AttentionChunk tokens.
	ChunkedAttention
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
	// mixture-of-experts MLP (0 = dense model): Experts routed experts of
	// MoEIntermediate width each, ExpertsPerToken of them visited by each
	// token, and the first DenseLayers layers dense (DeepSeek's
	// first_k_dense_replace).
	Experts         int `json:"n_routed_experts,omitempty"`
	ExpertsPerToken int `json:"num_experts_per_tok,omitempty"`
	MoEIntermediate int `json:"moe_intermediate_size,omitempty"`
	DenseLayers     int `json:"first_k_dense_replace,omitempty"`
	// SharedExpertIntermediate is the total width of the shared experts
	// every token visits in an MoE layer (DeepSeek n_shared_experts ×
	// moe_intermediate_size, Llama 4 intermediate_size, Qwen2-MoE
	// shared_expert_intermediate_size); 0 = none.
	SharedExpertIntermediate int `json:"shared_expert_intermediate_size,omitempty"`
	// MoELayerStep makes every MoELayerStep-th layer an MoE layer and the
	// others dense (Llama 4's interleave_moe_layer_step: layer i is MoE
	// when (i+1) % step == 0); 0 or 1 = every layer after DenseLayers.
	MoELayerStep int `json:"interleave_moe_layer_step,omitempty"`
	// AttentionChunk is the chunk of ChunkedAttention layers (Llama 4's
	// attention_chunk_size); 0 = none.
	AttentionChunk int `json:"attention_chunk_size,omitempty"`
	// Vision is the vision encoder of a vision-language model; nil for a
	// text-only model.
	Vision *VisionSpec `json:"vision,omitempty"`
	// LayerBytes, OutputBytes, OutputNormBytes and TokenEmbdBytes are the
	// real tensor sizes of a GGUF file, per repeating layer (blk.N) and
	// for the non-repeating tensors (output.weight, output_norm,
	// token_embd), which llama.cpp and Ollama place per device; nil/0
	// when not read from a GGUF file.
	LayerBytes      []int64 `json:"-"`
	OutputBytes     int64   `json:"-"`
	OutputNormBytes int64   `json:"-"`
	TokenEmbdBytes  int64   `json:"-"`
	// Dtype is the checkpoint dtype (torch_dtype): "bfloat16", "float16",
	// "float32"; empty means bfloat16.
	Dtype string `json:"torch_dtype,omitempty"`
	// MaxContext is the trained context (max_position_embeddings,
	// n_ctx_train).
	MaxContext int `json:"max_position_embeddings,omitempty"`
	// WeightsBytes is the real size of the weight tensors when known (a
	// GGUF file, or the safetensors headers of a fetched checkpoint);
	// 0 = unknown.
	WeightsBytes int64 `json:"weights_bytes,omitempty"`
	// WeightsSource says where WeightsBytes is from ("" = a GGUF file's
	// tensor sizes).
	WeightsSource string `json:"weights_source,omitempty"`
	// FileType names the GGUF quantization (e.g. "Q4_K_M"), if from GGUF.
	FileType string `json:"file_type,omitempty"`
}

// IsMoE reports whether the model has routed experts.
func (m *Spec) IsMoE() bool { return m.Experts > 0 && m.MoEIntermediate > 0 }

// IsMoELayer reports whether layer i is a mixture-of-experts layer: not
// one of the first DenseLayers, and on MoELayerStep's interleave.
func (m *Spec) IsMoELayer(i int) bool {
	if !m.IsMoE() || i < m.DenseLayers {
		return false
	}
	return m.MoELayerStep <= 1 || (i+1)%m.MoELayerStep == 0
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
	if m.SlidingWindow < 0 || m.AttentionChunk < 0 {
		return fmt.Errorf("model %s: field sliding_window/attention_chunk_size is negative", m.Name)
	}
	if !m.moeInRange() {
		return fmt.Errorf("model %s: mixture-of-experts fields out of range (experts %d, per token %d)", m.Name, m.Experts, m.ExpertsPerToken)
	}
	if m.Vision != nil {
		if err := m.Vision.validate(); err != nil {
			return fmt.Errorf("model %s: %v", m.Name, err)
		}
	}
	return nil
}

// moeInRange says the mixture-of-experts fields are in range: the
// experts, those a token routes to (at most the experts), the routed and
// shared experts' widths, and the dense layers and MoE layer step.
func (m *Spec) moeInRange() bool {
	in := func(v, hi int) bool { return v >= 0 && v <= hi }
	return in(m.Experts, 1<<16) && in(m.ExpertsPerToken, max(m.Experts, 0)) &&
		in(m.MoEIntermediate, 1<<22) && in(m.SharedExpertIntermediate, 1<<22) &&
		m.DenseLayers >= 0 && m.MoELayerStep >= 0
}

// ParamSplit is a model's parameter count split by how quantizers and
// servers treat them: Linear parameters (attention, MLP and expert
// projections, the vision encoder) get quantized; Embedding and LMHead
// stay in 16 bits; Other (norms, biases) too. Experts and Vision are the
// parts of Linear in routed experts and in the vision encoder.
type ParamSplit struct {
	Linear, Embedding, LMHead, Other int64
	Experts, Vision                  int64
}

// Total is the sum of all parameters.
func (p ParamSplit) Total() int64 { return p.Linear + p.Embedding + p.LMHead + p.Other }

// layerLinear is the attention and MLP projections of layer i: q, k, v,
// o, and the dense MLP (gate, up, down) or, in an MoE layer, every routed
// expert, the shared experts and the router. experts is the routed part.
func (m *Spec) layerLinear(i int) (total, experts int64) {
	h, kvd, qd := int64(m.Hidden), int64(m.KVHeads*m.HeadDim), int64(m.Heads*m.HeadDim)
	total = h*qd + 2*h*kvd + qd*h
	if m.IsMoELayer(i) {
		experts = int64(m.Experts) * 3 * h * int64(m.MoEIntermediate)
		total += experts + 3*h*int64(m.SharedExpertIntermediate) + h*int64(m.Experts)
		return total, experts
	}
	return total + 3*h*int64(m.Intermediate), 0
}

// Params splits the model's parameters. They are computed from the
// architecture (q, k, v, o per layer; the dense MLP or the experts of
// each layer; embedding; untied lm_head; norms and q/k/v biases; the
// vision encoder from Vision). When the published count differs by more
// than 1% from that (MLA projections, a vision tower without a Vision
// spec), the difference is counted as linear parameters, since those are
// what quantizers compress, and, for a vision-language model, as its
// vision encoder.
func (m *Spec) Params() ParamSplit {
	h, kvd, qd := int64(m.Hidden), int64(m.KVHeads*m.HeadDim), int64(m.Heads*m.HeadDim)
	var p ParamSplit
	for i := 0; i < m.Layers; i++ {
		l, e := m.layerLinear(i)
		p.Linear += l
		p.Experts += e
	}
	if m.Vision != nil {
		p.Vision = m.Vision.Params()
		p.Linear += p.Vision
	}
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
			diff := pub - p.Total()
			p.Linear = max(p.Linear+diff, 0)
			if strings.HasSuffix(m.Arch, "_vl") && m.Vision == nil && diff > 0 {
				p.Vision = diff
			}
		}
	}
	return p
}

// ActiveParams is the number of weights one text token is multiplied by
// in a forward pass, what its FLOPs scale with (2 × ActiveParams per
// token): every projection and the lm_head, but of the routed experts
// only the ExpertsPerToken a token visits, and neither the vision encoder
// (images only) nor the input embedding (a table lookup). Model cards
// that count the embedding give more: Qwen3-30B-A3B's "3.3B activated" is
// 3.04B here plus its 0.31B embedding; gpt-oss-20b's 3.6B is the same
// count as this.
func (m *Spec) ActiveParams() int64 {
	p := m.Params()
	active := p.Total() - p.Embedding - p.Vision
	if p.Experts > 0 && m.Experts > 0 {
		k := int64(min(max(m.ExpertsPerToken, 1), m.Experts))
		active -= p.Experts - p.Experts*k/int64(m.Experts)
	}
	if m.TiedEmbeddings {
		active += p.Embedding // the lm_head multiplies by the shared matrix
	}
	return active
}
