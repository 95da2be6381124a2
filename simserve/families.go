package simserve

import (
	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// personality is the HTTP surface of one server family as a Server
// speaks it: the engine it runs by default, its routes, version, wire
// format, metrics and error shape, and its default output length.
type personality struct {
	// engine is the scheduler it runs unless the Spec names another.
	engine backend.Kind
	// version is the version it reports (marked simulated).
	version string
	// routes are its endpoints beyond the shared OpenAI-compatible ones
	// (chat and completions).
	routes func(s *Server) []route
	// format is its OpenAI-compatible stream.
	format func(completion bool) format
	// metrics writes its /metrics exposition; nil for none (404).
	metrics func(s *Server, x *expo, st sim.Stats)
	// errorBody is its error response for status, kind and msg.
	errorBody func(status int, kind, msg string) any
	// defaultOutput is the tokens a request without max_tokens gets; 0
	// leaves it to the engine's context (vLLM: up to max_model_len;
	// llama.cpp and Ollama: until the slot's context is full).
	defaultOutput int
}

// personalities are the families whose HTTP surface a Server speaks, one
// table keyed by backend.Kind (set in init: the handlers read it back).
var personalities map[backend.Kind]personality

// Kinds lists every server family whose HTTP surface a Server speaks
// (personalities), in help order (backend.Kinds').
var Kinds []backend.Kind

func init() {
	personalities = map[backend.Kind]personality{
		backend.VLLM: {engine: backend.VLLM, version: vllmVersion, format: vllmStream, metrics: (*Server).vllmMetrics, errorBody: openAIError,
			routes: func(s *Server) []route {
				return []route{s.modelsRoute(), s.metricsRoute(),
					{"GET /health", s.handleEmptyOK},
					{"GET /version", s.handleVersion},
					{"POST /tokenize", s.handleTokenize}}
			}},
		// SGLang: 128 tokens without max_tokens, its SamplingParams default.
		backend.SGLang: {engine: backend.SGLang, version: sglangVersion, format: func(c bool) format { return sglangFormat{c} },
			metrics: (*Server).sglangMetrics, errorBody: openAIError, defaultOutput: 128,
			routes: func(s *Server) []route {
				return []route{s.modelsRoute(), s.metricsRoute(),
					{"GET /health", s.handleEmptyOK},
					{"GET /get_server_info", s.handleSGLangServerInfo},
					{"GET /get_model_info", s.handleSGLangModelInfo}}
			}},
		backend.LlamaCpp: {engine: backend.LlamaCpp, version: llamaBuildInfo, format: func(c bool) format { return llamaFormat{c} },
			metrics: (*Server).llamaMetrics,
			// server_common: format_error_response
			errorBody: func(status int, kind, msg string) any {
				return map[string]any{"error": map[string]any{"code": status, "message": msg, "type": kind}}
			},
			routes: func(s *Server) []route {
				return []route{s.modelsRoute(), s.metricsRoute(),
					{"GET /health", s.handleLlamaHealth},
					{"GET /props", s.handleProps},
					{"GET /slots", s.handleSlots},
					{"POST /tokenize", s.handleTokenize}}
			}},
		// TGI runs vLLM's scheduler (a continuous batcher over paged
		// attention, the closest of the engine's four); 100 tokens without
		// max_tokens (router/src/lib.rs default_max_new_tokens).
		backend.TGI: {engine: backend.VLLM, version: tgiVersion, format: func(c bool) format { return tgiFormat{c} },
			metrics: (*Server).tgiMetrics, defaultOutput: 100,
			// router/src/server.rs ErrorResponse
			errorBody: func(_ int, kind, msg string) any { return map[string]any{"error": msg, "error_type": kind} },
			routes: func(s *Server) []route {
				return []route{s.metricsRoute(),
					{"GET /health", s.handleEmptyOK},
					{"GET /info", s.handleTGIInfo},
					{"POST /generate_stream", s.handleTGIGenerateStream}}
			}},
		backend.Ollama: {engine: backend.Ollama, version: ollamaVersion, format: func(c bool) format { return ollamaOpenAIFormat{c} },
			errorBody: func(_ int, _, msg string) any { return map[string]any{"error": msg} },
			routes: func(s *Server) []route {
				return []route{s.modelsRoute(),
					{"GET /{$}", s.handleOllamaRoot},
					{"GET /api/version", s.handleVersion},
					{"GET /api/tags", s.handleOllamaTags},
					{"GET /api/ps", s.handleOllamaPS},
					{"POST /api/show", s.handleOllamaShow},
					{"POST /api/chat", s.handleOllamaChat},
					{"POST /api/generate", s.handleOllamaGenerate}}
			}},
		// A generic OpenAI endpoint: vLLM's scheduler and wire format, /v1
		// routes and /health only, no metrics.
		backend.OpenAI: {engine: backend.VLLM, version: vllmVersion, format: vllmStream, errorBody: openAIError,
			routes: func(s *Server) []route { return []route{s.modelsRoute(), {"GET /health", s.handleEmptyOK}} }},
	}
	for _, k := range backend.Kinds {
		if _, ok := personalities[k]; ok {
			Kinds = append(Kinds, k)
		}
	}
}

// vllmStream is vLLM's OpenAI-compatible stream.
func vllmStream(completion bool) format { return vllmFormat{completion} }

// openAIError is vLLM's and SGLang's ErrorResponse.
func openAIError(status int, kind, msg string) any {
	return map[string]any{"object": "error", "message": msg, "type": kind, "param": nil, "code": status}
}

// modelsRoute is GET /v1/models; metricsRoute GET /metrics.
func (s *Server) modelsRoute() route  { return route{"GET /v1/models", s.handleModels} }
func (s *Server) metricsRoute() route { return route{"GET /metrics", s.handleMetrics} }
