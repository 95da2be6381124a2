package modelspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The testdata config.json files carry the fields of the models'
// published Hugging Face configs (Qwen/Qwen2.5-7B-Instruct,
// google/gemma-3-27b-it, deepseek-ai/DeepSeek-V3, Qwen/Qwen3-30B-A3B,
// mistralai/Mixtral-8x7B-Instruct-v0.1, openai/gpt-oss-20b,
// meta-llama/Llama-4-Scout-17B-16E-Instruct, Qwen/Qwen2.5-VL-7B-Instruct),
// trimmed to what the planner reads plus a few unrelated fields.

// TestMoEParams: total and active parameters of the mixture-of-experts
// presets against their model cards (active as ActiveParams counts it:
// without the input embedding, which Qwen's and Mistral's cards include).
func TestMoEParams(t *testing.T) {
	for _, c := range []struct {
		preset               string
		totalB, activeB, tol float64
	}{
		{"qwen3-30b-a3b", 30.5, 3.3 - 0.311, 0.02},
		{"mixtral-8x7b", 46.7, 12.9 - 0.131, 0.02},
		{"gpt-oss-20b", 20.9, 3.6, 0.02},
		{"gpt-oss-120b", 116.8, 5.1, 0.02},
		{"llama-4-scout", 109.68, 17, 0.02},
		{"deepseek-v3", 671, 37, 0.02},
	} {
		m, err := Preset(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		total, active := float64(m.Params().Total())/1e9, float64(m.ActiveParams())/1e9
		t.Logf("%-14s total %.2fB (card %.1fB), active %.2fB (card %.2fB)", c.preset, total, c.totalB, active, c.activeB)
		if d := total/c.totalB - 1; d > c.tol || d < -c.tol {
			t.Errorf("%s total %.2fB, card %.2fB", c.preset, total, c.totalB)
		}
		if d := active/c.activeB - 1; d > c.tol || d < -c.tol {
			t.Errorf("%s active %.2fB, card %.2fB", c.preset, active, c.activeB)
		}
	}
	dense, _ := Preset("qwen2.5-7b")
	if dense.ActiveParams() != dense.Params().Total()-dense.Params().Embedding {
		t.Error("a dense model's active parameters are all but the input embedding")
	}
}

// TestHFConfigMatchesPresets: a config.json gives the same spec as the
// preset of that model.
func TestHFConfigMatchesPresets(t *testing.T) {
	for _, c := range []struct{ file, preset string }{
		{"qwen2.5-7b-instruct.config.json", "qwen2.5-7b"},
		{"gemma-3-27b-it.config.json", "gemma-3-27b"},
		{"deepseek-v3.config.json", "deepseek-v3"},
		{"qwen3-30b-a3b.config.json", "qwen3-30b-a3b"},
		{"mixtral-8x7b.config.json", "mixtral-8x7b"},
		{"gpt-oss-20b.config.json", "gpt-oss-20b"},
		{"llama-4-scout.config.json", "llama-4-scout"},
		{"qwen2.5-vl-7b-instruct.config.json", "qwen2.5-vl-7b"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			got, err := readHFConfig(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Preset(c.preset)
			if got.Layers != want.Layers || got.Heads != want.Heads || got.KVHeads != want.KVHeads ||
				got.HeadDim != want.HeadDim || got.Hidden != want.Hidden || got.Intermediate != want.Intermediate ||
				got.Vocab != want.Vocab || got.TiedEmbeddings != want.TiedEmbeddings || got.SlidingWindow != want.SlidingWindow ||
				got.KVLoraRank != want.KVLoraRank || got.QKRopeHeadDim != want.QKRopeHeadDim || got.QKVBias != want.QKVBias ||
				got.Experts != want.Experts || got.ExpertsPerToken != want.ExpertsPerToken || got.MoEIntermediate != want.MoEIntermediate ||
				got.SharedExpertIntermediate != want.SharedExpertIntermediate || got.DenseLayers != want.DenseLayers ||
				got.AttentionChunk != want.AttentionChunk {
				t.Errorf("config gives\n%+v\npreset is\n%+v", got, want)
			}
			if (got.Vision == nil) != (want.Vision == nil) || got.Vision != nil && *got.Vision != *want.Vision {
				t.Errorf("vision: config gives %+v, preset %+v", got.Vision, want.Vision)
			}
			if len(got.LayerKinds) != len(want.LayerKinds) {
				t.Fatalf("layer kinds %d vs %d", len(got.LayerKinds), len(want.LayerKinds))
			}
			for i := range got.LayerKinds {
				if got.LayerKinds[i] != want.LayerKinds[i] {
					t.Errorf("layer %d kind %v, preset %v", i, got.LayerKinds[i], want.LayerKinds[i])
				}
			}
		})
	}
}

func TestHFConfigFolder(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join("testdata", "qwen2.5-7b-instruct.config.json"))
	os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
	m, err := Load(dir)
	if err != nil || m.Layers != 28 {
		t.Errorf("folder: %+v %v", m, err)
	}
}

// TestHFConfigSemantics covers head_dim fallback, layer_types and errors
// that name the field.
func TestHFConfigSemantics(t *testing.T) {
	cases := []struct {
		name, json string
		check      func(m Spec) bool
		wantErr    string
	}{
		{"head_dim from hidden/heads", `{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10}`,
			func(m Spec) bool { return m.HeadDim == 16 && m.KVHeads == 4 }, ""},
		{"layer_types", `{"num_hidden_layers":3,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"sliding_window":128,"layer_types":["sliding_attention","sliding_attention","full_attention"]}`,
			func(m Spec) bool {
				return m.Kind(0) == SlidingAttention && m.Kind(2) == FullAttention && m.SlidingWindow == 128
			}, ""},
		{"unused qwen window", `{"model_type":"qwen2","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"sliding_window":4096,"use_sliding_window":false}`,
			func(m Spec) bool { return m.SlidingWindow == 0 && m.QKVBias }, ""},
		{"missing layers", `{"num_attention_heads":4,"hidden_size":64,"vocab_size":10}`, nil, "num_hidden_layers is missing"},
		{"wrong type", `{"num_hidden_layers":"2"}`, nil, "field num_hidden_layers"},
		{"zero heads", `{"num_hidden_layers":2,"num_attention_heads":0,"hidden_size":64,"vocab_size":10}`, nil, "num_attention_heads"},
		{"not json", `{"num_hidden_layers":`, nil, "not valid JSON"},
		{"array", `[1,2]`, nil, "field"},
		{"mamba", `{"model_type":"mamba","num_hidden_layers":2}`, nil, "not supported yet"},
		{"qwen3-next hybrid", `{"model_type":"qwen3_next","num_hidden_layers":48,"layer_types":["linear_attention"]}`, nil, "not supported yet"},
		{"jamba field", `{"model_type":"x","attn_layer_period":8,"num_hidden_layers":2}`, nil, "field attn_layer_period"},
		{"linear layer type", `{"num_hidden_layers":1,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"layer_types":["linear_attention"]}`, nil, "field layer_types"},
		{"text_config error", `{"text_config":{"num_hidden_layers":2}}`, nil, "text_config: field num_attention_heads"},
		{"experts per token above experts", `{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"num_local_experts":4,"num_experts_per_tok":8,"intermediate_size":32}`, nil, "num_experts_per_tok = 8"},
		{"experts without width", `{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"num_experts":4,"num_experts_per_tok":2}`, nil, "moe_intermediate_size"},
		{"vision without patch", `{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"vision_config":{"depth":2,"hidden_size":32,"intermediate_size":64}}`, nil, "vision_config: field patch_size"},
		{"vision wrong type", `{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"vision_config":{"depth":"2"}}`, nil, "vision_config"},
		{"chunked default interval", `{"model_type":"llama4_text","num_hidden_layers":8,"num_attention_heads":4,"hidden_size":64,"vocab_size":10,"attention_chunk_size":8192}`,
			func(m Spec) bool {
				return m.AttentionChunk == 8192 && m.Kind(0) == ChunkedAttention && m.Kind(3) == FullAttention && m.Kind(7) == FullAttention
			}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseHFConfig([]byte(c.json))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !c.check(m) {
				t.Errorf("%+v %v", m, err)
			}
		})
	}
}
