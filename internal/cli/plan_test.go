package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"

	"github.com/servebench/servebench/tinymodel"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/plan-*.golden")

// TestPlanGolden checks plan's text output against golden files
// (go test ./internal/cli -run TestPlanGolden -update-plan).
func TestPlanGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"vllm-qwen2.5-7b-awq-5070ti", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 5070 Ti", "--quant", "awq", "--context", "32768"}},
		{"seed-qwen2.5-7b-awq", []string{"--model", "qwen2.5-7b", "--gpu-gib", "15.92", "--quant", "awq", "--capacity-model", "seed", "--context", "32768"}},
		{"ollama-llama-3.1-8b-q4", []string{"--model", "llama-3.1-8b", "--gpu", "RTX 4060 Ti 16GB", "--quant", "q4_k_m", "--backend", "ollama", "--context", "8192", "--flash-attn"}},
		{"llamacpp-gemma-3-27b", []string{"--model", "gemma-3-27b", "--gpu", "RTX 5090", "--quant", "q4_k_m", "--backend", "llamacpp", "--context", "32768", "--flash-attn"}},
		{"does-not-fit", []string{"--model", "llama-3.1-70b", "--gpu", "RTX 4090"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"plan"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden := filepath.Join("testdata", "plan-"+c.name+".golden")
			testenv.Golden(t, golden, []byte(stdout), *updatePlan, "go test ./internal/cli -run TestPlanGolden -update-plan")
		})
	}
}

// TestPlanVerdictLine: the verdict names blocks, tokens and sequences for
// both dtypes, as the example does.
func TestPlanVerdictLine(t *testing.T) {
	_, stdout, _ := run(t, "plan", "--model", "qwen2.5-7b", "--gpu", "RTX 5070 Ti", "--quant", "awq", "--context", "32768")
	if !strings.Contains(stdout, "qwen2.5-7b on RTX 5070 Ti with vLLM: 10,138 blocks = 162k tokens = 5.0 sequences of 32k with auto KV; 9.2 with fp8") {
		t.Errorf("verdict line missing:\n%s", stdout)
	}
}

// TestPlanJSON checks the --json object: predictions per dtype with the
// issue's fields, inputs, and the planner block in the seed's shape.
func TestPlanJSON(t *testing.T) {
	code, stdout, stderr := run(t, "plan", "--model", "qwen2.5-7b", "--gpu-gib", "15.92", "--quant", "awq", "--capacity-model", "seed", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Inputs      map[string]any   `json:"inputs"`
		Predictions []map[string]any `json:"predictions"`
		Planner     struct {
			GiB         int64                      `json:"gib"`
			OverheadGiB float64                    `json:"overhead_gib"`
			Models      map[string]json.RawMessage `json:"models"`
		} `json:"planner"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(doc.Predictions) != 2 {
		t.Fatalf("%d predictions, want auto and fp8", len(doc.Predictions))
	}
	for _, f := range []string{"kv_cache_dtype", "predicted_tokens", "blocks", "block_size", "weights_gib", "kv_gib", "bytes_per_token", "max_concurrency"} {
		if _, ok := doc.Predictions[0][f]; !ok {
			t.Errorf("prediction lacks %s", f)
		}
	}
	if got := doc.Predictions[0]["predicted_tokens"]; got != float64(143040) {
		t.Errorf("seed auto tokens %v, want 143040", got)
	}
	if got := doc.Predictions[1]["predicted_tokens"]; got != float64(286096) {
		t.Errorf("seed fp8 tokens %v, want 286096", got)
	}
	if doc.Planner.GiB != 1<<30 || doc.Planner.OverheadGiB != 1.5 || doc.Planner.Models["qwen2.5-7b"] == nil {
		t.Errorf("planner block %+v", doc.Planner)
	}
	if doc.Inputs["backend"] != "vllm" || doc.Inputs["capacity_model"] != "seed" || doc.Inputs["gpu_gib"] != 15.92 {
		t.Errorf("inputs %v", doc.Inputs)
	}
}

// TestPlanDeprecatedSeedBackend: --backend seed, from when --backend named
// capacity models, still plans the seed formula, as --backend vllm
// --capacity-model seed does, with one warning: on stderr, and in the
// --json output's warnings.
func TestPlanDeprecatedSeedBackend(t *testing.T) {
	args := []string{"plan", "--model", "qwen2.5-7b", "--gpu-gib", "15.92", "--quant", "awq", "--context", "32768"}
	const warning = "--backend seed is deprecated: use --backend vllm --capacity-model seed"
	_, want, _ := run(t, append(args, "--backend", "vllm", "--capacity-model", "seed")...)
	code, stdout, stderr := run(t, append(args, "--backend", "seed")...)
	if code != 0 || stdout != want {
		t.Errorf("exit %d; --backend seed printed\n%s\nwant what --capacity-model seed prints:\n%s", code, stdout, want)
	}
	if stderr != "warning: "+warning+"\n" {
		t.Errorf("stderr %q, want the one deprecation warning", stderr)
	}
	code, stdout, stderr = run(t, append(args, "--backend", "seed", "--json")...)
	var doc struct {
		Inputs   map[string]any `json:"inputs"`
		Warnings []string       `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	if len(doc.Warnings) == 0 || doc.Warnings[0] != warning || strings.Count(stdout, "deprecated") != 1 {
		t.Errorf("--json warnings %q, want the deprecation once", doc.Warnings)
	}
	if doc.Inputs["backend"] != "vllm" || doc.Inputs["capacity_model"] != "seed" {
		t.Errorf("inputs %v", doc.Inputs)
	}
	if strings.Count(stderr, "deprecated") != 1 {
		t.Errorf("stderr %q, want the deprecation once", stderr)
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.json")
	os.WriteFile(bad, []byte(`{"num_hidden_layers": "many"}`), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown preset", []string{"--model", "qwen2.5-7bb", "--gpu-gib", "16"}, 2, "closest: qwen2.5-72b, qwen2.5-7b"},
		{"no gpu", []string{"--model", "qwen2.5-7b"}, 2, "--gpu-gib"},
		{"unknown gpu", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 9999"}, 2, "unknown --gpu"},
		{"bad dtype", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--kv-dtype", "fp4"}, 2, "--kv-dtype"},
		{"bad quant", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--quant", "int3"}, 2, "--quant"},
		{"bad config field", []string{"--model", bad, "--gpu-gib", "16"}, 2, bad + ": field num_hidden_layers"},
		{"bad utilization", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--gpu-memory-utilization", "1.5"}, 2, "--gpu-memory-utilization"},
		{"bad context", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--context", "-3"}, 2, "--context -3 is out of range: want 1 to 16,777,216"},
		{"server family without a capacity model", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang"}, 2, "unknown --backend \"sglang\" (want vllm, llamacpp or ollama)"},
		{"seed formula of llama.cpp", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--capacity-model", "seed"}, 2, "--capacity-model seed models vLLM only, not llamacpp"},
		{"unknown capacity model", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--capacity-model", "exact"}, 2, "--capacity-model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, append([]string{"plan"}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line containing %q", code, stderr, c.code, c.want)
			}
		})
	}
}

// TestPlanGGUF plans the testbed's own tiny model from its GGUF file as
// Ollama runs it (num_ctx 2048 × 4 slots): Ollama logs "KV self size =
// 2.00 MiB" for it.
func TestPlanGGUF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "plan", "--model", path, "--backend", "ollama", "--gpu-gib", "16", "--context", "2048", "--parallel", "4", "--kv-dtype", "f16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"GGUF tensor sizes", "servebench-tiny (tiny.gguf) on a 16.00 GiB GPU with Ollama: fp16 KV 2.00 MiB for 8,192 cells = 4.0 slots of 2k"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}

// TestPlanGPUAuto: with a GPU the device is used; without one the error
// says so and how to go on.
func TestPlanGPUAuto(t *testing.T) {
	code, stdout, stderr := run(t, "plan", "--model", "qwen3-8b", "--gpu", "auto")
	switch code {
	case 0:
		if !strings.Contains(stdout, "GiB) with vLLM") {
			t.Errorf("no GPU line:\n%s", stdout)
		}
	default:
		if !strings.Contains(stderr, "--gpu auto: no GPU found") || !strings.Contains(stderr, "--gpu-gib") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	}
}
