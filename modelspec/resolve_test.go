package modelspec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/tinymodel"
)

func TestMatchPreset(t *testing.T) {
	cases := []struct{ name, preset, format string }{
		{"qwen2.5-7b", "qwen2.5-7b", ""},
		{"Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", "awq"},
		{"Qwen/Qwen2.5-14B-Instruct-AWQ", "qwen2.5-14b", "awq"},
		{"Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4", "qwen2.5-14b", "gptq"},
		{"Qwen/Qwen3-32B-FP8", "qwen3-32b", "fp8"},
		{"QWEN/QWEN3-8B", "qwen3-8b", ""},
		{"/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", "qwen2.5-7b", "q4_k_m"},
		{"qwen2.5:7b-instruct", "qwen2.5-7b", "q4_k_m"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
		{"bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "", ""},
		{"lmstudio/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", "llama-3.1-8b", "q8_0"},
		{"google/gemma-3-27b-it", "gemma-3-27b", ""},
		{"acme/frobnicator-13b", "", ""},
		{"Qwen/Qwen2.5-7B-Instruct-1M", "", ""},
	}
	for _, tc := range cases {
		m, f, ok := MatchPreset(tc.name)
		if ok != (tc.preset != "") || m.Name != tc.preset || f != tc.format {
			t.Errorf("MatchPreset(%q) = %q, %q, %v; want %q, %q", tc.name, m.Name, f, ok, tc.preset, tc.format)
		}
	}
}

// fakeHub answers as the Hugging Face hub does: files under
// /<id>/resolve/main/, safetensors files with Range (http.ServeContent),
// 404 for what the repository lacks, 401 for a gated one without a
// token. ignoreRange makes it send whole files, as a plain mirror may.
type fakeHub struct {
	files       map[string][]byte
	gated       string
	ignoreRange bool
	requests    atomic.Int64
	// bytesSent counts the body bytes the hub sent.
	bytesSent atomic.Int64
	auth      atomic.Value
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	if a := r.Header.Get("Authorization"); a != "" {
		h.auth.Store(a)
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	if h.gated != "" && strings.HasPrefix(p, h.gated+"/") && r.Header.Get("Authorization") != "Bearer secret-token" {
		http.Error(w, "gated", http.StatusUnauthorized)
		return
	}
	b, ok := h.files[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	cw := &countingWriter{ResponseWriter: w, n: &h.bytesSent}
	if h.ignoreRange {
		r.Header.Del("Range")
	}
	http.ServeContent(cw, r, filepath.Base(p), time.Time{}, bytes.NewReader(b))
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// safetensors builds a safetensors file whose tensors have the given
// byte sizes, followed by pad bytes of weights.
func safetensors(t *testing.T, sizes map[string]int64, pad int) []byte {
	t.Helper()
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for name, n := range sizes {
		hdr[name] = map[string]any{"dtype": "BF16", "shape": []int64{n / 2}, "data_offsets": []int64{off, off + n}}
		off += n
	}
	j, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(j)))
	b.Write(j)
	b.Write(make([]byte, pad))
	return b.Bytes()
}

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	cfg, err := os.ReadFile("testdata/qwen2.5-7b-instruct.config.json")
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	c["quantization_config"] = map[string]any{"quant_method": "awq", "bits": 4}
	awq, _ := json.Marshal(c)
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]int64{"total_size": 0},
		"weight_map": map[string]string{"a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})
	return &fakeHub{files: map[string][]byte{
		// sharded, with an index
		"acme/sharded-7b/resolve/main/config.json":                      cfg,
		"acme/sharded-7b/resolve/main/model.safetensors.index.json":     idx,
		"acme/sharded-7b/resolve/main/model-00001-of-00002.safetensors": safetensors(t, map[string]int64{"a": 1000, "b": 2000}, 1<<20),
		"acme/sharded-7b/resolve/main/model-00002-of-00002.safetensors": safetensors(t, map[string]int64{"c": 4000}, 1<<20),
		// one file, quantized
		"acme/single-awq/resolve/main/config.json":       awq,
		"acme/single-awq/resolve/main/model.safetensors": safetensors(t, map[string]int64{"q": 300, "s": 12}, 1<<20),
		// no safetensors at all: the estimate stands
		"acme/bin-only/resolve/main/config.json": cfg,
		// gated
		"gated/model/resolve/main/config.json":       cfg,
		"gated/model/resolve/main/model.safetensors": safetensors(t, map[string]int64{"w": 64}, 0),
	}, gated: "gated/model"}
}

func TestResolveHub(t *testing.T) {
	for _, ignoreRange := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignoreRange=%v", ignoreRange), func(t *testing.T) {
			fh := newFakeHub(t)
			fh.ignoreRange = ignoreRange
			srv := httptest.NewServer(fh)
			defer srv.Close()
			hub := &Hub{Endpoint: srv.URL}
			ctx := context.Background()
			cases := []struct {
				id     string
				bytes  int64
				format string
			}{
				{"acme/sharded-7b", 7000, ""},
				{"acme/single-awq", 312, "awq"},
				{"acme/bin-only", 0, ""},
			}
			for _, tc := range cases {
				r, err := Resolve(ctx, tc.id, Options{Hub: hub})
				if err != nil {
					t.Fatalf("%s: %v", tc.id, err)
				}
				if r.From != FromHub || r.Spec.Name != tc.id || r.Spec.Layers != 28 || r.Spec.WeightsBytes != tc.bytes || r.Format != tc.format {
					t.Errorf("%s: from %s, name %q, %d layers, %d weight bytes, format %q; want hub, 28, %d, %q",
						tc.id, r.From, r.Spec.Name, r.Spec.Layers, r.Spec.WeightsBytes, r.Format, tc.bytes, tc.format)
				}
			}
			// Range: the headers, not the megabytes of weights behind them.
			if sent := fh.bytesSent.Load(); !ignoreRange && sent > 64<<10 {
				t.Errorf("hub sent %d bytes; want the headers only", sent)
			}
			// A second resolution is not fetched again.
			before := fh.requests.Load()
			if _, err := Resolve(ctx, "acme/sharded-7b", Options{Hub: hub}); err != nil || fh.requests.Load() != before {
				t.Errorf("second resolution: %v, %d requests; want none", err, fh.requests.Load()-before)
			}
		})
	}
}

func TestResolveHubErrors(t *testing.T) {
	fh := newFakeHub(t)
	srv := httptest.NewServer(fh)
	defer srv.Close()
	ctx := context.Background()
	hub := &Hub{Endpoint: srv.URL}

	_, err := Resolve(ctx, "acme/missing-13b", Options{Hub: hub})
	if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "acme/missing-13b") || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("missing model: %v", err)
	}
	_, err = Resolve(ctx, "gated/model", Options{Hub: hub})
	if err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("gated model without a token: %v", err)
	}
	r, err := Resolve(ctx, "gated/model", Options{Hub: &Hub{Endpoint: srv.URL, Token: "secret-token"}})
	if err != nil || r.Spec.WeightsBytes != 64 {
		t.Errorf("gated model with a token: %v, %d bytes", err, r.Spec.WeightsBytes)
	}
	if err != nil && strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error shows the token: %v", err)
	}

	// Offline: refused in one line, and the hub never asked.
	before := fh.requests.Load()
	_, err = Resolve(ctx, "acme/other-13b", Options{Hub: hub, Offline: true})
	if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "--offline") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--offline: %v", err)
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	_, err = Resolve(ctx, "acme/other-13b", Options{Hub: hub})
	if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Errorf("HF_HUB_OFFLINE=1: %v", err)
	}
	// A name that matches a preset resolves offline all the same.
	if r, err := Resolve(ctx, "Qwen/Qwen2.5-14B-Instruct-AWQ", Options{Hub: hub}); err != nil || r.Spec.Name != "qwen2.5-14b" || r.Format != "awq" || r.From != FromPresetName {
		t.Errorf("preset name offline: %+v, %v", r.From, err)
	}
	if fh.requests.Load() != before {
		t.Errorf("offline resolution asked the hub %d times", fh.requests.Load()-before)
	}
}

// TestResolveEndpoint: the hub is the one HF_ENDPOINT names; without it
// nothing is fetched and the error says what to set.
func TestResolveEndpoint(t *testing.T) {
	fh := newFakeHub(t)
	srv := httptest.NewServer(fh)
	defer srv.Close()
	ctx := context.Background()
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_ENDPOINT", "")
	if _, err := Resolve(ctx, "acme/bin-only", Options{}); err == nil || !strings.Contains(err.Error(), "HF_ENDPOINT") {
		t.Errorf("no HF_ENDPOINT: %v", err)
	}
	t.Setenv("HF_ENDPOINT", "ftp://example.invalid")
	if _, err := Resolve(ctx, "acme/bin-only", Options{}); err == nil || !strings.Contains(err.Error(), "HF_ENDPOINT") {
		t.Errorf("bad HF_ENDPOINT: %v", err)
	}
	t.Setenv("HF_ENDPOINT", srv.URL+"/")
	t.Setenv("HF_TOKEN", "secret-token")
	r, err := Resolve(ctx, "gated/model", Options{})
	if err != nil || r.Spec.WeightsBytes != 64 {
		t.Errorf("HF_ENDPOINT and HF_TOKEN: %v, %d bytes", err, r.Spec.WeightsBytes)
	}
	if a, _ := fh.auth.Load().(string); a != "Bearer secret-token" {
		t.Errorf("Authorization %q", a)
	}
}

// TestResolveLocal: presets, files and paths never reach a hub.
func TestResolveLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "acme", "x")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("testdata/qwen2.5-7b-instruct.config.json")
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	hub := &Hub{Endpoint: "http://127.0.0.1:1"} // a request here fails
	cases := []struct {
		arg  string
		from Origin
		want string // error substring; "" = resolves
	}{
		{"qwen3-8b", FromPreset, ""},
		{cfg, FromFile, ""},
		{filepath.Join(cfg, "config.json"), FromFile, ""},
		{"./no/such/config.json", "", "no such file"},
		{"/no/such/model.gguf", "", "no such file"},
		{"qwen9", "", "closest"},
	}
	for _, tc := range cases {
		r, err := Resolve(ctx, tc.arg, Options{Hub: hub})
		switch {
		case tc.want == "" && (err != nil || r.From != tc.from):
			t.Errorf("%s: %v, from %q; want %q", tc.arg, err, r.From, tc.from)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error saying %q", tc.arg, err, tc.want)
		}
	}
}

// TestResolveGGUFURL: a .gguf URL is read by Range, its header only:
// the spec and tensor bytes equal the local file's, the hub sends a
// small part of a file padded far past its header, and offline the URL
// resolves by its name or is refused.
func TestResolveGGUFURL(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "tiny.gguf")
	if err := tinymodel.WriteFile(local, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	want, err := ReadGGUF(local)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(local)
	padded := append(append([]byte{}, b...), make([]byte, 32<<20)...)
	for _, ignoreRange := range []bool{false, true} {
		fh := &fakeHub{files: map[string][]byte{
			"files/tiny.gguf":                       padded,
			"files/Qwen2.5-7B-Instruct-Q4_K_M.gguf": padded,
		}, ignoreRange: ignoreRange}
		srv := httptest.NewServer(fh)
		ctx := context.Background()
		r, err := Resolve(ctx, srv.URL+"/files/tiny.gguf", Options{})
		if err != nil || r.From != FromURL || r.Spec.WeightsBytes != want.WeightsBytes || r.Spec.Layers != want.Layers || r.Spec.Vocab != want.Vocab {
			t.Errorf("ignoreRange %v: %+v, %v; want %d weight bytes", ignoreRange, r.From, err, want.WeightsBytes)
		}
		if sent := fh.bytesSent.Load(); sent > int64(len(padded))/2 {
			t.Errorf("ignoreRange %v: hub sent %d of %d bytes; want the header, not the weights", ignoreRange, sent, len(padded))
		}
		before := fh.requests.Load()
		r, err = Resolve(ctx, srv.URL+"/files/Qwen2.5-7B-Instruct-Q4_K_M.gguf", Options{Offline: true})
		if err != nil || r.Spec.Name != "qwen2.5-7b" || r.Format != "q4_k_m" || fh.requests.Load() != before {
			t.Errorf("offline URL matching a preset: %+v, %v", r, err)
		}
		if _, err := Resolve(ctx, srv.URL+"/files/tiny.gguf", Options{Offline: true}); !errors.Is(err, ErrUnknownModel) || fh.requests.Load() != before {
			t.Errorf("offline URL: %v", err)
		}
		if _, err := Resolve(ctx, srv.URL+"/files/missing.gguf", Options{}); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("missing URL: %v", err)
		}
		srv.Close()
	}
}

// TestFetchGGUFErrorsHideTheQuery: a signed URL's query, fragment and user
// info never reach an error, whether the server answers badly or the
// connection fails.
func TestFetchGGUFErrorsHideTheQuery(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	const secret = "s3cr3t-signature"
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, base := range []string{srv.URL, closed.URL} {
		u := strings.Replace(base, "http://", "http://user:"+secret+"@", 1) + "/m/tiny.gguf?X-Signature=" + secret + "#" + secret
		_, err := FetchGGUF(context.Background(), u, nil)
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the URL's secret: %v", err)
		}
		if !strings.Contains(err.Error(), "/m/tiny.gguf") {
			t.Errorf("the error does not name the file: %v", err)
		}
	}
}
