package backend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
)

// The user's part of the request: sampling parameters, ignore-EOS, an
// extra JSON object merged into every body (run --extra-body) and extra
// HTTP headers (run --header). servebench's own fields (the model, the
// messages, streaming, the output length) stay servebench's: an extra
// body that sets one is refused, naming the flag that sets it.

// IgnoreEOS says whether requests ask the server to ignore EOS.
type IgnoreEOS string

// Ignore-EOS modes.
const (
	// IgnoreEOSAuto sends each family's own way to ignore EOS where it has
	// one (vLLM, llama.cpp, SGLang), so that every request produces
	// exactly MaxTokens tokens.
	IgnoreEOSAuto IgnoreEOS = "auto"
	// IgnoreEOSOn sends ignore_eos: true to every OpenAI-compatible
	// family, TGI and generic endpoints included.
	IgnoreEOSOn IgnoreEOS = "on"
	// IgnoreEOSOff never asks: the model stops where it would, as a real
	// user's request does.
	IgnoreEOSOff IgnoreEOS = "off"
)

// ParseIgnoreEOS returns the IgnoreEOS named s.
func ParseIgnoreEOS(s string) (IgnoreEOS, error) {
	for _, m := range []IgnoreEOS{IgnoreEOSAuto, IgnoreEOSOn, IgnoreEOSOff} {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%q: want auto, on or off", s)
}

// Sampling are the sampling parameters every request carries; nil fields
// keep servebench's defaults (temperature 0, the server's own top-p and
// top-k, the workload's seed, no stop sequence).
type Sampling struct {
	Temperature *float64
	TopP        *float64
	TopK        *int
	Seed        *int64
	Stop        []string
	IgnoreEOS   IgnoreEOS
}

// Header is one extra HTTP header sent with every request; its value is
// treated as a secret (redacted from every output, as the API key).
type Header struct {
	Name, Value string
}

// ParseHeader parses "Name: value".
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00") {
		return Header{}, fmt.Errorf("want 'Name: value' with a valid header name")
	}
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", "Accept", "Content-Length", "Host", "Transfer-Encoding", "Connection":
		return Header{}, fmt.Errorf("%s is set by servebench", http.CanonicalHeaderKey(name))
	case "Authorization":
		return Header{}, fmt.Errorf("use --api-key for Authorization")
	}
	return Header{Name: name, Value: value}, nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// ExtraBody is a JSON object merged into every request body.
type ExtraBody map[string]json.RawMessage

// ParseExtraBody reads s, a JSON object or "@FILE" naming a file that
// holds one.
func ParseExtraBody(s string) (ExtraBody, error) {
	data := []byte(s)
	if path, ok := strings.CutPrefix(s, "@"); ok {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	var eb ExtraBody
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&eb); err != nil || eb == nil || dec.More() {
		return nil, fmt.Errorf("want one JSON object, e.g. '{\"chat_template_kwargs\": {\"enable_thinking\": false}}'")
	}
	return eb, nil
}

// ownFields are the body fields servebench writes itself, with the flag
// that sets them: an extra body that sets one conflicts. Ollama's
// "options" object is checked key by key (ownOptions).
var ownFields = map[string]string{
	"model": "--model", "messages": "the workload (--dataset, --scenario)", "prompt": "the workload (--dataset, --scenario)",
	"stream": "servebench (it always streams)", "stream_options": "servebench (it always streams)",
	"max_tokens": "--max-tokens", "max_completion_tokens": "--max-tokens", "min_tokens": "--max-tokens", "n_predict": "--max-tokens",
	"temperature": "--temperature", "top_p": "--top-p", "top_k": "--top-k", "seed": "--sampling-seed", "stop": "--stop",
	"ignore_eos": "--ignore-eos", "cache_prompt": "servebench (the workload decides)", "images": "the workload (--dataset)",
}

// ownOptions are the keys of Ollama's "options" servebench writes.
var ownOptions = map[string]string{"num_predict": "--max-tokens", "temperature": "--temperature", "top_p": "--top-p",
	"top_k": "--top-k", "seed": "--sampling-seed", "stop": "--stop"}

// Conflicts is an error naming the first field of eb that servebench
// sets itself and the flag that sets it; nil when there is none.
func (eb ExtraBody) Conflicts() error {
	keys := make([]string, 0, len(eb))
	for k := range eb {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if flag, ok := ownFields[k]; ok {
			return fmt.Errorf("sets %q, which servebench sets from %s", k, flag)
		}
		if k == "options" {
			var opts map[string]json.RawMessage
			if err := json.Unmarshal(eb[k], &opts); err != nil {
				return fmt.Errorf(`"options" must be an object`)
			}
			for o := range opts {
				if flag, ok := ownOptions[o]; ok {
					return fmt.Errorf("sets \"options.%s\", which servebench sets from %s", o, flag)
				}
			}
		}
	}
	return nil
}

// merge returns body (a JSON object) with eb's fields added; an object
// both hold ("options") gets eb's keys added to its own.
func (eb ExtraBody) merge(body []byte) ([]byte, error) {
	if len(eb) == 0 {
		return body, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	for k, v := range eb {
		if own, ok := m[k]; ok && own[0] == '{' && len(v) > 0 && v[0] == '{' {
			var a, b map[string]json.RawMessage
			if json.Unmarshal(own, &a) == nil && json.Unmarshal(v, &b) == nil {
				for bk, bv := range b {
					a[bk] = bv
				}
				if v2, err := json.Marshal(a); err == nil {
					v = v2
				}
			}
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// secrets are the values redacted from everything a client writes: the
// API key and every header's value.
func (cfg *Config) secrets() []string {
	out := []string{cfg.APIKey}
	for _, h := range cfg.Headers {
		out = append(out, h.Value)
	}
	return out
}

// Secrets are the values RedactAll should take out of any text about
// requests of cfg: the API key and the extra headers' values.
func (cfg *Config) Secrets() []string { return cfg.secrets() }

// RedactAll is Redact for several secrets: each, in every encoded form
// Redact finds, is replaced by "[redacted]".
func RedactAll(text string, secrets []string) string {
	for _, s := range secrets {
		text = redact(text, s)
	}
	return text
}

// HeaderNames lists the extra headers as a run's description keeps them:
// names only, values redacted.
func HeaderNames(hs []Header) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name+": "+redacted)
	}
	return out
}
