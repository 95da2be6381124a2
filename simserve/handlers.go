package simserve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// Generation endpoints.

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, true, false, s.openAIFormat(false))
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, false, false, s.openAIFormat(true))
}

func (s *Server) handleOllamaChat(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, true, true, ollamaFormat{})
}

func (s *Server) handleOllamaGenerate(w http.ResponseWriter, r *http.Request) {
	s.generate(w, r, false, true, ollamaFormat{generate: true})
}

func (s *Server) handleTGIGenerateStream(w http.ResponseWriter, r *http.Request) {
	req, err := parseRequest(r, false, false)
	if err != nil {
		s.apiError(w, http.StatusUnprocessableEntity, "validation", err.Error())
		return
	}
	req.stream = true
	s.serveGen(w, r, req, tgiGenerateFormat{})
}

// generate parses a chat (chat) or prompt request — Ollama's native API
// when native — and serves it in f.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat, native bool, f format) {
	req, err := parseRequest(r, chat, native)
	if err != nil {
		s.apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	s.serveGen(w, r, req, f)
}

// openAIFormat is the personality's OpenAI-compatible stream.
func (s *Server) openAIFormat(completion bool) format {
	return personalities[s.as].format(completion)
}

// Identity endpoints.

// handleModels is GET /v1/models in the personality's shape: vLLM's
// (backend/testdata/vllm-v1-models.json), Ollama's
// (ollama-0.6.5-v1-models-testbed.json), SGLang's and llama.cpp's
// ModelCards.
func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	created := s.born.Unix()
	ctx := s.contextLength()
	var card any
	switch s.as {
	case backend.Ollama:
		card = map[string]any{"id": ollamaTag(s.name), "object": "model", "created": created, "owned_by": "library"}
	case backend.SGLang:
		card = struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			Created     int64  `json:"created"`
			OwnedBy     string `json:"owned_by"`
			Root        string `json:"root"`
			MaxModelLen int    `json:"max_model_len"`
		}{s.name, "model", created, sglangOwnedBy, s.opts.Spec.Model, ctx}
	case backend.LlamaCpp:
		card = map[string]any{"id": s.name, "object": "model", "created": created, "owned_by": llamaCppOwnedBy,
			"meta": map[string]any{"vocab_type": 2, "n_vocab": s.model.Vocab, "n_ctx_train": s.model.MaxContext,
				"n_embd": s.model.Hidden, "n_params": s.paramCount(), "size": int64(s.weightBytes())}}
	default:
		owned := "vllm"
		if s.as == backend.OpenAI {
			owned = openAIOwnedBy
		}
		card = vllmModelCard{ID: s.name, Object: "model", Created: created, OwnedBy: owned, Root: s.opts.Spec.Model,
			MaxModelLen: ctx, Permission: []vllmPermission{{ID: "modelperm-" + fmt.Sprintf("%016x", s.seed^0x3e77), Object: "model_permission",
				Created: created, AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*"}}}
	}
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []any{card}})
}

// modelList is the /v1/models envelope.
type modelList struct {
	Object string `json:"object"`
	Data   []any  `json:"data"`
}

// vllmModelCard is vLLM's ModelCard (protocol.py), as in
// backend/testdata/vllm-v1-models.json.
type vllmModelCard struct {
	ID          string           `json:"id"`
	Object      string           `json:"object"`
	Created     int64            `json:"created"`
	OwnedBy     string           `json:"owned_by"`
	Root        string           `json:"root"`
	Parent      *string          `json:"parent"`
	MaxModelLen int              `json:"max_model_len"`
	Permission  []vllmPermission `json:"permission"`
}

type vllmPermission struct {
	ID                 string  `json:"id"`
	Object             string  `json:"object"`
	Created            int64   `json:"created"`
	AllowCreateEngine  bool    `json:"allow_create_engine"`
	AllowSampling      bool    `json:"allow_sampling"`
	AllowLogprobs      bool    `json:"allow_logprobs"`
	AllowSearchIndices bool    `json:"allow_search_indices"`
	AllowView          bool    `json:"allow_view"`
	AllowFineTuning    bool    `json:"allow_fine_tuning"`
	Organization       string  `json:"organization"`
	Group              *string `json:"group"`
	IsBlocking         bool    `json:"is_blocking"`
}

// contextLength is the longest sequence a request may have: vLLM's
// max_model_len, a slot's cells for llama.cpp and Ollama.
func (s *Server) contextLength() int {
	srv := s.cfg.Server
	if !sim.Batched(s.cfg.Backend) {
		return srv.SlotContext
	}
	if srv.MaxModelLen > 0 {
		return srv.MaxModelLen
	}
	return (srv.KVBlocks - 1) * srv.BlockSize
}

// slots is how many requests run at once: llama.cpp's and Ollama's slots,
// a batching scheduler's max_num_seqs (behind a slot server's API with
// --scheduler).
func (s *Server) slots() int {
	if !sim.Batched(s.cfg.Backend) {
		return s.cfg.Server.Slots
	}
	return s.cfg.Server.MaxNumSeqs
}

// kvTokens is the KV cache's capacity in tokens.
func (s *Server) kvTokens() int {
	srv := s.cfg.Server
	if !sim.Batched(s.cfg.Backend) {
		return srv.Slots * srv.SlotContext
	}
	return srv.KVBlocks * srv.BlockSize
}

// paramCount is the model's parameter count.
func (s *Server) paramCount() int64 {
	if s.model.ParamsB > 0 {
		return int64(s.model.ParamsB * 1e9)
	}
	return s.model.Params().Total()
}

// weightBytes is what the weights take on the GPU, as the simulator
// reads them per step (every matrix and the lm_head) plus the embedding
// table at two bytes a weight.
func (s *Server) weightBytes() float64 {
	return s.cfg.Model.WeightBytesPerStep + 2*float64(s.model.Vocab*s.model.Hidden)
}

func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": s.version()})
}

// writePieces answers llama.cpp's /tokenize with_pieces,
// {"tokens":[{"id":…,"piece":"…"},…]}, written piece by piece as the
// content is cut: the memory it takes does not grow with the content (a
// map or a slice of pieces held a few hundred bytes per content byte).
func writePieces(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"tokens":[`)
	first := true
	var num [20]byte
	sim.EachPiece(content, func(p string) {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.WriteString(`{"id":`)
		bw.Write(strconv.AppendInt(num[:0], int64(sim.PieceID(p)), 10))
		bw.WriteString(`,"piece":`)
		q, _ := json.Marshal(p) // a string always marshals
		bw.Write(q)
		bw.WriteByte('}')
	})
	bw.WriteString("]}")
	bw.Flush()
}

// handleTokenize is POST /tokenize in vLLM's shape (TokenizeResponse:
// count, max_model_len, tokens, token_strs; a chat request's messages get
// the template) or llama.cpp's ({"tokens": [...]}, with with_pieces
// [{"id","piece"}]).
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Prompt     string       `json:"prompt"`
		Messages   []apiMessage `json:"messages"`
		Content    string       `json:"content"`
		WithPieces bool         `json:"with_pieces"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&in); err != nil {
		s.apiError(w, http.StatusBadRequest, "BadRequestError", "tokenize: "+err.Error())
		return
	}
	if s.as == backend.LlamaCpp {
		if in.WithPieces {
			writePieces(w, in.Content)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"tokens": nonNil(sim.TokenIDs(in.Content))})
		return
	}
	ids := sim.TokenIDs(in.Prompt)
	if len(in.Messages) > 0 {
		ids = nil
		for _, m := range in.Messages {
			t, _, err := messageContent(m.Content)
			if err != nil {
				s.apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
				return
			}
			ids = append(ids, make([]int, sim.ChatTemplateTokens)...)
			ids = append(ids, sim.TokenIDs(t)...)
		}
		ids = append(ids, make([]int, sim.ReplyTemplateTokens)...)
	}
	writeJSON(w, http.StatusOK, struct {
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
		Tokens      []int `json:"tokens"`
		TokenStrs   []int `json:"token_strs"`
	}{len(ids), s.contextLength(), nonNil(ids), nil})
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// llama.cpp.

func (s *Server) handleLlamaHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// llamaParams is a slot's sampling parameters (server.cpp
// slot_params::to_json), as in backend/testdata/llamacpp-b9014-props.json
// and llamacpp-b9014-slots.json.
type llamaParams struct {
	Seed               uint32   `json:"seed"`
	Temperature        float64  `json:"temperature"`
	DynatempRange      float64  `json:"dynatemp_range"`
	DynatempExponent   float64  `json:"dynatemp_exponent"`
	TopK               int      `json:"top_k"`
	TopP               float64  `json:"top_p"`
	MinP               float64  `json:"min_p"`
	TopNSigma          float64  `json:"top_n_sigma"`
	XTCProbability     float64  `json:"xtc_probability"`
	XTCThreshold       float64  `json:"xtc_threshold"`
	TypicalP           float64  `json:"typical_p"`
	RepeatLastN        int      `json:"repeat_last_n"`
	RepeatPenalty      float64  `json:"repeat_penalty"`
	PresencePenalty    float64  `json:"presence_penalty"`
	FrequencyPenalty   float64  `json:"frequency_penalty"`
	DryMultiplier      float64  `json:"dry_multiplier"`
	DryBase            float64  `json:"dry_base"`
	DryAllowedLength   int      `json:"dry_allowed_length"`
	DryPenaltyLastN    int      `json:"dry_penalty_last_n"`
	Mirostat           int      `json:"mirostat"`
	MirostatTau        float64  `json:"mirostat_tau"`
	MirostatEta        float64  `json:"mirostat_eta"`
	MaxTokens          int      `json:"max_tokens"`
	NPredict           int      `json:"n_predict"`
	NKeep              int      `json:"n_keep"`
	NDiscard           int      `json:"n_discard"`
	IgnoreEOS          bool     `json:"ignore_eos"`
	Stream             bool     `json:"stream"`
	NProbs             int      `json:"n_probs"`
	MinKeep            int      `json:"min_keep"`
	ChatFormat         string   `json:"chat_format"`
	ReasoningFormat    string   `json:"reasoning_format"`
	ReasoningInContent bool     `json:"reasoning_in_content"`
	GenerationPrompt   string   `json:"generation_prompt"`
	Samplers           []string `json:"samplers"`
	SpeculativeType    string   `json:"speculative.type"`
	TimingsPerToken    bool     `json:"timings_per_token"`
	PostSamplingProbs  bool     `json:"post_sampling_probs"`
	BackendSampling    bool     `json:"backend_sampling"`
	LoRA               []string `json:"lora"`
}

// defaultLlamaParams are llama-server's defaults (common/common.h
// common_params_sampling).
func defaultLlamaParams() llamaParams {
	return llamaParams{Seed: math.MaxUint32, Temperature: 0.8, DynatempExponent: 1, TopK: 40, TopP: 0.95, MinP: 0.05,
		TopNSigma: -1, XTCThreshold: 0.1, TypicalP: 1, RepeatLastN: 64, RepeatPenalty: 1, DryBase: 1.75,
		DryAllowedLength: 2, DryPenaltyLastN: -1, MirostatTau: 5, MirostatEta: 0.1, MaxTokens: -1, NPredict: -1,
		Stream: true, ChatFormat: "Content-only", ReasoningFormat: "none",
		Samplers:        []string{"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"},
		SpeculativeType: "none", LoRA: []string{}}
}

// handleProps is GET /props (server.cpp handle_props), as in
// backend/testdata/llamacpp-b9014-props.json.
func (s *Server) handleProps(w http.ResponseWriter, _ *http.Request) {
	type settings struct {
		Params llamaParams `json:"params"`
		NCtx   int         `json:"n_ctx"`
	}
	vision := s.cfg.Model.ImageTokens > 0
	props := struct {
		Defaults        settings        `json:"default_generation_settings"`
		TotalSlots      int             `json:"total_slots"`
		ModelAlias      string          `json:"model_alias"`
		ModelPath       string          `json:"model_path"`
		Modalities      map[string]bool `json:"modalities"`
		MediaMarker     string          `json:"media_marker"`
		EndpointSlots   bool            `json:"endpoint_slots"`
		EndpointProps   bool            `json:"endpoint_props"`
		EndpointMetrics bool            `json:"endpoint_metrics"`
		WebUI           bool            `json:"webui"`
		WebUISettings   map[string]any  `json:"webui_settings"`
		ChatTemplate    string          `json:"chat_template"`
		ChatTemplateCap map[string]bool `json:"chat_template_caps"`
		BOSToken        string          `json:"bos_token"`
		EOSToken        string          `json:"eos_token"`
		BuildInfo       string          `json:"build_info"`
		IsSleeping      bool            `json:"is_sleeping"`
	}{
		Defaults:   settings{defaultLlamaParams(), s.contextLength()},
		TotalSlots: s.slots(), ModelAlias: s.name, ModelPath: s.ggufPath(),
		Modalities:  map[string]bool{"vision": vision, "audio": false},
		MediaMarker: "<__media__>", EndpointSlots: true, EndpointMetrics: !s.opts.NoMetrics, WebUI: false,
		WebUISettings: map[string]any{}, ChatTemplate: chatMLTemplate,
		ChatTemplateCap: map[string]bool{"supports_object_arguments": false, "supports_parallel_tool_calls": false,
			"supports_preserve_reasoning": false, "supports_string_content": true, "supports_system_role": true,
			"supports_tool_calls": false, "supports_tools": false, "supports_typed_content": false},
		BOSToken: "<|endoftext|>", EOSToken: "<|im_end|>", BuildInfo: llamaBuildInfo,
	}
	writeJSON(w, http.StatusOK, props)
}

// chatMLTemplate is the chat template the simulated tokenizer counts
// (sim.ChatTemplateTokens per message, sim.ReplyTemplateTokens for the reply).
const chatMLTemplate = "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"

// ggufPath is the model file a llama.cpp or Ollama server would load.
func (s *Server) ggufPath() string {
	return "/models/" + strings.ReplaceAll(s.name, "/", "_") + "-" + strings.ToUpper(s.quant) + ".gguf"
}

// handleSlots is GET /slots (server.cpp handle_slots; backend/testdata/
// llamacpp-b9014-slots.json): one object per slot. The engine does not
// tell which slot holds which request, so the first Running slots are
// shown busy.
func (s *Server) handleSlots(w http.ResponseWriter, _ *http.Request) {
	st, ok := s.drv.stats()
	if !ok {
		s.apiError(w, http.StatusServiceUnavailable, "unavailable_error", errStopped.Error())
		return
	}
	type nextToken struct {
		HasNext    bool `json:"has_next_token"`
		HasNewLine bool `json:"has_new_line"`
		NRemain    int  `json:"n_remain"`
		NDecoded   int  `json:"n_decoded"`
	}
	type slot struct {
		ID           int         `json:"id"`
		NCtx         int         `json:"n_ctx"`
		Speculative  bool        `json:"speculative"`
		IsProcessing bool        `json:"is_processing"`
		IDTask       int         `json:"id_task"`
		Params       llamaParams `json:"params"`
		NextToken    []nextToken `json:"next_token"`
	}
	slots := make([]slot, s.slots())
	for i := range slots {
		busy := i < st.Running
		task := -1
		if busy {
			task = i
		}
		slots[i] = slot{ID: i, NCtx: s.contextLength(), IsProcessing: busy, IDTask: task, Params: defaultLlamaParams(),
			NextToken: []nextToken{{HasNext: busy, NRemain: -1}}}
	}
	writeJSON(w, http.StatusOK, slots)
}

// SGLang.

// handleSGLangServerInfo is GET /get_server_info: the server arguments
// that matter here, the scheduler's token pool and the version
// (http_server.py get_server_info merges server_args, scheduler info and
// version).
func (s *Server) handleSGLangServerInfo(w http.ResponseWriter, _ *http.Request) {
	srv := s.cfg.Server
	writeJSON(w, http.StatusOK, map[string]any{
		"model_path": s.opts.Spec.Model, "tokenizer_path": s.opts.Spec.Model, "served_model_name": s.name,
		"context_length": s.contextLength(), "max_running_requests": srv.MaxNumSeqs,
		"chunked_prefill_size": srv.MaxNumBatchedTokens, "page_size": srv.BlockSize,
		"mem_fraction_static":  memFraction(s.opts.Spec.GPUMemoryUtilization, 0.88),
		"max_total_num_tokens": s.kvTokens(), "version": sglangVersion,
	})
}

func memFraction(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

func (s *Server) handleSGLangModelInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"model_path": s.opts.Spec.Model, "tokenizer_path": s.opts.Spec.Model, "is_generation": true})
}

// TGI.

// handleTGIInfo is GET /info (router/src/lib.rs struct Info, v2.2.0), as
// in backend/testdata/tgi-2.2.0-info.json.
func (s *Server) handleTGIInfo(w http.ResponseWriter, _ *http.Request) {
	ctx := s.contextLength()
	info := struct {
		ModelID               string  `json:"model_id"`
		ModelSha              string  `json:"model_sha"`
		ModelDtype            string  `json:"model_dtype"`
		ModelDeviceType       string  `json:"model_device_type"`
		ModelPipelineTag      string  `json:"model_pipeline_tag"`
		MaxConcurrentRequests int     `json:"max_concurrent_requests"`
		MaxBestOf             int     `json:"max_best_of"`
		MaxStopSequences      int     `json:"max_stop_sequences"`
		MaxInputTokens        int     `json:"max_input_tokens"`
		MaxTotalTokens        int     `json:"max_total_tokens"`
		WaitingServedRatio    float64 `json:"waiting_served_ratio"`
		MaxBatchTotalTokens   int     `json:"max_batch_total_tokens"`
		MaxWaitingTokens      int     `json:"max_waiting_tokens"`
		MaxBatchSize          *int    `json:"max_batch_size"` // None unless --max-batch-size
		ValidationWorkers     int     `json:"validation_workers"`
		MaxClientBatchSize    int     `json:"max_client_batch_size"`
		Router                string  `json:"router"`
		Version               string  `json:"version"`
		Sha                   *string `json:"sha"`
		DockerLabel           *string `json:"docker_label"`
	}{
		ModelID: s.name, ModelSha: "servebench-sim", ModelDtype: "torch.float16", ModelDeviceType: "cuda",
		ModelPipelineTag: "text-generation", MaxConcurrentRequests: 128, MaxBestOf: 2, MaxStopSequences: 4,
		MaxInputTokens: ctx - 1, MaxTotalTokens: ctx, WaitingServedRatio: 0.3, MaxBatchTotalTokens: s.kvTokens(),
		MaxWaitingTokens: 20, ValidationWorkers: 2, MaxClientBatchSize: 4,
		Router: "text-generation-router", Version: tgiVersion,
	}
	writeJSON(w, http.StatusOK, info)
}

// Ollama.

func (s *Server) handleOllamaRoot(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("Ollama is running"))
}

// ollamaDetails is a model's details block (api/types.go ModelDetails).
type ollamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

func (s *Server) ollamaDetails() ollamaDetails {
	fam := ggufArch(s.model.Arch)
	return ollamaDetails{Format: "gguf", Family: fam, Families: []string{fam},
		ParameterSize: fmt.Sprintf("%.1fB", float64(s.paramCount())/1e9), QuantizationLevel: strings.ToUpper(s.quant)}
}

// ggufArch is the GGUF architecture name of a model spec's arch
// ("qwen2_vl" → "qwen2vl").
func ggufArch(arch string) string {
	if arch == "" {
		return "llama"
	}
	return strings.ReplaceAll(arch, "_", "")
}

// ollamaDigest is the simulated model blob's digest (a fixed function of
// its name).
func (s *Server) ollamaDigest() string {
	return fmt.Sprintf("%016x%016x%016x%016x", sim.PieceID(s.name), s.seed, len(s.name), s.paramCount())
}

// handleOllamaTags is GET /api/tags (backend/testdata/
// ollama-0.6.5-tags-testbed.json).
func (s *Server) handleOllamaTags(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{"name": ollamaTag(s.name), "model": ollamaTag(s.name), "modified_at": s.born.Format(time.RFC3339Nano),
		"size": int64(s.weightBytes()), "digest": s.ollamaDigest(), "details": s.ollamaDetails()}
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{m}})
}

// handleOllamaPS is GET /api/ps (backend/testdata/ollama-0.11.6-ps.json):
// the simulated model is always loaded, its size the weights plus the KV
// cache, all on the GPU.
func (s *Server) handleOllamaPS(w http.ResponseWriter, _ *http.Request) {
	size := int64(s.weightBytes() + s.cfg.Model.KVBytesPerToken*float64(s.kvTokens()))
	m := struct {
		Name          string        `json:"name"`
		Model         string        `json:"model"`
		Size          int64         `json:"size"`
		Digest        string        `json:"digest"`
		Details       ollamaDetails `json:"details"`
		ExpiresAt     string        `json:"expires_at"`
		SizeVRAM      int64         `json:"size_vram"`
		ContextLength int           `json:"context_length"`
	}{ollamaTag(s.name), ollamaTag(s.name), size, s.ollamaDigest(), s.ollamaDetails(),
		time.Now().Add(5 * time.Minute).Format(time.RFC3339Nano), size, s.contextLength()}
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{m}})
}

// handleOllamaShow is POST /api/show (backend/testdata/
// ollama-0.11.6-show.json): the model's GGUF metadata from its preset's
// dimensions, so modelspec.FromModelInfo reads the same model back.
func (s *Server) handleOllamaShow(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
		s.apiError(w, http.StatusBadRequest, "", err.Error())
		return
	}
	name := in.Model
	if name == "" {
		name = in.Name
	}
	if !s.modelMatches(name) {
		s.apiError(w, http.StatusNotFound, "", fmt.Sprintf("model '%s' not found", name))
		return
	}
	m := s.model
	arch := ggufArch(m.Arch)
	mi := map[string]any{
		"general.architecture": arch, "general.basename": m.Name, "general.file_type": 15,
		"general.languages": nil, "general.license": "simulated", "general.organization": "servebench-sim",
		"general.parameter_count": s.paramCount(), "general.quantization_version": 2,
		"general.size_label": fmt.Sprintf("%.0fB", float64(s.paramCount())/1e9), "general.type": "model",
		arch + ".attention.head_count": m.Heads, arch + ".attention.head_count_kv": m.KVHeads,
		arch + ".attention.key_length": m.HeadDim, arch + ".attention.value_length": m.HeadDim,
		arch + ".attention.layer_norm_rms_epsilon": 1e-06, arch + ".block_count": m.Layers,
		arch + ".context_length": m.MaxContext, arch + ".embedding_length": m.Hidden,
		arch + ".feed_forward_length": m.Intermediate, arch + ".rope.dimension_count": m.HeadDim,
		arch + ".rope.freq_base": 1000000, arch + ".vocab_size": m.Vocab,
		"tokenizer.ggml.bos_token_id": 151643, "tokenizer.ggml.eos_token_id": 151645, "tokenizer.ggml.merges": nil,
		"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.padding_token_id": 151643, "tokenizer.ggml.pre": "qwen2",
		"tokenizer.ggml.token_type": nil, "tokenizer.ggml.tokens": nil,
	}
	caps := []string{"completion"}
	if s.cfg.Model.ImageTokens > 0 {
		caps = append(caps, "vision")
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"license":    "simulated model (servebench sim serve): no weights, no license",
		"modelfile":  "# Modelfile generated by \"ollama show\"\n# simulated by servebench sim serve\n\nFROM " + s.ggufPath() + "\nTEMPLATE \"\"\"" + chatMLTemplate + "\"\"\"\n",
		"parameters": fmt.Sprintf("num_ctx                        %d", s.contextLength()),
		"template":   chatMLTemplate, "system": "",
		"details": s.ollamaDetails(), "model_info": mi, "tensors": s.ollamaTensors(),
		"capabilities": caps, "modified_at": s.born.Format(time.RFC3339Nano),
	})
}

// ollamaTensors lists the model's tensors as GGUF names them.
func (s *Server) ollamaTensors() []map[string]any {
	m := s.model
	qt := strings.ToUpper(strings.TrimSuffix(s.quant, "_m"))
	if !strings.HasPrefix(qt, "Q") {
		qt = "F16"
	}
	t := func(name, typ string, shape ...int) map[string]any {
		return map[string]any{"name": name, "type": typ, "shape": shape}
	}
	kv := m.KVHeads * m.HeadDim
	out := []map[string]any{t("token_embd.weight", qt, m.Hidden, m.Vocab)}
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		out = append(out,
			t(p+"attn_norm.weight", "F32", m.Hidden), t(p+"attn_q.weight", qt, m.Hidden, m.Heads*m.HeadDim),
			t(p+"attn_k.weight", qt, m.Hidden, kv), t(p+"attn_v.weight", qt, m.Hidden, kv),
			t(p+"attn_output.weight", qt, m.Heads*m.HeadDim, m.Hidden), t(p+"ffn_norm.weight", "F32", m.Hidden),
			t(p+"ffn_gate.weight", qt, m.Hidden, m.Intermediate), t(p+"ffn_up.weight", qt, m.Hidden, m.Intermediate),
			t(p+"ffn_down.weight", qt, m.Intermediate, m.Hidden))
	}
	return append(out, t("output_norm.weight", "F32", m.Hidden), t("output.weight", "Q6_K", m.Hidden, m.Vocab))
}
