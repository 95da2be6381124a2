package backend

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// tokenizeServer answers POST /tokenize the way the servers document it:
//   - vLLM (docs "Tokenizer API", vllm/entrypoints/openai/protocol.py
//     TokenizeCompletionRequest/TokenizeResponse): request {"model","prompt"},
//     answer {"count","max_model_len","tokens"};
//   - llama.cpp (tools/server/README.md "POST /tokenize"): request
//     {"content"}, answer {"tokens":[...]}.
//
// Here one token per whitespace-separated word, plus a BOS for vLLM.
func tokenizeServer(t *testing.T, kind Kind) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tokenize" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var in map[string]string
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		switch kind {
		case VLLM:
			if in["model"] != "m" {
				http.Error(w, `{"object":"error","message":"The model does not exist."}`, 404)
				return
			}
			words := strings.Fields(in["prompt"])
			toks := make([]int, len(words)+1)
			json.NewEncoder(w).Encode(map[string]any{"count": len(toks), "max_model_len": 4096, "tokens": toks})
		case LlamaCpp:
			words := strings.Fields(in["content"])
			json.NewEncoder(w).Encode(map[string]any{"tokens": make([]int, len(words))})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		kind  Kind
		model string
		want  int
		err   string
	}{
		{VLLM, "m", 4, ""},
		{VLLM, "other", 0, "does not exist"},
		{LlamaCpp, "m", 3, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+"/"+tt.model, func(t *testing.T) {
			srv := tokenizeServer(t, tt.kind)
			c, _ := New(Config{Kind: tt.kind, BaseURL: srv.URL + "/v1", Model: tt.model, APIKey: testKey})
			n, err := c.Tokenize(t.Context(), "one two three")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), testKey) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("Tokenize = %d, %v; want %d", n, err, tt.want)
			}
		})
	}
}

func TestTokenizeUnsupported(t *testing.T) {
	for _, k := range []Kind{SGLang, TGI, OpenAI, Ollama} {
		c, _ := New(Config{Kind: k, BaseURL: "http://127.0.0.1:1", Model: "m"})
		if _, err := c.Tokenize(t.Context(), "x"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", k, err)
		}
	}
}

// TestTokenizeTimeout: a hung /tokenize fails within Config.Timeout
// instead of stalling the preparation of a level.
func TestTokenizeTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-stop
	}))
	defer srv.Close()
	defer close(stop)
	c, _ := New(Config{Kind: VLLM, BaseURL: srv.URL, Model: "m", Timeout: 200 * time.Millisecond})
	start := time.Now()
	if _, err := c.Tokenize(t.Context(), "x"); err == nil {
		t.Fatal("no error from a hung tokenizer")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Tokenize returned after %v, want about the 200ms timeout", el)
	}
}
