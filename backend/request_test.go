package backend

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/servebench/servebench/record"
)

// bodyOf builds the request body a Client of cfg sends for rq, as a map.
func bodyOf(t *testing.T, cfg Config, rq *Request) map[string]any {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var raw []byte
	var f *failure
	switch c := c.(type) {
	case *openAIClient:
		raw, f = c.body(rq)
	case *ollamaClient:
		raw, f = c.body(rq)
	}
	if f != nil {
		t.Fatal(f)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// field returns the value at a dotted path ("stream_options.include_usage").
func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func TestOpenAIRequestBodies(t *testing.T) {
	rq := &Request{Prompt: "hello", MaxTokens: 128, Seed: 7}
	common := map[string]any{
		"model": "m", "stream": true, "max_tokens": 128.0, "temperature": 0.0, "seed": 7.0,
		"stream_options.include_usage": true,
	}
	tests := []struct {
		kind   Kind
		want   map[string]any // dotted path → value
		absent []string
	}{
		{VLLM, map[string]any{"ignore_eos": true, "min_tokens": 128.0, "stream_options.continuous_usage_stats": true},
			[]string{"n_predict", "cache_prompt"}},
		{LlamaCpp, map[string]any{"ignore_eos": true, "n_predict": 128.0, "cache_prompt": false},
			[]string{"min_tokens", "stream_options.continuous_usage_stats"}},
		{SGLang, map[string]any{"ignore_eos": true},
			[]string{"min_tokens", "n_predict", "cache_prompt", "stream_options.continuous_usage_stats"}},
		{TGI, nil, []string{"ignore_eos", "min_tokens", "n_predict", "cache_prompt"}},
		{OpenAI, nil, []string{"ignore_eos", "min_tokens", "n_predict", "cache_prompt"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			m := bodyOf(t, Config{Kind: tt.kind, BaseURL: "http://h", Model: "m"}, rq)
			check := func(path string, want any) {
				if got := field(m, splitPath(path)...); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			for p, v := range common {
				check(p, v)
			}
			for p, v := range tt.want {
				check(p, v)
			}
			for _, p := range tt.absent {
				if got := field(m, splitPath(p)...); got != nil {
					t.Errorf("%s = %#v, want absent", p, got)
				}
			}
			msgs := []any{map[string]any{"role": "user", "content": "hello"}}
			check("messages", msgs)
			if m["prompt"] != nil {
				t.Error("chat body has a prompt field")
			}
		})
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func TestOpenAICompletionsBody(t *testing.T) {
	m := bodyOf(t, Config{Kind: VLLM, BaseURL: "http://h", Model: "m", API: Completions},
		&Request{Prompt: "hello", MaxTokens: 16})
	if m["prompt"] != "hello" || m["messages"] != nil {
		t.Errorf("completions body: prompt=%v messages=%v", m["prompt"], m["messages"])
	}
}

func TestOpenAIImageParts(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 1, 2, 3}
	m := bodyOf(t, Config{Kind: VLLM, BaseURL: "http://h", Model: "m"},
		&Request{Prompt: "describe", MaxTokens: 8, Images: []Image{{MIME: "image/png", Data: png}, {MIME: "image/jpeg", Data: []byte{0xff, 0xd8}}}})
	want := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "describe"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,/9g="}},
	}}}
	if !reflect.DeepEqual(m["messages"], want) {
		t.Errorf("messages = %#v\nwant %#v", m["messages"], want)
	}
}

func TestOllamaRequestBodies(t *testing.T) {
	img := []byte{1, 2, 3, 4}
	b64 := base64.StdEncoding.EncodeToString(img)
	rq := &Request{Prompt: "hi", MaxTokens: 64, Seed: 3, Images: []Image{{MIME: "image/png", Data: img}}}
	opts := map[string]any{"num_predict": 64.0, "temperature": 0.0, "seed": 3.0}
	t.Run("chat", func(t *testing.T) {
		m := bodyOf(t, Config{Kind: Ollama, BaseURL: "http://h", Model: "tiny"}, rq)
		want := map[string]any{"model": "tiny", "stream": true, "options": opts,
			"messages": []any{map[string]any{"role": "user", "content": "hi", "images": []any{b64}}}}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("body = %#v\nwant %#v", m, want)
		}
	})
	t.Run("generate", func(t *testing.T) {
		m := bodyOf(t, Config{Kind: Ollama, BaseURL: "http://h", Model: "tiny", API: Generate}, rq)
		want := map[string]any{"model": "tiny", "stream": true, "options": opts, "prompt": "hi", "images": []any{b64}}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("body = %#v\nwant %#v", m, want)
		}
	})
}

func TestInvalidRequestsAreRecorded(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		rq   Request
	}{
		{"zero max tokens", Config{Kind: VLLM, BaseURL: "http://h", Model: "m"}, Request{Prompt: "x"}},
		{"images on completions", Config{Kind: VLLM, BaseURL: "http://h", Model: "m", API: Completions},
			Request{Prompt: "x", MaxTokens: 4, Images: []Image{{Data: []byte{1}}}}},
		{"ollama zero max tokens", Config{Kind: Ollama, BaseURL: "http://h", Model: "m"}, Request{Prompt: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var res record.Result
			c.Do(t.Context(), &tt.rq, &res)
			if res.Reason != record.ReasonInvalidRequest || res.Error == "" {
				t.Errorf("Reason=%q Error=%q, want invalid_request", res.Reason, res.Error)
			}
		})
	}
}
