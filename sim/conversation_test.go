package sim

import (
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// TestConversationCache: a conversation's next turn, whose prompt begins
// with the previous turn's prompt and answer, finds them cached (vLLM and
// SGLang with prefix caching, llama.cpp's and Ollama's slots) and reaches
// its first token sooner than a fresh prompt of the same length; a server
// without prefix caching recomputes it all.
func TestConversationCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		family backend.Kind
		prefix bool
		hit    bool
	}{
		{"vllm", backend.VLLM, true, true},
		{"sglang", backend.SGLang, true, true},
		{"vllm without prefix caching", backend.VLLM, false, false},
		{"llamacpp", backend.LlamaCpp, false, true},
		{"ollama", backend.Ollama, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(tc.family)
			c.Server.PrefixCaching = tc.prefix
			if tc.family == backend.SGLang {
				c.Server.BlockSize, c.Server.KVBlocks = 1, 16000 // SGLang's token-granular pool
			}
			ttft := func(conv int) time.Duration {
				e := mustNew(t, c)
				var tr trace
				submit(t, e, Request{PromptTokens: 1200, OutputTokens: 100, Conversation: 7}, 0, &tr)
				e.Drain()
				start := e.Now()
				// turn 2: the 1,300 tokens of turn 1 and a new message of 100
				h := submit(t, e, Request{PromptTokens: 1400, OutputTokens: 10, Conversation: conv, HistoryTokens: 1300}, start, &tr)
				e.Drain()
				return tr.of(h, EventToken)[0].At - start
			}
			later, fresh := ttft(7), ttft(8)
			switch {
			case tc.hit && later >= fresh/2:
				t.Errorf("later turn's TTFT %v, a fresh prompt's %v: the history should hit the cache", later, fresh)
			case !tc.hit && later != fresh:
				t.Errorf("later turn's TTFT %v, a fresh prompt's %v: without prefix caching both compute everything", later, fresh)
			}
		})
	}
}
