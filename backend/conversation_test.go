package backend

import (
	"reflect"
	"testing"
)

// conversation is a second turn with a shared system prompt.
var conversation = &Request{Prompt: "and then?", MaxTokens: 8, History: []Message{
	{Role: System, Content: "You are terse."},
	{Role: User, Content: "hello"},
	{Role: Assistant, Content: "hi"},
}}

func TestConversationBodies(t *testing.T) {
	chat := []any{
		map[string]any{"role": "system", "content": "You are terse."},
		map[string]any{"role": "user", "content": "hello"},
		map[string]any{"role": "assistant", "content": "hi"},
		map[string]any{"role": "user", "content": "and then?"},
	}
	flat := "You are terse.\n\nhello\n\nhi\n\nand then?"
	tests := []struct {
		name  string
		cfg   Config
		field string
		want  any
	}{
		{"openai chat", Config{Kind: VLLM}, "messages", chat},
		{"openai completions", Config{Kind: VLLM, API: Completions}, "prompt", flat},
		{"ollama chat", Config{Kind: Ollama}, "messages", chat},
		{"ollama generate", Config{Kind: Ollama, API: Generate}, "prompt", flat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.BaseURL, tt.cfg.Model = "http://h", "m"
			m := bodyOf(t, tt.cfg, conversation)
			if got := m[tt.field]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v\nwant %#v", tt.field, got, tt.want)
			}
		})
	}
}

// TestLlamaCppPromptCache checks that llama.cpp's prompt cache stays off
// for unique prompts and is turned on for workloads that share prefixes.
func TestLlamaCppPromptCache(t *testing.T) {
	cfg := Config{Kind: LlamaCpp, BaseURL: "http://h", Model: "m"}
	if v := bodyOf(t, cfg, &Request{Prompt: "p", MaxTokens: 4})["cache_prompt"]; v != false {
		t.Errorf("unique prompts: cache_prompt = %v, want false", v)
	}
	if v := bodyOf(t, cfg, &Request{Prompt: "p", MaxTokens: 4, ReusePrefix: true})["cache_prompt"]; v != true {
		t.Errorf("shared prefixes: cache_prompt = %v, want true", v)
	}
}
