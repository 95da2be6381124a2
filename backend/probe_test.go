package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
)

// probeFile returns a testdata/ fixture as it is, byte for byte: a server's
// published output or one built from its source (testdata/SOURCES.md names
// each one's source).
func probeFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// probeServer replays bodies by "METHOD /path" on loopback (404 for the
// rest) and records the requests it saw; it stands in for servers we cannot
// run, answering with their captured outputs.
func probeServer(t *testing.T, bodies map[string]string, apiKey string) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	var mu sync.Mutex // Identify sends its requests at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		mu.Lock()
		seen = append(seen, key)
		mu.Unlock()
		if apiKey != "" && r.Header.Get("Authorization") != "Bearer "+apiKey {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		b, ok := bodies[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(b))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func probeStr(s string) *string { return &s }
func probeInt(n int) *int       { return &n }
func probeI64(n int64) *int64   { return &n }

func probeEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func probeShow[T any](p *T) any {
	if p == nil {
		return "null"
	}
	return *p
}

// probeWant is the part of an Identity a case checks.
type probeWant struct {
	version, model, runtime *string
	ctx, slots              *int
	size, sizeVRAM          *int64
	details                 map[string]string
	warnings                []string // substrings, one per expected warning
}

func probeCheck(t *testing.T, got Identity, w probeWant) {
	t.Helper()
	s := got.Server
	if !probeEq(s.Version, w.version) || !probeEq(s.Model, w.model) || !probeEq(got.Runtime, w.runtime) {
		t.Errorf("version %v model %v runtime %v, want %v %v %v", probeShow(s.Version), probeShow(s.Model), probeShow(got.Runtime), probeShow(w.version), probeShow(w.model), probeShow(w.runtime))
	}
	if !probeEq(s.ContextLength, w.ctx) || !probeEq(s.Slots, w.slots) {
		t.Errorf("context %v slots %v, want %v %v", probeShow(s.ContextLength), probeShow(s.Slots), probeShow(w.ctx), probeShow(w.slots))
	}
	if !probeEq(s.SizeBytes, w.size) || !probeEq(s.SizeVRAMBytes, w.sizeVRAM) {
		t.Errorf("size %v size_vram %v, want %v %v", probeShow(s.SizeBytes), probeShow(s.SizeVRAMBytes), probeShow(w.size), probeShow(w.sizeVRAM))
	}
	for k, v := range w.details {
		if s.Details[k] != v {
			t.Errorf("details[%q] = %q, want %q", k, s.Details[k], v)
		}
	}
	if len(got.Warnings) != len(w.warnings) {
		t.Fatalf("warnings %q, want %d matching %q", got.Warnings, len(w.warnings), w.warnings)
	}
	for i, sub := range w.warnings {
		if !strings.Contains(got.Warnings[i], sub) {
			t.Errorf("warning %q does not mention %q", got.Warnings[i], sub)
		}
	}
}

// TestProbeCaptures probes loopback servers that answer with real published
// outputs (testdata/, sources in testdata/SOURCES.md) or, for TGI, with a
// fixture built from TGI 2.2.0's source.
func TestProbeCaptures(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		model  string
		bodies map[string]string
		want   probeWant
	}{
		{
			name: "vLLM /v1/models, no /version", kind: VLLM, model: "facebook/opt-125m",
			bodies: map[string]string{"GET /v1/models": probeFile(t, "vllm-v1-models.json")},
			want: probeWant{model: probeStr("facebook/opt-125m"), ctx: probeInt(128),
				warnings: []string{"GET /version: HTTP 404"}},
		},
		{
			name: "vLLM with version", kind: VLLM, model: "",
			bodies: map[string]string{
				"GET /v1/models": probeFile(t, "vllm-v1-models.json"),
				// vLLM's /version answers {"version": vllm.__version__}.
				"GET /version": `{"version":"0.10.1"}`,
			},
			want: probeWant{version: probeStr("0.10.1"), runtime: probeStr("vLLM 0.10.1"), model: probeStr("facebook/opt-125m"), ctx: probeInt(128)},
		},
		{
			name: "llama.cpp /props", kind: LlamaCpp,
			bodies: map[string]string{"GET /props": probeFile(t, "llamacpp-b9014-props.json")},
			want: probeWant{version: probeStr("b9014-d4b0c22f9"), runtime: probeStr("llama.cpp b9014-d4b0c22f9"),
				model: probeStr("Qwen3.6-27B-UD-Q3_K_XL.gguf"), ctx: probeInt(262144), slots: probeInt(1),
				details: map[string]string{"model_path": "/models/qwen3.6-27b-gguf/unsloth-q3kxl/Qwen3.6-27B-UD-Q3_K_XL.gguf"}},
		},
		{
			name: "llama.cpp /slots when /props fails", kind: LlamaCpp,
			bodies: map[string]string{"GET /slots": probeFile(t, "llamacpp-b9014-slots.json")},
			want: probeWant{ctx: probeInt(256), slots: probeInt(1),
				warnings: []string{"GET /props: HTTP 404", "GET /v1/models: HTTP 404"}},
		},
		{
			name: "Ollama show (trained context), model not loaded", kind: Ollama, model: "dolphin3:8b",
			bodies: map[string]string{
				// Ollama API docs, "Version": GET /api/version → {"version": "0.5.1"}.
				"GET /api/version": `{"version":"0.5.1"}`,
				"POST /api/show":   probeFile(t, "ollama-0.11.6-show.json"),
				"GET /api/ps":      probeFile(t, "ollama-0.11.6-ps.json"),
			},
			want: probeWant{version: probeStr("0.5.1"), runtime: probeStr("Ollama 0.5.1"), model: probeStr("dolphin3:8b"), ctx: probeInt(131072),
				details:  map[string]string{"architecture": "llama", "trained_context_length": "131072", "quantization_level": "Q4_K_M", "parameter_size": "8.0B"},
				warnings: []string{`GET /api/ps: model "dolphin3:8b" is not loaded`}},
		},
		{
			name: "Ollama ps (loaded context and sizes)", kind: Ollama, model: "granite3.3:2b",
			bodies: map[string]string{
				"GET /api/version": `{"version":"0.5.1"}`,
				"POST /api/show":   probeFile(t, "ollama-0.11.6-show.json"),
				"GET /api/ps":      probeFile(t, "ollama-0.11.6-ps.json"),
			},
			want: probeWant{version: probeStr("0.5.1"), runtime: probeStr("Ollama 0.5.1"), model: probeStr("granite3.3:2b"), ctx: probeInt(4096),
				size: probeI64(2629206853), sizeVRAM: probeI64(2629206853),
				details: map[string]string{"trained_context_length": "131072", "context_length_source": "/api/ps context_length (loaded)"}},
		},
		{
			name: "TGI 2.2.0 /info (fixture from source)", kind: TGI,
			bodies: map[string]string{"GET /info": probeFile(t, "tgi-2.2.0-info.json")},
			want: probeWant{version: probeStr("2.2.0"), runtime: probeStr("TGI 2.2.0"), model: probeStr("bigscience/bloom-560m"), ctx: probeInt(2048),
				details: map[string]string{"max_concurrent_requests": "128", "model_dtype": "torch.float16"}},
		},
		{
			name: "nothing answers", kind: OpenAI, model: "m",
			bodies: map[string]string{},
			want:   probeWant{warnings: []string{"GET /v1/models: HTTP 404"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := probeServer(t, tc.bodies, "")
			id := Probe(context.Background(), Config{Kind: tc.kind, BaseURL: srv.URL + "/v1/", Model: tc.model})
			probeCheck(t, id, tc.want)
		})
	}
}

// TestProbeAPIKey sends the key and keeps it out of warnings.
func TestProbeAPIKey(t *testing.T) {
	const key = "sk-secret-123"
	srv, _ := probeServer(t, map[string]string{"GET /v1/models": probeFile(t, "vllm-v1-models.json")}, key)
	id := Probe(context.Background(), Config{Kind: OpenAI, BaseURL: srv.URL, APIKey: key})
	if id.Server.Model == nil || *id.Server.Model != "facebook/opt-125m" {
		t.Fatalf("model %v with the key sent", probeShow(id.Server.Model))
	}
	bad := Probe(context.Background(), Config{Kind: VLLM, BaseURL: srv.URL, APIKey: "wrong-key-456"})
	if len(bad.Warnings) == 0 {
		t.Fatal("no warning for a rejected key")
	}
	for _, w := range append(id.Warnings, bad.Warnings...) {
		if strings.Contains(w, key) || strings.Contains(w, "wrong-key-456") {
			t.Fatalf("warning leaks the API key: %q", w)
		}
	}
}

// TestProbeUnreachable: a dead server gives warnings, fast, never a panic.
func TestProbeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	for _, k := range Kinds {
		id := Probe(context.Background(), Config{Kind: k, BaseURL: url, Model: "m"})
		if len(id.Warnings) == 0 || id.Server.Version != nil {
			t.Errorf("%s: warnings %q version %v", k, id.Warnings, probeShow(id.Server.Version))
		}
	}
}

// TestProbeOllamaLive probes the real Ollama testbed: version, model,
// context length, and after a request the loaded size.
func TestProbeOllamaLive(t *testing.T) {
	url, model := testenv.Ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := Config{Kind: Ollama, BaseURL: url, Model: model}
	id := Probe(ctx, cfg)
	s := id.Server
	if s.Version == nil || *s.Version == "" || id.Runtime == nil || !strings.HasPrefix(*id.Runtime, "Ollama ") {
		t.Fatalf("version %v runtime %v (warnings %q)", probeShow(s.Version), probeShow(id.Runtime), id.Warnings)
	}
	if s.Model == nil || *s.Model != model {
		t.Fatalf("model %v, want %q", probeShow(s.Model), model)
	}
	if s.ContextLength == nil || *s.ContextLength <= 0 {
		t.Fatalf("context length %v", probeShow(s.ContextLength))
	}
	// Load the model (a one-token generation), then read its size.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/generate",
		strings.NewReader(`{"model":"`+model+`","prompt":"a","stream":false,"options":{"num_predict":1}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	RefreshLoaded(ctx, cfg, &id)
	if id.Server.SizeBytes == nil || *id.Server.SizeBytes <= 0 || id.Server.SizeVRAMBytes == nil {
		t.Fatalf("size %v size_vram %v after loading (warnings %q)", probeShow(id.Server.SizeBytes), probeShow(id.Server.SizeVRAMBytes), id.Warnings)
	}
	t.Logf("runtime %s, model %s, context %d (%s), size %d B, size_vram %d B", *id.Runtime, *s.Model,
		*id.Server.ContextLength, id.Server.Details["context_length_source"], *id.Server.SizeBytes, *id.Server.SizeVRAMBytes)
}

// TestProbeHonoursContext: a cancelled run context ends a probe of a
// stalled server at once, not after probeTimeout per request.
func TestProbeHonoursContext(t *testing.T) {
	srv := stallingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	id := Probe(ctx, Config{Kind: VLLM, BaseURL: srv.URL, Model: "m"})
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Probe took %v after its context ended", el)
	}
	if len(id.Warnings) != 2 {
		t.Errorf("warnings %q, want one per probe request", id.Warnings)
	}
}

// stallingServer accepts every request and never answers it, until the
// client gives up or the test ends.
func stallingServer(t *testing.T) *httptest.Server {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: lets Close return
	return srv
}

// echoKeyServer answers every probe with the Authorization header (and
// an X-Tenant header's value) it was sent folded into each string a server gives about itself (version,
// model ids, paths, details), raw and JSON-escaped, as a misconfigured
// proxy or a hostile server may.
func echoKeyServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization") + r.Header.Get("X-Tenant")
		esc := strings.ReplaceAll(auth, "s", `\u0073`)
		bodies := map[string]string{
			"/version":         `{"version":"v-` + auth + `"}`,
			"/get_server_info": `{"version":"v-` + esc + `"}`,
			"/api/version":     `{"version":"v-` + auth + `"}`,
			"/v1/models":       `{"data":[{"id":"model-` + auth + `","root":"root-` + esc + `","owned_by":"vllm","max_model_len":64}]}`,
			"/props":           `{"build_info":"b-` + auth + `","model_alias":"alias-` + esc + `","model_path":"/m/` + auth + `","total_slots":1,"n_ctx":64}`,
			"/info":            `{"version":"` + auth + `","model_id":"id-` + esc + `","model_dtype":"` + auth + `","sha":"` + auth + `","max_total_tokens":64}`,
			"/api/show":        `{"details":{"family":"` + auth + `","format":"` + esc + `"},"model_info":{"general.architecture":"` + auth + `"}}`,
			"/api/tags":        `{"models":[{"name":"tag-` + auth + `"}]}`,
			"/api/ps":          `{"models":[]}`,
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			w.Header().Set("X-Echo", auth)
			http.Error(w, "no route for "+auth, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(b))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProbeRedactsEchoedHeader: a --header value is a secret as the key
// is: echoed in what a server says about itself, it reaches neither the
// identity nor what discovery found.
func TestProbeRedactsEchoedHeader(t *testing.T) {
	const value = "tenant-secret-42"
	srv := echoKeyServer(t)
	for _, kind := range []Kind{VLLM, SGLang, LlamaCpp, Ollama, TGI, OpenAI} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := Config{Kind: kind, BaseURL: srv.URL + "/v1", Model: "m", Headers: []Header{{Name: "X-Tenant", Value: value}}}
			b, err := json.Marshal(Probe(context.Background(), cfg))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), value) || strings.Contains(string(b), "tenant-\\u0073ecret") {
				t.Fatalf("the identity carries the header's value: %s", b)
			}
			if !strings.Contains(string(b), redacted) {
				t.Fatalf("nothing redacted, so the echo was not read: %s", b)
			}
			f, err := Identify(context.Background(), cfg, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%s %+v", f.Name(), f); strings.Contains(s, value) {
				t.Fatalf("discovery carries the header's value: %s", s)
			}
		})
	}
}

// TestProbeRedactsEchoedKey: a server that echoes the API key in what it
// says about itself gets none of it into the identity (the report's
// server block, runtime, warnings) nor into what discovery found.
func TestProbeRedactsEchoedKey(t *testing.T) {
	const key = "sk-echo-7f3a9"
	srv := echoKeyServer(t)
	for _, kind := range []Kind{VLLM, SGLang, LlamaCpp, Ollama, TGI, OpenAI} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := Config{Kind: kind, BaseURL: srv.URL + "/v1", APIKey: key, Model: "m"}
			id := Probe(context.Background(), cfg)
			b, err := json.Marshal(id)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), key) || strings.Contains(string(b), "\\u0073k-echo") {
				t.Fatalf("the identity carries the key: %s", b)
			}
			if !strings.Contains(string(b), redacted) {
				t.Fatalf("nothing redacted, so the echo was not read: %s", b)
			}
			f, err := Identify(context.Background(), cfg, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%s %+v", f.Name(), f); strings.Contains(s, key) {
				t.Fatalf("discovery carries the key: %s", s)
			}
		})
	}
}
