package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Tokenize implements Client. vLLM: POST /tokenize {"model","prompt"} →
// {"count": n, ...}; llama.cpp: POST /tokenize {"content"} → {"tokens":
// [...]}, counted. Other OpenAI-compatible servers: ErrUnsupported.
// vLLM's count includes the special tokens it adds (BOS), as a completion
// prompt would.
func (c *openAIClient) Tokenize(ctx context.Context, text string) (int, error) {
	switch c.cfg.Kind {
	case VLLM:
		var out struct {
			Count *int `json:"count"`
		}
		if err := c.postJSON(ctx, "/tokenize", map[string]string{"model": c.cfg.Model, "prompt": text}, &out); err != nil {
			return 0, err
		}
		if out.Count == nil {
			return 0, fmt.Errorf("tokenize: vLLM answer has no count")
		}
		return *out.Count, nil
	case LlamaCpp:
		var out struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		if err := c.postJSON(ctx, "/tokenize", map[string]string{"content": text}, &out); err != nil {
			return 0, err
		}
		if out.Tokens == nil {
			return 0, fmt.Errorf("tokenize: llama.cpp answer has no tokens")
		}
		return len(out.Tokens), nil
	}
	return 0, ErrUnsupported
}

// postJSON posts in as JSON to path and decodes a 2xx answer into out,
// within Config.Timeout like a generation request, so a hung tokenizer
// cannot stall the preparation of a level. Errors carry a short body
// excerpt, never the API key.
func (b *base) postJSON(ctx context.Context, path string, in, out any) error {
	if b.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.cfg.Timeout)
		defer cancel()
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.root+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if b.auth != "" {
		req.Header.Set("Authorization", b.auth)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s", path, redact(err.Error(), b.cfg.APIKey))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", path, statusFailure(resp, b.cfg.APIKey).msg)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s: reading answer: %v", path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: bad answer: %v: %s", path, err, excerpt(data, b.cfg.APIKey))
	}
	return nil
}
