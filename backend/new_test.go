package backend

import (
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	ok := Config{Kind: VLLM, BaseURL: "http://127.0.0.1:8000", Model: "m"}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string // substring naming the field; "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"valid ollama generate", func(c *Config) { c.Kind, c.API = Ollama, Generate }, ""},
		{"valid completions", func(c *Config) { c.API = Completions }, ""},
		{"unknown kind", func(c *Config) { c.Kind = "triton" }, "Config.Kind"},
		{"empty url", func(c *Config) { c.BaseURL = "" }, "Config.BaseURL is empty"},
		{"url without scheme", func(c *Config) { c.BaseURL = "localhost:8000" }, "Config.BaseURL"},
		{"ftp url", func(c *Config) { c.BaseURL = "ftp://host/" }, "scheme must be http or https"},
		{"url without host", func(c *Config) { c.BaseURL = "http:///v1" }, "no host"},
		{"no model", func(c *Config) { c.Model = " " }, "Config.Model"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "Config.Timeout"},
		{"generate on vllm", func(c *Config) { c.API = Generate }, "Config.API"},
		{"completions on ollama", func(c *Config) { c.Kind, c.API = Ollama, Completions }, "Config.API"},
		{"unknown api", func(c *Config) { c.API = "embeddings" }, "Config.API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			c, err := New(cfg)
			if tt.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewPicksAdapter(t *testing.T) {
	for _, k := range Kinds {
		c, err := New(Config{Kind: k, BaseURL: "http://h", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		_, isOllama := c.(*ollamaClient)
		if isOllama != (k == Ollama) {
			t.Errorf("kind %s: got %T", k, c)
		}
	}
}

func TestRootURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":     "http://h:8000",
		"http://h:8000/":    "http://h:8000",
		"http://h:8000/v1":  "http://h:8000",
		"http://h:8000/v1/": "http://h:8000",
		"https://h/prefix/": "https://h/prefix",
		"https://h/p/v1":    "https://h/p",
	} {
		if got := rootURL(in); got != want {
			t.Errorf("rootURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWarnings(t *testing.T) {
	for _, tt := range []struct {
		kind Kind
		want string // "" = no warning
	}{
		{VLLM, ""}, {LlamaCpp, ""}, {SGLang, ""},
		{TGI, "no ignore_eos"}, {OpenAI, "ignore_eos is not sent"}, {Ollama, "no ignore_eos"},
	} {
		c, err := New(Config{Kind: tt.kind, BaseURL: "http://h", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(c.Warnings(), "; ")
		if (tt.want == "") != (w == "") || !strings.Contains(w, tt.want) {
			t.Errorf("%s: Warnings() = %q, want %q", tt.kind, w, tt.want)
		}
	}
}
