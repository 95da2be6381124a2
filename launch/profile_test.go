package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		data    string
		wantErr string // substring; "" means success
		check   func(t *testing.T, p *Profile)
	}{
		{
			name: "yaml vllm reference profile",
			file: "vllm.yaml",
			data: `label: vllm-ref
backend: vllm
model: Qwen/Qwen2-VL-2B-Instruct
port: 8001
start_deadline: 90s
max_model_len: 1024
max_num_seqs: 32
max_num_batched_tokens: 8192
gpu_memory_utilization: 0.96
cuda_graphs: true
prefix_caching: false
limit_mm_per_prompt: {image: 1, video: 0}
`,
			check: func(t *testing.T, p *Profile) {
				if p.Backend != backend.VLLM || *p.MaxModelLen != 1024 || *p.GPUMemoryUtilization != 0.96 ||
					*p.Port != 8001 || time.Duration(p.StartDeadline) != 90*time.Second ||
					p.LimitMMPerPrompt["image"] != 1 || *p.PrefixCaching {
					t.Errorf("parsed %+v", p)
				}
			},
		},
		{
			name: "json ollama with seconds deadline",
			file: "o.json",
			data: `{"backend":"ollama","model":"tiny","parallel":4,"start_deadline":30,"env":{"OLLAMA_DEBUG":"1"}}`,
			check: func(t *testing.T, p *Profile) {
				if *p.Parallel != 4 || time.Duration(p.StartDeadline) != 30*time.Second || p.Env["OLLAMA_DEBUG"] != "1" {
					t.Errorf("parsed %+v", p)
				}
			},
		},
		{name: "yaml unknown key", file: "a.yaml", data: "backend: ollama\nmodel: m\nmax_seqs: 4\n", wantErr: `profile a.yaml: line 3: unknown key "max_seqs"`},
		{name: "json unknown key", file: "b.json", data: `{"backend":"ollama","model":"m","paralel":4}`, wantErr: `profile b.json: unknown key "paralel"`},
		{name: "json trailing", file: "b.json", data: `{"backend":"ollama","model":"m"} {}`, wantErr: "trailing data"},
		{name: "json trailing brace", file: "b.json", data: `{"backend":"ollama","model":"m"}}`, wantErr: "profile b.json: trailing data after the profile object at byte 32"},
		{name: "json trailing text", file: "b.json", data: "{\"backend\":\"ollama\",\"model\":\"m\"}\n]x", wantErr: "trailing data"},
		{name: "json integer out of range", file: "b.json", data: `{"backend":"vllm","model":"m","port":99999999999999999999}`, wantErr: "profile b.json: port: number 99999999999999999999 is not an integer in range"},
		{name: "json string for a number", file: "b.json", data: `{"backend":"vllm","model":"m","max_num_seqs":"many"}`, wantErr: "profile b.json: max_num_seqs: string is not an integer in range"},
		{name: "yaml integer out of range", file: "a.yaml", data: "backend: vllm\nmodel: m\nport: 99999999999999999999\n", wantErr: "profile a.yaml: line 3: port: 9999999... is not an integer in range"},
		{name: "max_num_seqs above its bound", file: "a.yaml", data: "backend: vllm\nmodel: m\nmax_num_seqs: 1000000000000\n", wantErr: "max_num_seqs: 1000000000000 is above 65536"},
		{name: "max_model_len above its bound", file: "b.json", data: `{"backend":"vllm","model":"m","max_model_len":1000000000}`, wantErr: "max_model_len: 1000000000 is above 16777216"},
		{name: "json syntax", file: "b.json", data: `{"backend":`, wantErr: "profile b.json:"},
		{name: "empty", file: "e.yaml", data: "", wantErr: "empty profile"},
		{name: "two documents", file: "e.yaml", data: "backend: ollama\n---\nbackend: vllm\n", wantErr: "more than one YAML document"},
		{name: "missing backend", file: "m.yaml", data: "model: x\n", wantErr: "backend: missing"},
		{name: "unlaunchable backend", file: "m.yaml", data: "backend: tgi\nmodel: x\n", wantErr: `backend: "tgi" cannot be launched`},
		{name: "missing model", file: "m.yaml", data: "backend: vllm\n", wantErr: "model: missing"},
		{name: "command as shell string", file: "m.yaml", data: "backend: vllm\nmodel: x\ncommand: [\"vllm serve x\"]\n", wantErr: "looks like a shell string"},
		{name: "command scalar", file: "m.yaml", data: "backend: vllm\nmodel: x\ncommand: vllm serve x\n", wantErr: "line 3"},
		{name: "bad duration", file: "m.yaml", data: "backend: vllm\nmodel: x\nstart_deadline: soon\n", wantErr: `bad duration "soon"`},
		{name: "bad port", file: "m.yaml", data: "backend: vllm\nmodel: x\nport: 70000\n", wantErr: "port: 70000 out of range"},
		{name: "bad utilization", file: "m.yaml", data: "backend: vllm\nmodel: x\ngpu_memory_utilization: 1.5\n", wantErr: "gpu_memory_utilization: 1.5"},
		{name: "zero parallel", file: "m.yaml", data: "backend: ollama\nparallel: 0\n", wantErr: "parallel: 0 must be positive"},
		{name: "tensor parallel above its bound", file: "t.yaml", data: "backend: vllm\nmodel: m\ntensor_parallel_size: 128\n", wantErr: "tensor_parallel_size: 128 is above 64"},
		{name: "kv dtype with a path", file: "m.yaml", data: "backend: ollama\nkv_cache_dtype: ../q8_0\n", wantErr: `kv_cache_dtype: bad value "../q8_0"`},
		{name: "bad label", file: "m.yaml", data: "backend: ollama\nlabel: a/b\n", wantErr: `label: "a/b"`},
		{name: "unset variable", file: "m.yaml", data: "backend: ollama\ncommand: [\"${SERVEBENCH_TEST_SURELY_UNSET}/ollama\", serve]\n", wantErr: "SERVEBENCH_TEST_SURELY_UNSET is not set"},
		{
			name: "variable expanded",
			file: "m.yaml",
			data: "backend: ollama\ncommand: [\"${SERVEBENCH_TEST_BIN_DIR}/ollama\", serve]\nenv: {X: \"$SERVEBENCH_TEST_BIN_DIR\"}\n",
			check: func(t *testing.T, p *Profile) {
				if p.Command[0] != "/opt/x/ollama" || p.Env["X"] != "/opt/x" {
					t.Errorf("expanded to %q, %q", p.Command, p.Env)
				}
			},
		},
	}
	t.Setenv("SERVEBENCH_TEST_BIN_DIR", "/opt/x")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.file, []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}

func TestLoadResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	os.WriteFile(path, []byte("backend: ollama\ncommand: [./bin/ollama, serve]\nmodels_dir: models\n"), 0o644)
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Command[0] != filepath.Join(dir, "bin/ollama") || p.ModelsDir != filepath.Join(dir, "models") {
		t.Errorf("command %q models_dir %q", p.Command[0], p.ModelsDir)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestLabels(t *testing.T) {
	i := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	ps := []*Profile{
		{Backend: backend.LlamaCpp, KVCacheDtype: s("q8_0")},
		{Backend: backend.VLLM, KVCacheDtype: s("auto")},
		{Backend: backend.VLLM, KVCacheDtype: s("fp8"), MaxNumSeqs: i(32)},
		{Backend: backend.Ollama, Parallel: i(4)},
		{Backend: backend.Ollama, Parallel: i(4)},
		{Backend: backend.Ollama, Label: "mine"},
		{Backend: backend.Ollama, Label: "ollama-np4-2"},
		{Backend: backend.VLLM, TensorParallelSize: i(2)},
	}
	want := []string{"llamacpp-q8kv", "vllm-fp16kv", "vllm-fp8kv-seqs32", "ollama-np4", "ollama-np4-2", "mine", "ollama-np4-2-2", "vllm-tp2"}
	got := Labels(ps)
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("label %d = %q, want %q", k, got[k], want[k])
		}
	}
}

// FuzzParse checks that no profile file, however malformed, panics the
// parser, and that every error is one line naming the file.
func FuzzParse(f *testing.F) {
	f.Add("p.yaml", "backend: vllm\nmodel: m\nmax_model_len: 1024\nlimit_mm_per_prompt: {image: 1}\n")
	f.Add("p.json", `{"backend":"ollama","model":"m","parallel":4,"start_deadline":"2m"}`)
	f.Add("p.yaml", "backend: [\n")
	f.Add("p.yaml", "label: x\nbackend: llamacpp\nmodel: m.gguf\nflash_attention: true\nkv_cache_dtype: q8_0\n")
	f.Add("p.json", `{"port": -1}`)
	f.Fuzz(func(t *testing.T, name, data string) {
		if name == "" {
			name = "p.yaml"
		}
		p, err := Parse(name, []byte(data))
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the file %q", err, name)
			}
			return
		}
		if p.Backend == "" {
			t.Errorf("accepted a profile without backend")
		}
	})
}
