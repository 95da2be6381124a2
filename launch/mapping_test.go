package launch

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"

	"github.com/servebench/servebench/backend"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func ptr[T any](v T) *T { return &v }

// Flag spellings checked against the servers' documentation: vLLM "Engine
// Arguments" (docs.vllm.ai/en/latest/configuration/engine_args.html),
// llama.cpp tools/server/README.md ("-c, --ctx-size", "-np, --parallel",
// "-fa, --flash-attn [on|off|auto]", "-ctk/-ctv", "--metrics", "--port"),
// Ollama docs/faq.md (OLLAMA_NUM_PARALLEL, OLLAMA_KV_CACHE_TYPE,
// OLLAMA_FLASH_ATTENTION, OLLAMA_CONTEXT_LENGTH, OLLAMA_HOST, OLLAMA_MODELS).
func TestBuildMapping(t *testing.T) {
	tests := []struct {
		name     string
		p        Profile
		wantArgv []string
		wantEnv  []string
		wantErr  string
	}{
		{
			name: "vllm reference profile",
			p: Profile{Backend: backend.VLLM, Model: "Qwen/Qwen2-VL-2B-Instruct", Port: ptr(8001),
				MaxModelLen: ptr(1024), MaxNumSeqs: ptr(32), MaxNumBatchedTokens: ptr(8192),
				GPUMemoryUtilization: ptr(0.96), CUDAGraphs: ptr(true), PrefixCaching: ptr(false),
				LimitMMPerPrompt: map[string]int{"video": 0, "image": 1}},
			wantArgv: []string{"vllm", "serve", "Qwen/Qwen2-VL-2B-Instruct", "--port", "8001",
				"--max-model-len", "1024", "--max-num-seqs", "32", "--max-num-batched-tokens", "8192",
				"--gpu-memory-utilization", "0.96", "--no-enable-prefix-caching",
				"--limit-mm-per-prompt", `{"image":1,"video":0}`},
		},
		{
			name: "vllm eager fp8 prefix caching on",
			p: Profile{Backend: backend.VLLM, Model: "m", CUDAGraphs: ptr(false), PrefixCaching: ptr(true),
				KVCacheDtype: ptr("fp8"), Env: map[string]string{"HF_HOME": "/hf"}},
			wantArgv: []string{"vllm", "serve", "m", "--port", "8000", "--enforce-eager", "--enable-prefix-caching", "--kv-cache-dtype", "fp8"},
			wantEnv:  []string{"HF_HOME=/hf"},
		},
		{
			name:     "vllm tensor parallel",
			p:        Profile{Backend: backend.VLLM, Model: "m", TensorParallelSize: ptr(2)},
			wantArgv: []string{"vllm", "serve", "m", "--port", "8000", "--tensor-parallel-size", "2"},
		},
		{
			name:    "vllm tensor parallel already in command",
			p:       Profile{Backend: backend.VLLM, Model: "m", Command: []string{"vllm", "serve", "m", "-tp", "4"}, TensorParallelSize: ptr(2)},
			wantErr: "command: -tp is set by servebench",
		},
		{name: "llamacpp tensor parallel", p: Profile{Backend: backend.LlamaCpp, Model: "m", TensorParallelSize: ptr(2)}, wantErr: "tensor_parallel_size is not a llamacpp setting (llama-server splits layers over GPUs"},
		{name: "ollama tensor parallel", p: Profile{Backend: backend.Ollama, TensorParallelSize: ptr(2)}, wantErr: "tensor_parallel_size is not a ollama setting"},
		{name: "vllm parallel", p: Profile{Backend: backend.VLLM, Model: "m", Parallel: ptr(4)}, wantErr: "parallel is not a vllm setting (use max_num_seqs)"},
		{name: "vllm context_length", p: Profile{Backend: backend.VLLM, Model: "m", ContextLength: ptr(4)}, wantErr: "context_length is not a vllm setting"},
		{
			name:    "vllm flag already in command",
			p:       Profile{Backend: backend.VLLM, Model: "m", Command: []string{"vllm", "serve", "m", "--max-model-len=2048"}, MaxModelLen: ptr(1024)},
			wantErr: "command: --max-model-len=2048 is set by servebench",
		},
		{
			name: "llamacpp q8 kv long context",
			p: Profile{Backend: backend.LlamaCpp, Model: "/models/q.gguf", ContextLength: ptr(32768), Parallel: ptr(4),
				FlashAttention: ptr(true), KVCacheDtype: ptr("q8_0")},
			wantArgv: []string{"llama-server", "-m", "/models/q.gguf", "-c", "32768", "-np", "4", "-fa", "on",
				"-ctk", "q8_0", "-ctv", "q8_0", "--metrics", "--port", "8080"},
		},
		{
			name: "llamacpp own command flash attention off",
			p: Profile{Backend: backend.LlamaCpp, Model: "m.gguf", Command: []string{"/opt/llama-server", "-m", "m.gguf", "-ngl", "99"},
				FlashAttention: ptr(false), Port: ptr(9000)},
			wantArgv: []string{"/opt/llama-server", "-m", "m.gguf", "-ngl", "99", "-fa", "off", "--metrics", "--port", "9000"},
		},
		{name: "llamacpp max_num_seqs", p: Profile{Backend: backend.LlamaCpp, Model: "m", MaxNumSeqs: ptr(4)}, wantErr: "max_num_seqs is not a llamacpp setting (use parallel (-np))"},
		{name: "llamacpp gpu util", p: Profile{Backend: backend.LlamaCpp, Model: "m", GPUMemoryUtilization: ptr(0.9)}, wantErr: "gpu_memory_utilization is not a llamacpp setting"},
		{
			name:    "llamacpp long spelling in command",
			p:       Profile{Backend: backend.LlamaCpp, Model: "m", Command: []string{"llama-server", "--ctx-size", "8192"}, ContextLength: ptr(4096)},
			wantErr: "command: --ctx-size is set by servebench",
		},
		{
			name: "ollama all knobs",
			p: Profile{Backend: backend.Ollama, Model: "tiny", Port: ptr(11500), Parallel: ptr(4), KVCacheDtype: ptr("q8_0"),
				FlashAttention: ptr(true), ContextLength: ptr(8192), ModelsDir: "/models"},
			wantArgv: []string{"ollama", "serve"},
			wantEnv: []string{"OLLAMA_CONTEXT_LENGTH=8192", "OLLAMA_FLASH_ATTENTION=1", "OLLAMA_HOST=127.0.0.1:11500",
				"OLLAMA_KV_CACHE_TYPE=q8_0", "OLLAMA_MODELS=/models", "OLLAMA_NUM_PARALLEL=4"},
		},
		{
			name:     "ollama flash attention off default port",
			p:        Profile{Backend: backend.Ollama, Model: "tiny", FlashAttention: ptr(false)},
			wantArgv: []string{"ollama", "serve"},
			wantEnv:  []string{"OLLAMA_FLASH_ATTENTION=0", "OLLAMA_HOST=127.0.0.1:11434"},
		},
		{name: "ollama max_num_seqs", p: Profile{Backend: backend.Ollama, MaxNumSeqs: ptr(4)}, wantErr: "max_num_seqs is not a ollama setting (use parallel)"},
		{
			name:    "ollama env conflicts with knob",
			p:       Profile{Backend: backend.Ollama, Parallel: ptr(2), Env: map[string]string{"OLLAMA_NUM_PARALLEL": "4"}},
			wantErr: "env: OLLAMA_NUM_PARALLEL is set by servebench",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Path = "p.yaml"
			s, err := Build(&tc.p, "x")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Argv, tc.wantArgv) {
				t.Errorf("argv\n got %q\nwant %q", s.Argv, tc.wantArgv)
			}
			if !reflect.DeepEqual(s.Env, tc.wantEnv) {
				t.Errorf("env\n got %q\nwant %q", s.Env, tc.wantEnv)
			}
		})
	}
}

func TestBuildDefaults(t *testing.T) {
	s, err := Build(&Profile{Backend: backend.Ollama, Port: ptr(0)}, "o")
	if err != nil {
		t.Fatal(err)
	}
	if s.Port == 0 || s.BaseURL != "http://127.0.0.1:"+strconv.Itoa(s.Port) || s.HealthURL != s.BaseURL+"/api/version" {
		t.Errorf("port %d base %s health %s", s.Port, s.BaseURL, s.HealthURL)
	}
	if s.StartDeadline.Minutes() != 2 || s.StopGrace != DefaultStopGrace {
		t.Errorf("deadline %s grace %s", s.StartDeadline, s.StopGrace)
	}
}

func TestEnvironRemovesControlledInherited(t *testing.T) {
	t.Setenv("OLLAMA_NUM_PARALLEL", "9")
	t.Setenv("OLLAMA_DEBUG", "1")
	s, err := Build(&Profile{Backend: backend.Ollama, KVCacheDtype: ptr("f16")}, "o")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Unset, []string{"OLLAMA_NUM_PARALLEL"}) {
		t.Errorf("unset = %q", s.Unset)
	}
	env := strings.Join(s.Environ(os.Environ()), "\n")
	if strings.Contains(env, "OLLAMA_NUM_PARALLEL") || !strings.Contains(env, "OLLAMA_DEBUG=1") || !strings.Contains(env, "OLLAMA_KV_CACHE_TYPE=f16") {
		t.Errorf("environ:\n%s", env)
	}
}

func TestDryRunGolden(t *testing.T) {
	tests := []struct {
		name string
		p    Profile
	}{
		{"vllm", Profile{Backend: backend.VLLM, Model: "Qwen/Qwen2-VL-2B-Instruct", Port: ptr(8001),
			MaxModelLen: ptr(1024), MaxNumSeqs: ptr(32), MaxNumBatchedTokens: ptr(8192),
			GPUMemoryUtilization: ptr(0.96), CUDAGraphs: ptr(true), PrefixCaching: ptr(false),
			LimitMMPerPrompt: map[string]int{"image": 1, "video": 0},
			Env:              map[string]string{"HF_TOKEN": "hf_secret_value", "CUDA_VISIBLE_DEVICES": "1"}}},
		{"llamacpp", Profile{Backend: backend.LlamaCpp, Model: "/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf",
			ContextLength: ptr(32768), Parallel: ptr(4), FlashAttention: ptr(true), KVCacheDtype: ptr("q8_0")}},
		{"ollama", Profile{Backend: backend.Ollama, Model: "tiny", Port: ptr(11500), Parallel: ptr(4),
			ModelsDir: "/var/lib/ollama models"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OLLAMA_NUM_PARALLEL", "OLLAMA_HOST", "OLLAMA_MODELS", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH"} {
				if _, ok := os.LookupEnv(k); ok {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			s, err := Build(&tc.p, tc.p.DefaultLabel())
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteDryRun(&buf, s); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "hf_secret_value") {
				t.Fatal("dry run printed a secret")
			}
			golden(t, filepath.Join("testdata", "dryrun-"+tc.name+".golden"), buf.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	testenv.Golden(t, path, got, *update, "go test ./launch -update")
}

// TestDryRunRedactsSecretFlags: an API key given in the profile's command
// (both "--api-key K" and "--api-key=K") never reaches the dry-run output.
func TestDryRunRedactsSecretFlags(t *testing.T) {
	p := Profile{Backend: backend.VLLM, Model: "m", Path: "p.yaml",
		Command: []string{"vllm", "serve", "m", "--api-key", "sk-first-secret", "--hf-token=hf_second_secret"}}
	s, err := Build(&p, "x")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDryRun(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"sk-first-secret", "hf_second_secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("dry run printed %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "[4] <redacted>") || !strings.Contains(out, "--hf-token=<redacted>") {
		t.Errorf("secret flags not shown redacted:\n%s", out)
	}
	if s.Argv[4] != "sk-first-secret" {
		t.Errorf("redaction changed the argv the server gets: %q", s.Argv)
	}
}
