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

// kvBytes is the bytes per element of each dtype. GGML block types store a
// block of 32 elements in a fixed number of bytes (q8_0: 32 int8 + one fp16
// scale = 34 bytes; q4_0: 16 + 2 = 18; q4_1: 16 + 2 scales = 20; q5_0:
// 16 + 4 high bits + 2 = 22; q5_1: 24; iq4_nl: 18).
var kvBytes = map[KVDtype]float64{
	KVF32: 4, KVFP16: 2, KVBF16: 2, KVFP8: 1,
	KVQ8_0: 34.0 / 32, KVQ4_0: 18.0 / 32, KVQ4_1: 20.0 / 32,
	KVQ5_0: 22.0 / 32, KVQ5_1: 24.0 / 32, KVIQ4NL: 18.0 / 32,
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
	if _, ok := kvBytes[d]; ok {
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
	return kvBytes[d]
}

// isGGMLQuant reports whether d is a GGML block type (llama.cpp/Ollama only).
func (d KVDtype) isGGMLQuant() bool {
	switch d {
	case KVQ8_0, KVQ4_0, KVQ4_1, KVQ5_0, KVQ5_1, KVIQ4NL:
		return true
	}
	return false
}
