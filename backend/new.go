package backend

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// New validates cfg and returns the Client for cfg.Kind, the adapter its
// Descriptor names: the OpenAI-compatible adapter for vllm, llamacpp,
// sglang, tgi and openai, the native adapter for ollama. An empty cfg.API means Chat. Errors name the Config
// field at fault.
func New(cfg Config) (Client, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	d, _ := describe(cfg.Kind)
	return d.client(newBase(cfg)), nil
}

// validate checks cfg and fills the API default.
func validate(cfg *Config) error {
	if _, err := ParseKind(string(cfg.Kind)); err != nil {
		return fmt.Errorf("backend: Config.Kind: %w", err)
	}
	if err := validateURL(cfg.BaseURL); err != nil {
		return err
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return fmt.Errorf("backend: Config.Model is empty: the server needs a model name")
	}
	if cfg.Timeout < 0 {
		return fmt.Errorf("backend: Config.Timeout %v is negative", cfg.Timeout)
	}
	if cfg.API == "" {
		cfg.API = Chat
	}
	if cfg.Connection == "" {
		cfg.Connection = KeepAlive
	}
	if _, err := ParseConnection(string(cfg.Connection)); err != nil {
		return fmt.Errorf("backend: Config.Connection: %w", err)
	}
	return validateAPI(cfg.Kind, cfg.API)
}

// validateURL accepts an absolute http(s) URL with a host.
func validateURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("backend: Config.BaseURL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("backend: Config.BaseURL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("backend: Config.BaseURL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("backend: Config.BaseURL %q: no host", raw)
	}
	return nil
}

// validateAPI checks that kind speaks api (Descriptor.APIs).
func validateAPI(kind Kind, api API) error {
	apis := kind.Describe().APIs
	if slices.Contains(apis, api) {
		return nil
	}
	return fmt.Errorf("backend: Config.API %q: backend %s takes %q or %q", api, kind, apis[0], apis[1])
}

// rootURL is BaseURL without a trailing slash or "/v1", so that both
// "http://host:8000" and "http://host:8000/v1" work.
func rootURL(raw string) string {
	s := strings.TrimRight(raw, "/")
	s = strings.TrimSuffix(s, "/v1")
	return strings.TrimRight(s, "/")
}
