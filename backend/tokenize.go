package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxSpecialTokens is how many tokens a tokenizer may add to a text beyond
// one per byte (BOS, EOS, a dummy prefix): a token covers at least one byte
// of text otherwise.
const maxSpecialTokens = 64

// maxTokenBytes bounds the bytes one token takes in a /tokenize answer (an
// id and a comma; llama.cpp's pieces, which servebench does not ask for,
// would be longer).
const maxTokenBytes = 64

// maxTokenizeAnswer bounds a /tokenize answer for a text of n bytes: room
// for the answer's other fields and for maxTokensFor(n) tokens. An answer
// beyond it is not a token list for that text, and reading it whole would
// let a server make servebench hold any amount of memory.
func maxTokenizeAnswer(n int) int64 {
	return 64<<10 + int64(maxTokensFor(n))*maxTokenBytes
}

// maxTokensFor is the largest token count a text of n bytes can have.
func maxTokensFor(n int) int { return n + maxSpecialTokens }

// Tokenize implements Client, at the family's Descriptor.Tokenizer. vLLM: POST /tokenize {"model","prompt"} →
// {"count": n, ...}; llama.cpp: POST /tokenize {"content"} → {"tokens":
// [...]}, counted. Other OpenAI-compatible servers: ErrUnsupported.
// vLLM's count includes the special tokens it adds (BOS), as a completion
// prompt would.
//
// The answer is read within Config.Timeout and maxTokenizeAnswer bytes and
// counted in place, without decoding the tokens: memory and time stay
// bounded whatever the server sends. A count above maxTokensFor(len(text))
// is an error: it cannot be true of the text.
func (c *openAIClient) Tokenize(ctx context.Context, text string) (int, error) {
	tk := c.cfg.Kind.Describe().Tokenizer
	if tk == nil {
		return 0, ErrUnsupported
	}
	in, field := tk.Body(c.cfg.Model, text), tk.Field
	limit := maxTokensFor(len(text))
	var n int
	err := c.postJSON(ctx, tk.Path, in, maxTokenizeAnswer(len(text)), func(body []byte) error {
		var err error
		n, err = countTokens(body, field, limit, c.cfg.secrets())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tokenize: %w", err)
	}
	return n, nil
}

// countTokens reads the token count of a /tokenize answer: the integer
// member field ("count", vLLM) or the length of the array member field
// ("tokens", llama.cpp), counted without decoding its elements. A count
// above limit stops the reading with an error. Errors quote the answer
// with secrets (the API key, the extra headers' values) redacted.
func countTokens(body []byte, field string, limit int, secrets []string) (int, error) {
	var s jsonScan
	s.reset(body)
	n, found := -1, false
	if err := openObject(&s); err != nil {
		return 0, err
	}
	err := s.fields(func(key []byte) error {
		if string(key) != field || found {
			return s.skip()
		}
		found = true
		if field != "tokens" {
			v, raw, err := s.count()
			switch {
			case err != nil:
				return err
			case v == countInvalid:
				return fmt.Errorf("%s %s is not a token count", field, sanitize(raw))
			case v >= 0:
				n = int(v)
			}
			return nil
		}
		if null, err := s.open('['); err != nil || null {
			return err
		}
		for i := 0; ; i++ {
			more, err := s.element(i)
			if err != nil || !more {
				n = i
				return err
			}
			if i >= limit {
				return fmt.Errorf("more than %d tokens for a text that can have at most %d", limit, limit)
			}
			if err := s.skip(); err != nil {
				return err
			}
		}
	})
	if err == nil {
		err = s.end()
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("bad answer: %v: %s", err, excerpt(body, secrets))
	case n < 0:
		return 0, fmt.Errorf("the answer has no %q", field)
	case n > limit:
		return 0, fmt.Errorf("%s %d for a text that can have at most %d tokens", field, n, limit)
	}
	return n, nil
}

// postJSON posts in as JSON to path and hands a 2xx answer of at most
// maxBody bytes to read, all within Config.Timeout like a generation
// request, so a hung or endless tokenizer cannot stall the preparation of
// a level. Redirects are not followed. Errors carry a short body excerpt,
// never the API key.
func (b *base) postJSON(ctx context.Context, path string, in any, maxBody int64, read func([]byte) error) error {
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
	for _, h := range b.cfg.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s", path, RedactAll(err.Error(), b.cfg.secrets()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", path, statusFailure(resp, b.secrets).msg)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%s: reading answer: %s", path, RedactAll(err.Error(), b.cfg.secrets()))
	}
	if int64(len(data)) > maxBody {
		return fmt.Errorf("%s: answer longer than %d bytes: not a token list for this text", path, maxBody)
	}
	if err := read(data); err != nil {
		return fmt.Errorf("%s: %s", path, RedactAll(err.Error(), b.cfg.secrets()))
	}
	return nil
}
