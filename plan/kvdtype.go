package plan

import (
	"fmt"
	"strings"
)

// KVDtype is the element type of the KV cache as a server's flag names it
// (vLLM --kv-cache-dtype, llama.cpp -ctk/-ctv, OLLAMA_KV_CACHE_TYPE).
type KVDtype string

// KV-cache dtypes. Auto means "the model's dtype" (vLLM's default).
const (
	KVAuto  KVDtype = "auto"
	KVF32   KVDtype = "f32"
	KVFP16  KVDtype = "fp16"
	KVBF16  KVDtype = "bf16"
	KVFP8   KVDtype = "fp8"
	KVQ8_0  KVDtype = "q8_0"
	KVQ4_0  KVDtype = "q4_0"
	KVQ4_1  KVDtype = "q4_1"
	KVQ5_0  KVDtype = "q5_0"
	KVQ5_1  KVDtype = "q5_1"
	KVIQ4NL KVDtype = "iq4_nl"
)

// known reports whether d is a KV dtype servebench models: fp8, or one
// of the GGML types of kvGGML (whose block sizes come from gguf's table).
func (d KVDtype) known() bool {
	_, ok := kvGGML[d]
	return ok || d == KVFP8
}

// kvAliases maps other spellings to the canonical names.
var kvAliases = map[string]KVDtype{
	"f16": KVFP16, "float16": KVFP16, "half": KVFP16, "bfloat16": KVBF16,
	"fp8_e4m3": KVFP8, "fp8_e5m2": KVFP8, "fp8_inc": KVFP8, "float32": KVF32, "fp32": KVF32,
}

// ParseKVDtype returns the dtype named s, or an error listing valid names.
func ParseKVDtype(s string) (KVDtype, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if a, ok := kvAliases[l]; ok {
		return a, nil
	}
	d := KVDtype(l)
	if d == KVAuto {
		return d, nil
	}
	if d.known() {
		return d, nil
	}
	return "", fmt.Errorf("unknown KV-cache dtype %q (want auto, fp16, bf16, f32, fp8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl)", s)
}

// ParseKVDtypes parses a comma-separated list.
func ParseKVDtypes(s string) ([]KVDtype, error) {
	var out []KVDtype
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		d, err := ParseKVDtype(f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no KV-cache dtype given")
	}
	return out, nil
}

// BytesPerElement is the bytes per cached element; auto resolves to the model dtype
// (2 for fp16/bf16, 4 for float32).
func (d KVDtype) BytesPerElement(modelDtype string) float64 {
	if d == KVAuto {
		if strings.Contains(strings.ToLower(modelDtype), "32") {
			return 4
		}
		return 2
	}
	if d == KVFP8 {
		return 1
	}
	if t, ok := kvGGML[d]; ok {
		return t.BytesPerElement()
	}
	return 0
}

// isGGMLQuant reports whether d is a GGML block type (llama.cpp/Ollama only).
func (d KVDtype) isGGMLQuant() bool {
	switch d {
	case KVQ8_0, KVQ4_0, KVQ4_1, KVQ5_0, KVQ5_1, KVIQ4NL:
		return true
	}
	return false
}
