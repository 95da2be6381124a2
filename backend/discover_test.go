package backend

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
)

// identifyBodies are loopback replays of each family's identity answers:
// published outputs from testdata/ (sources in testdata/SOURCES.md) and,
// where none was published, bodies built from the server's source or
// documentation, named beside each.
func identifyBodies(t *testing.T) map[string]map[string]string {
	return map[string]map[string]string{
		"vllm": {
			"GET /v1/models": probeFile(t, "vllm-v1-models.json"),
			// vLLM's /version answers {"version": vllm.__version__}.
			"GET /version": `{"version":"0.10.1"}`,
		},
		"vllm behind a key on /version": {
			// A vLLM whose /version failed: recognised by /v1/models'
			// owned_by "vllm" (published body).
			"GET /v1/models": probeFile(t, "vllm-v1-models.json"),
		},
		"llamacpp": {"GET /props": probeFile(t, "llamacpp-b9014-props.json")},
		"tgi":      {"GET /info": probeFile(t, "tgi-2.2.0-info.json")},
		"sglang": {
			// SGLang http_server.py get_server_info: the server arguments
			// (model_path among them) plus "version"; ModelCard's owned_by
			// defaults to "sglang" (entrypoints/openai/protocol.py).
			"GET /get_server_info": `{"model_path":"Qwen/Qwen2.5-7B-Instruct","tp_size":1,"version":"0.5.3"}`,
			"GET /v1/models":       `{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","created":1,"owned_by":"sglang","root":"Qwen/Qwen2.5-7B-Instruct","max_model_len":32768}]}`,
		},
		"openai": {
			// The OpenAI API reference's "List models" response.
			"GET /v1/models": `{"object":"list","data":[{"id":"model-id-0","object":"model","created":1686935002,"owned_by":"organization-owner"},{"id":"model-id-1","object":"model","created":1686935002,"owned_by":"organization-owner"}]}`,
		},
		"ollama": {
			// Ollama API docs: GET /api/version, GET /api/tags (models[].name).
			"GET /api/version": `{"version":"0.5.1"}`,
			"GET /api/tags":    `{"models":[{"name":"dolphin3:8b","model":"dolphin3:8b"},{"name":"granite3.3:2b","model":"granite3.3:2b"},{"name":"tiny:latest","model":"tiny:latest"}]}`,
			"GET /v1/models":   `{"object":"list","data":[{"id":"tiny:latest","object":"model","created":1,"owned_by":"library"}]}`,
		},
		"version only": {
			// Not an LLM server: some other program that answers /version.
			"GET /version": `{"version":"1.2.3"}`,
		},
	}
}

func TestIdentify(t *testing.T) {
	bodies := identifyBodies(t)
	tests := []struct {
		server  string
		told    Kind
		kind    Kind
		name    string
		by      string
		models  []string
		modelBy string
	}{
		{"vllm", "", VLLM, "vLLM 0.10.1", "GET /version", []string{"facebook/opt-125m"}, "GET /v1/models"},
		{"vllm behind a key on /version", "", VLLM, "vLLM", "GET /v1/models owned_by", []string{"facebook/opt-125m"}, "GET /v1/models"},
		{"llamacpp", "", LlamaCpp, "llama.cpp b9014-d4b0c22f9", "GET /props", []string{"Qwen3.6-27B-UD-Q3_K_XL.gguf"}, "GET /props"},
		{"tgi", "", TGI, "TGI 2.2.0", "GET /info", []string{"bigscience/bloom-560m"}, "GET /info model_id"},
		{"sglang", "", SGLang, "SGLang 0.5.3", "GET /get_server_info", []string{"Qwen/Qwen2.5-7B-Instruct"}, "GET /v1/models"},
		{"openai", "", OpenAI, "an OpenAI-compatible server", "GET /v1/models", []string{"model-id-0", "model-id-1"}, "GET /v1/models"},
		{"ollama", "", Ollama, "Ollama 0.5.1", "GET /api/version", []string{"dolphin3:8b", "granite3.3:2b", "tiny"}, "GET /api/tags"},
		// Told the family: the models come from where that family lists
		// them, whatever the server was recognised as.
		{"ollama", OpenAI, Ollama, "Ollama 0.5.1", "GET /api/version", []string{"tiny:latest"}, "GET /v1/models"},
	}
	for _, tc := range tests {
		t.Run(tc.server+"/told "+string(tc.told), func(t *testing.T) {
			srv, _ := probeServer(t, bodies[tc.server], "")
			f, err := Identify(context.Background(), Config{Kind: tc.told, BaseURL: srv.URL + "/v1"}, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind != tc.kind || f.Name() != tc.name || f.By != tc.by {
				t.Errorf("kind %q name %q by %q, want %q %q %q", f.Kind, f.Name(), f.By, tc.kind, tc.name, tc.by)
			}
			if !slices.Equal(f.Models, tc.models) || f.ModelsBy != tc.modelBy || f.ModelsErr != nil {
				t.Errorf("models %q by %q (err %v), want %q by %q", f.Models, f.ModelsBy, f.ModelsErr, tc.models, tc.modelBy)
			}
		})
	}
}

func TestIdentifyFailures(t *testing.T) {
	bodies := identifyBodies(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A web app that answers every path with its page.
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>app</title>"))
	}))
	defer html.Close()
	notFound, _ := probeServer(t, map[string]string{}, "")
	versionOnly, _ := probeServer(t, bodies["version only"], "")

	t.Run("nothing listens", func(t *testing.T) {
		_, err := Identify(context.Background(), Config{BaseURL: deadURL}, time.Second)
		var ue *UnreachableError
		if !errors.As(err, &ue) || !errors.Is(err, syscall.ECONNREFUSED) || ue.URL != deadURL {
			t.Fatalf("err %v, want an *UnreachableError wrapping connection refused", err)
		}
	})
	for name, url := range map[string]string{"html everywhere": html.URL, "404 everywhere": notFound.URL, "only /version": versionOnly.URL} {
		t.Run(name, func(t *testing.T) {
			_, err := Identify(context.Background(), Config{BaseURL: url}, time.Second)
			var ue *UnrecognisedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "GET /v1/models:") {
				t.Fatalf("err %v, want an *UnrecognisedError listing the answers", err)
			}
		})
	}
	t.Run("told the family, not recognised", func(t *testing.T) {
		f, err := Identify(context.Background(), Config{Kind: VLLM, BaseURL: notFound.URL}, time.Second)
		if err != nil || f.Kind != "" || f.Models != nil || f.ModelsErr == nil || !strings.Contains(f.ModelsErr.Error(), "GET /v1/models: HTTP 404") {
			t.Fatalf("found %+v err %v, want no kind and the models' error", f, err)
		}
	})
}

// TestIdentifyAPIKey: a server that wants a key gives an *AuthError that
// says whether one was sent and never carries it; with the key it is
// recognised.
func TestIdentifyAPIKey(t *testing.T) {
	const key = "sk-discover-9d2"
	srv, _ := probeServer(t, identifyBodies(t)["openai"], key)
	cases := []struct {
		name, key string
		given     bool
	}{{"no key", "", false}, {"wrong key", "wrong-" + key, true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Identify(context.Background(), Config{BaseURL: srv.URL, APIKey: c.key}, time.Second)
			var ae *AuthError
			if !errors.As(err, &ae) || ae.KeyGiven != c.given || ae.Status != "401 Unauthorized" {
				t.Fatalf("err %v, want an *AuthError (key given %v)", err, c.given)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("error %q carries the key", err)
			}
		})
	}
	f, err := Identify(context.Background(), Config{BaseURL: srv.URL, APIKey: key}, time.Second)
	if err != nil || f.Kind != OpenAI || len(f.Models) != 2 {
		t.Fatalf("with the key: %+v %v", f, err)
	}
	// Told the family: the refused model list is the error.
	f, err = Identify(context.Background(), Config{Kind: VLLM, BaseURL: srv.URL}, time.Second)
	var ae *AuthError
	if err != nil || !errors.As(f.ModelsErr, &ae) || ae.Request != "GET /v1/models" {
		t.Fatalf("told vllm, no key: %+v %v, want an *AuthError for the models", f, err)
	}
}

// TestIdentifyTimeout: a port that accepts and never answers costs one
// timeout, not one per request.
func TestIdentifyTimeout(t *testing.T) {
	srv := stallingServer(t)
	start := time.Now()
	_, err := Identify(context.Background(), Config{BaseURL: srv.URL}, 200*time.Millisecond)
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err %v, want an *UnreachableError", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Identify took %v with a 200ms timeout", el)
	}
}

func TestScan(t *testing.T) {
	bodies := identifyBodies(t)
	vllm, _ := probeServer(t, bodies["vllm"], "")
	other, _ := probeServer(t, map[string]string{}, "")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	cands := []Candidate{{URL: deadURL, Kinds: []Kind{Ollama}}, {URL: vllm.URL, Kinds: []Kind{VLLM}}, {URL: other.URL, Kinds: []Kind{TGI}}}
	found, misses := Scan(context.Background(), cands, Config{}, time.Second)
	if len(found) != 1 || found[0].Kind != VLLM || found[0].URL != vllm.URL {
		t.Fatalf("found %+v, want the vLLM replay only", found)
	}
	if len(misses) != 2 || misses[0].Candidate.URL != deadURL || misses[1].Candidate.URL != other.URL {
		t.Fatalf("misses %+v", misses)
	}
	var ue *UnreachableError
	var un *UnrecognisedError
	if !errors.As(misses[0].Err, &ue) || !errors.As(misses[1].Err, &un) {
		t.Fatalf("miss reasons %v, %v", misses[0].Err, misses[1].Err)
	}
	// Told the family: a server that answers, but not as that family, is a
	// miss.
	found, _ = Scan(context.Background(), cands[2:], Config{Kind: TGI}, time.Second)
	if len(found) != 0 {
		t.Fatalf("found %+v for --backend tgi on a 404 server", found)
	}
}

func TestFoundServes(t *testing.T) {
	f := Found{Models: []string{"servebench-tiny", "qwen2.5:7b"}}
	cases := []struct {
		kind      Kind
		model     string
		ok, known bool
	}{
		{Ollama, "servebench-tiny", true, true},
		{Ollama, "servebench-tiny:latest", true, true},
		{Ollama, "qwen2.5:7b", true, true},
		{Ollama, "qwen2.5", false, true},
		{VLLM, "servebench-tiny:latest", false, true},
		{VLLM, "nope", false, true},
		{LlamaCpp, "anything", false, false},
		{TGI, "anything", false, false},
	}
	for _, c := range cases {
		if ok, known := f.Serves(c.kind, c.model); ok != c.ok || known != c.known {
			t.Errorf("%s %q: serves %v known %v, want %v %v", c.kind, c.model, ok, known, c.ok, c.known)
		}
	}
	// Ollama's OpenAI-compatible API lists "name:latest" and takes "name".
	viaOpenAI := Found{Kind: Ollama, Models: []string{"servebench-tiny:latest"}}
	if ok, known := viaOpenAI.Serves(OpenAI, "servebench-tiny"); !ok || !known {
		t.Error("Ollama's /v1/models name with :latest does not serve the name without it")
	}
	if _, known := (Found{}).Serves(VLLM, "m"); known {
		t.Error("an unknown list claims to know")
	}
}

// TestIdentifyOllamaLive identifies the real testbed with nothing told.
func TestIdentifyOllamaLive(t *testing.T) {
	url, model := testenv.Ollama(t)
	f, err := Identify(context.Background(), Config{BaseURL: url}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != Ollama || !strings.HasPrefix(f.Name(), "Ollama 0.") || !slices.Contains(f.Models, model) {
		t.Fatalf("found %+v, want Ollama serving %q", f, model)
	}
	t.Logf("%s at %s serving %q (by %s, %s)", f.Name(), url, f.Models, f.By, f.ModelsBy)
}

// FuzzIdentityAnswers gives every identity request the same arbitrary body
// (as a server that answers every path alike would) and holds what
// recognise and the model listing must keep: no panic, a family servebench
// knows, and a list read wherever /v1/models decoded.
func FuzzIdentityAnswers(f *testing.F) {
	seedTranscripts(f, "testdata/vllm-v1-models.json", "testdata/llamacpp-b9014-props.json", "testdata/tgi-2.2.0-info.json")
	f.Add([]byte(`{"version":"0.6.5"}`))
	f.Add([]byte(`{"version":"0.5.3","model_path":"m","data":[]}`))
	f.Add([]byte(`{"data":[{"id":"a","owned_by":"vllm"}],"models":[{"name":"x:latest"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fp := newFingerprints()
		for _, r := range fp.reqs {
			if err := json.Unmarshal(body, r.out); err != nil {
				r.err = &bodyError{path: r.path, err: err}
			}
		}
		kind, _, by := fp.recognise()
		if kind == "" {
			if by != "" {
				t.Fatalf("nothing recognised, by %q", by)
			}
			return
		}
		if _, err := ParseKind(string(kind)); err != nil || by == "" {
			t.Fatalf("recognised %q by %q", kind, by)
		}
		if kind == Ollama {
			return // its list is another request
		}
		var found Found
		fp.listModels(newProber(context.Background(), Config{}), kind, &found)
		if fp.err("/v1/models") == nil && kind != TGI && found.Models == nil {
			t.Fatalf("%s: /v1/models decoded but no list (err %v)", kind, found.ModelsErr)
		}
	})
}
