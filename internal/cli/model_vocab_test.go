package cli

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// modelHub is a local server that answers as the Hugging Face hub does
// for two repositories, acme/qwen-like-7b and -7b-sim (a process reads
// each id once): its config.json, and one
// safetensors file of a single 1,000,000-byte tensor, served with Range.
func modelHub(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	cfg, err := os.ReadFile("../../modelspec/testdata/qwen2.5-7b-instruct.config.json")
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte(`{"w":{"dtype":"BF16","shape":[500000],"data_offsets":[0,1000000]}}`)
	var st bytes.Buffer
	_ = binary.Write(&st, binary.LittleEndian, uint64(len(hdr)))
	st.Write(hdr)
	files := map[string][]byte{}
	for _, repo := range []string{"acme/qwen-like-7b", "acme/qwen-like-7b-sim"} {
		files["/"+repo+"/resolve/main/config.json"] = cfg
		files["/"+repo+"/resolve/main/model.safetensors"] = st.Bytes()
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, filepath.Base(r.URL.Path), time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestModelVocabulary: plan, run --backend sim and sim serve take the
// same model arguments: a preset, a Hugging Face id that matches one
// (offline, its format suffix read), a config.json, or another id
// fetched from $HF_ENDPOINT; --offline and HF_HUB_OFFLINE=1 refuse the
// last in one line, exit 2.
func TestModelVocabulary(t *testing.T) {
	srv, requests := modelHub(t)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_HUB_OFFLINE", "")
	cfg, _ := filepath.Abs("../../modelspec/testdata/qwen2.5-7b-instruct.config.json")
	plan := []string{"plan", "--gpu", "4090"}
	sim := []string{"run", "--backend", "sim", "--gpu", "rtx4090", "--requests", "2", "--concurrency", "1", "--quiet"}
	// sim serve with a port that cannot be bound ends after resolving the model.
	serve := []string{"sim", "serve", "--as", "vllm", "--gpu", "RTX 4090", "--addr", "256.0.0.1:1"}
	cases := []struct {
		name    string
		cmd     []string
		model   string
		env     string // HF_HUB_OFFLINE
		code    int
		want    string // in stdout (code 0) or stderr
		fetched bool
	}{
		{"plan preset", plan, "qwen2.5-14b", "", 0, "bf16 estimate", false},
		{"plan id matching a preset", plan, "Qwen/Qwen2.5-14B-Instruct-AWQ", "", 0, "awq estimate, the format the model name states", false},
		{"plan GPTQ-Int4 id", plan, "Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4", "1", 0, "gptq estimate", false},
		{"plan config.json", plan, cfg, "", 0, "bf16 estimate", false},
		{"plan hub id", plan, "acme/qwen-like-7b", "", 0, "safetensors headers of 1 file(s) on the hub", true},
		{"plan hub id offline", append(plan, "--offline"), "acme/qwen-like-7b", "", 2, "fetching it from the hub is off", false},
		{"plan hub id HF_HUB_OFFLINE", plan, "acme/qwen-like-7b", "1", 2, "fetching it from the hub is off", false},
		{"plan missing path", plan, "./no/such/config.json", "", 2, "no such file", false},
		{"sim id matching a preset", sim, "Qwen/Qwen2.5-7B-Instruct-AWQ", "1", 0, "", false},
		{"sim config.json", sim, cfg, "", 0, "", false},
		{"sim hub id", sim, "acme/qwen-like-7b-sim", "", 0, "", true},
		{"sim hub id offline", append(sim, "--offline"), "acme/qwen-like-7b", "", 2, "fetching it from the hub is off", false},
		{"sim serve hub id offline", serve, "acme/qwen-like-7b", "1", 2, "fetching it from the hub is off", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_HUB_OFFLINE", tc.env)
			before := requests.Load()
			args := append(append([]string{}, tc.cmd...), "--model", tc.model)
			if tc.cmd[0] == "run" {
				args = append(args, "--out", filepath.Join(t.TempDir(), "r.json"))
			}
			code, stdout, stderr := run(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			got := stdout
			if code != 0 {
				got = stderr
				if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 {
					t.Errorf("error is %d lines: %s", lines, stderr)
				}
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, got)
			}
			if fetched := requests.Load() > before; fetched != tc.fetched {
				t.Errorf("hub asked: %v, want %v", fetched, tc.fetched)
			}
		})
	}
}
