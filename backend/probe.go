package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/record"
)

// Identity is what a server said about itself when probed once per run.
type Identity struct {
	// Server is the report's run.server block.
	Server record.ServerInfo
	// Runtime is "<server> <version>" (e.g. "Ollama 0.6.5", "llama.cpp
	// b9014-d4b0c22f9"), nil when the server did not give its version.
	Runtime *string
	// Warnings are the probe's failures, as report data; a probe never
	// fails a run.
	Warnings []string
}

// probeTimeout bounds each probe request.
const probeTimeout = 5 * time.Second

// maxProbeBytes bounds a probe response (an Ollama /api/show with its
// license and template runs to tens of KiB).
const maxProbeBytes = 8 << 20

// Probe asks the server for its version, its model and that model's
// context length, once, before a run:
//   - vLLM: GET /version, GET /v1/models (id, max_model_len);
//   - SGLang: GET /get_server_info (version), GET /v1/models;
//   - llama.cpp: GET /props (build_info, n_ctx per slot, total_slots,
//     model_alias), GET /slots where /props lacks them;
//   - Ollama: GET /api/version, POST /api/show (model_info
//     "<arch>.context_length", details), GET /api/ps (size, size_vram and,
//     from Ollama 0.11, the loaded context_length) — see RefreshLoaded;
//   - TGI: GET /info (version, model_id, max_total_tokens,
//     max_concurrent_requests);
//   - any OpenAI-compatible server: GET /v1/models.
//
// Every failure becomes a warning; what could be read is returned. ctx
// bounds every probe request (each also has its own probeTimeout).
func Probe(ctx context.Context, cfg Config) Identity {
	p := newProber(ctx, cfg)
	if d, ok := describe(cfg.Kind); ok {
		d.probe(p, d)
	} else {
		p.models()
	}
	return p.id
}

// RefreshLoaded re-reads what is only known once the model is loaded (Ollama
// /api/ps: size, size_vram, context_length) into id, e.g. after the first
// level. Other server families have nothing to refresh.
func RefreshLoaded(ctx context.Context, cfg Config, id *Identity) {
	if cfg.Kind != Ollama {
		return
	}
	p := newProber(ctx, cfg)
	p.id = *id
	p.ollamaPS()
	*id = p.id
}

// prober holds one probe's state.
type prober struct {
	ctx    context.Context
	cfg    Config
	root   string
	client *http.Client
	// timeout bounds each request (probeTimeout unless set shorter, as
	// for the scan of the usual local ports).
	timeout time.Duration
	id      Identity
}

func newProber(ctx context.Context, cfg Config) *prober {
	c := cfg.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	return &prober{ctx: ctx, cfg: cfg, root: rootURL(cfg.BaseURL), client: noRedirects(c), timeout: probeTimeout}
}

// StatusError is a probe request answered with an HTTP status other than
// 200 OK. Path is the request's path, Code the status code.
type StatusError struct {
	Path   string
	Code   int
	Status string
}

// Error is "HTTP <status>", e.g. "HTTP 404 Not Found".
func (e *StatusError) Error() string { return "HTTP " + e.Status }

func (p *prober) warnf(format string, args ...any) {
	p.id.Warnings = append(p.id.Warnings, "probe: "+fmt.Sprintf(format, args...))
}

// call sends one request and decodes a JSON response into out.
func (p *prober) call(method, path string, body any, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.root+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	for _, h := range p.cfg.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return p.redact(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 { // an answer, never followed: Status says where it pointed
		msg := RedactAll(statusFailure(resp, p.cfg.secrets()).msg, p.cfg.secrets())
		return &StatusError{Path: path, Code: resp.StatusCode, Status: strings.TrimPrefix(msg, "HTTP ")}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBytes))
	if err != nil {
		return p.redact(err)
	}
	if resp.StatusCode != http.StatusOK {
		return &StatusError{Path: path, Code: resp.StatusCode, Status: RedactAll(resp.Status, p.cfg.secrets())}
	}
	// Every string a server sends (version, model ids, paths, details)
	// may reach the report, the records and stderr: the key and the
	// headers' values go before anything is decoded. The marker holds no JSON syntax, so a key
	// inside a JSON string leaves the body valid.
	b = []byte(RedactAll(string(b), p.cfg.secrets()))
	if err := json.Unmarshal(b, out); err != nil {
		return &bodyError{path: path, err: err}
	}
	return nil
}

// bodyError is a probe request answered 200 OK with a body that is not
// the JSON expected: something answered, but not as the server asked
// about.
type bodyError struct {
	path string
	err  error
}

func (e *bodyError) Error() string { return "not the JSON expected: " + e.err.Error() }

// redact keeps the API key and the headers' values out of an error that
// may end up in a report.
func (p *prober) redact(err error) error {
	if msg := RedactAll(err.Error(), p.cfg.secrets()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// version reads a string field of a JSON object at path.
func (p *prober) version(server, path, field string) {
	var m map[string]json.RawMessage
	if err := p.call(http.MethodGet, path, nil, &m); err != nil {
		p.warnf("GET %s: %v", path, err)
		return
	}
	var v string
	if err := json.Unmarshal(m[field], &v); err != nil || v == "" {
		p.warnf("GET %s: no %q string", path, field)
		return
	}
	setVersion(&p.id, server, v)
}

// versionAndModels reads the version where d says and the served model
// from /v1/models (vLLM, SGLang).
func versionAndModels(p *prober, d *Descriptor) {
	p.version(d.Name, d.Version.Path, d.Version.Field)
	p.models()
}

// setVersion records the server's version and the runtime "<server> <v>".
func setVersion(id *Identity, server, v string) {
	id.Server.Version = &v
	rt := server + " " + v
	id.Runtime = &rt
}

// openAIModels is the body of GET /v1/models; vLLM and SGLang add
// max_model_len.
type openAIModels struct {
	Data []struct {
		ID          string `json:"id"`
		Root        string `json:"root"`
		MaxModelLen *int   `json:"max_model_len"`
		// OwnedBy names the server family in vLLM ("vllm"), SGLang
		// ("sglang") and llama.cpp ("llamacpp"); Identify reads it.
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// models reads /v1/models: the served model that matches cfg.Model (or the
// only one) and its max_model_len.
func (p *prober) models() {
	var ms openAIModels
	if err := p.call(http.MethodGet, "/v1/models", nil, &ms); err != nil {
		p.warnf("GET /v1/models: %v", err)
		return
	}
	if len(ms.Data) == 0 {
		p.warnf("GET /v1/models: no model listed")
		return
	}
	i := -1
	for j, m := range ms.Data {
		// Ollama's /v1/models lists "name:latest" for a model asked as "name".
		if m.ID == p.cfg.Model || (p.cfg.Model != "" && (m.Root == p.cfg.Model || ollamaName(m.ID) == ollamaName(p.cfg.Model))) {
			i = j
			break
		}
	}
	if i < 0 {
		i = 0
		if p.cfg.Model != "" {
			p.warnf("GET /v1/models: model %q not listed; recording %q", p.cfg.Model, ms.Data[0].ID)
		}
	}
	m := ms.Data[i]
	p.id.Server.Model = &m.ID
	if m.MaxModelLen != nil && *m.MaxModelLen > 0 {
		p.id.Server.ContextLength = m.MaxModelLen
		setDetail(&p.id, "context_length_source", "/v1/models max_model_len")
	}
	if m.Root != "" && m.Root != m.ID {
		setDetail(&p.id, "model_root", m.Root)
	}
}

// llamaProps is the part of llama.cpp's GET /props servebench reads. n_ctx
// sits under default_generation_settings (per slot) in current builds and
// at the top level in some older ones.
type llamaProps struct {
	BuildInfo  string `json:"build_info"`
	TotalSlots *int   `json:"total_slots"`
	ModelAlias string `json:"model_alias"`
	ModelPath  string `json:"model_path"`
	NCtx       *int   `json:"n_ctx"`
	Defaults   struct {
		NCtx *int `json:"n_ctx"`
	} `json:"default_generation_settings"`
}

// llamaSlot is one element of llama.cpp's GET /slots.
type llamaSlot struct {
	ID           int  `json:"id"`
	NCtx         *int `json:"n_ctx"`
	IsProcessing bool `json:"is_processing"`
}

func (p *prober) llamaCpp() {
	var pr llamaProps
	if err := p.call(http.MethodGet, "/props", nil, &pr); err != nil {
		p.warnf("GET /props: %v", err)
	} else {
		applyLlamaProps(&p.id, pr)
	}
	if p.id.Server.Slots == nil || p.id.Server.ContextLength == nil {
		var slots []llamaSlot
		if err := p.call(http.MethodGet, "/slots", nil, &slots); err != nil {
			p.warnf("GET /slots: %v", err)
		} else {
			applyLlamaSlots(&p.id, slots)
		}
	}
	if p.id.Server.Model == nil {
		p.models()
	}
}

// applyLlamaProps fills id from /props.
func applyLlamaProps(id *Identity, pr llamaProps) {
	if pr.BuildInfo != "" {
		setVersion(id, "llama.cpp", pr.BuildInfo)
	}
	switch {
	case pr.ModelAlias != "":
		id.Server.Model = &pr.ModelAlias
	case pr.ModelPath != "":
		id.Server.Model = &pr.ModelPath
	}
	if pr.ModelPath != "" {
		setDetail(id, "model_path", pr.ModelPath)
	}
	nctx := pr.Defaults.NCtx
	if nctx == nil {
		nctx = pr.NCtx
	}
	if nctx != nil && *nctx > 0 {
		id.Server.ContextLength = nctx
		setDetail(id, "context_length_source", "/props n_ctx (per slot)")
	}
	if pr.TotalSlots != nil && *pr.TotalSlots > 0 {
		id.Server.Slots = pr.TotalSlots
	}
}

// applyLlamaSlots fills slots and per-slot context from /slots where /props
// did not.
func applyLlamaSlots(id *Identity, slots []llamaSlot) {
	if len(slots) == 0 {
		return
	}
	if id.Server.Slots == nil {
		n := len(slots)
		id.Server.Slots = &n
	}
	if id.Server.ContextLength == nil && slots[0].NCtx != nil && *slots[0].NCtx > 0 {
		id.Server.ContextLength = slots[0].NCtx
		setDetail(id, "context_length_source", "/slots n_ctx (per slot)")
	}
}

// setDetail records a server detail; an empty value is left out.
func setDetail(id *Identity, k, v string) {
	if v == "" {
		return
	}
	if id.Server.Details == nil {
		id.Server.Details = map[string]string{}
	}
	id.Server.Details[k] = v
}

// ollamaShowResp is the part of Ollama's POST /api/show servebench reads.
type ollamaShowResp struct {
	Details struct {
		Format            string `json:"format"`
		Family            string `json:"family"`
		ParameterSize     string `json:"parameter_size"`
		QuantizationLevel string `json:"quantization_level"`
	} `json:"details"`
	ModelInfo map[string]any `json:"model_info"`
}

func (p *prober) ollamaShow() {
	var s ollamaShowResp
	body := map[string]string{"model": p.cfg.Model, "name": p.cfg.Model}
	if err := p.call(http.MethodPost, "/api/show", body, &s); err != nil {
		p.warnf("POST /api/show: %v", err)
		return
	}
	model := p.cfg.Model
	p.id.Server.Model = &model
	applyOllamaShow(&p.id, s)
}

// applyOllamaShow fills id from /api/show: the trained context length
// model_info["<general.architecture>.context_length"] and the model's
// details.
func applyOllamaShow(id *Identity, s ollamaShowResp) {
	setDetail(id, "family", s.Details.Family)
	setDetail(id, "parameter_size", s.Details.ParameterSize)
	setDetail(id, "quantization_level", s.Details.QuantizationLevel)
	setDetail(id, "format", s.Details.Format)
	arch, _ := s.ModelInfo["general.architecture"].(string)
	if arch == "" {
		return
	}
	setDetail(id, "architecture", arch)
	if n, ok := jsonInt(s.ModelInfo[arch+".context_length"]); ok && n > 0 {
		setDetail(id, "trained_context_length", strconv.Itoa(n))
		if id.Server.ContextLength == nil {
			id.Server.ContextLength = &n
			setDetail(id, "context_length_source", "/api/show model_info "+arch+".context_length (trained)")
		}
	}
}

// jsonInt reads a JSON number decoded into any as an int.
func jsonInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// ollamaPSResp is Ollama's GET /api/ps.
type ollamaPSResp struct {
	Models []struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		Size          *int64 `json:"size"`
		SizeVRAM      *int64 `json:"size_vram"`
		ContextLength *int   `json:"context_length"`
	} `json:"models"`
}

// ollamaPS reads the loaded model's sizes; a model not loaded (Ollama
// loads on first use) is a warning.
func (p *prober) ollamaPS() {
	var ps ollamaPSResp
	if err := p.call(http.MethodGet, "/api/ps", nil, &ps); err != nil {
		p.warnf("GET /api/ps: %v", err)
		return
	}
	if !applyOllamaPS(&p.id, ps, p.cfg.Model) {
		p.warnf("GET /api/ps: model %q is not loaded; size and size_vram unknown", p.cfg.Model)
	}
}

// applyOllamaPS fills sizes (and the loaded context length, which wins over
// the trained one) from the /api/ps entry of model; false if not listed.
func applyOllamaPS(id *Identity, ps ollamaPSResp, model string) bool {
	want := ollamaName(model)
	for _, m := range ps.Models {
		if ollamaName(m.Name) != want && ollamaName(m.Model) != want {
			continue
		}
		id.Server.SizeBytes = m.Size
		id.Server.SizeVRAMBytes = m.SizeVRAM
		if m.ContextLength != nil && *m.ContextLength > 0 {
			id.Server.ContextLength = m.ContextLength
			setDetail(id, "context_length_source", "/api/ps context_length (loaded)")
		}
		return true
	}
	return false
}

// ollamaName adds Ollama's implicit ":latest" tag.
func ollamaName(s string) string {
	if s != "" && !strings.Contains(s, ":") {
		return s + ":latest"
	}
	return s
}

// tgiInfoResp is the part of TGI's GET /info servebench reads.
type tgiInfoResp struct {
	ModelID               string `json:"model_id"`
	Version               string `json:"version"`
	MaxTotalTokens        *int   `json:"max_total_tokens"`
	MaxConcurrentRequests *int   `json:"max_concurrent_requests"`
	ModelDtype            string `json:"model_dtype"`
	Sha                   string `json:"sha"`
}

func (p *prober) tgiInfo() {
	var in tgiInfoResp
	if err := p.call(http.MethodGet, "/info", nil, &in); err != nil {
		p.warnf("GET /info: %v", err)
		return
	}
	applyTGIInfo(&p.id, in)
}

// applyTGIInfo fills id from /info: max_total_tokens is the longest prompt
// plus output a request may have.
func applyTGIInfo(id *Identity, in tgiInfoResp) {
	if in.Version != "" {
		setVersion(id, "TGI", in.Version)
	}
	if in.ModelID != "" {
		id.Server.Model = &in.ModelID
	}
	if in.MaxTotalTokens != nil && *in.MaxTotalTokens > 0 {
		id.Server.ContextLength = in.MaxTotalTokens
		setDetail(id, "context_length_source", "/info max_total_tokens")
	}
	if in.MaxConcurrentRequests != nil && *in.MaxConcurrentRequests > 0 {
		// A router admission limit, not decoding slots: a detail only.
		setDetail(id, "max_concurrent_requests", strconv.Itoa(*in.MaxConcurrentRequests))
	}
	if in.ModelDtype != "" {
		setDetail(id, "model_dtype", in.ModelDtype)
	}
	if in.Sha != "" {
		setDetail(id, "sha", in.Sha)
	}
}
