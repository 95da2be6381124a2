package plan

// Ollama defaults (server envconfig of Ollama v0.6.x, the testbed's
// version): num_ctx 2048 (OLLAMA_CONTEXT_LENGTH; newer releases default to
// 4096, pass --context), OLLAMA_NUM_PARALLEL 4 where memory allows (its
// auto choice; 1 otherwise), OLLAMA_KV_CACHE_TYPE f16, flash attention off.
const (
	ollamaDefaultNumCtx   = 2048
	ollamaDefaultParallel = 4
)

// ollamaKVType returns the KV type Ollama really uses for the requested
// OLLAMA_KV_CACHE_TYPE: it accepts f16, q8_0 and q4_0, and only with
// OLLAMA_FLASH_ATTENTION=1; otherwise it falls back to f16.
func ollamaKVType(in *Inputs, d KVDtype) (KVDtype, []string) {
	switch d {
	case KVFP16:
		return d, nil
	case KVQ8_0, KVQ4_0:
		if !in.FlashAttention {
			return KVFP16, []string{"Ollama uses OLLAMA_KV_CACHE_TYPE=" + string(d) + " only with OLLAMA_FLASH_ATTENTION=1 (--flash-attn); without it the cache is f16"}
		}
		return d, nil
	}
	return KVFP16, []string{"Ollama accepts OLLAMA_KV_CACHE_TYPE f16, q8_0 or q4_0; " + string(d) + " falls back to f16"}
}
