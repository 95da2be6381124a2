package backend

import (
	"context"
	"fmt"
	"net/http"
)

// OllamaModelInfo returns the "model_info" object of Ollama's POST
// /api/show for cfg.Model: the model's GGUF metadata as JSON
// ("general.architecture", "llama.block_count", ...), which the planner
// turns into a model spec for `servebench calibrate` against a live
// Ollama. Errors never carry cfg.APIKey.
func OllamaModelInfo(ctx context.Context, cfg Config) (map[string]any, error) {
	p := newProber(ctx, cfg)
	var s ollamaShowResp
	body := map[string]string{"model": cfg.Model, "name": cfg.Model}
	if err := p.call(http.MethodPost, "/api/show", body, &s); err != nil {
		return nil, fmt.Errorf("POST /api/show: %v", err)
	}
	if len(s.ModelInfo) == 0 {
		return nil, fmt.Errorf("POST /api/show: no model_info for %q", cfg.Model)
	}
	return s.ModelInfo, nil
}
