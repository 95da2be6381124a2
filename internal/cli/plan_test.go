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
		// several GPUs, MoE, hybrid KV, vision, LoRA, SGLang, offload,
		// Ollama's own decision, "what should I run?"
		{"vllm-llama-3.1-70b-awq-tp4-4090", []string{"--model", "llama-3.1-70b", "--gpu", "RTX 4090", "--gpus", "4", "--quant", "awq", "--context", "16384"}},
		{"vllm-qwen2.5-32b-tp2-pp2-mixed", []string{"--model", "qwen2.5-32b", "--gpu", "RTX 4090,RTX 4090,RTX 3090,RTX 3090", "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2", "--quant", "awq", "--context", "32768", "--kv-dtype", "auto"}},
		{"vllm-gpt-oss-120b-tp4-a100", []string{"--model", "gpt-oss-120b", "--gpu", "A100 80GB", "--tensor-parallel-size", "4", "--quant", "mxfp4", "--context", "16384", "--gpu-memory-utilization", "0.8", "--kv-dtype", "auto"}},
		{"vllm-qwen2.5-vl-7b-lora", []string{"--model", "qwen2.5-vl-7b", "--gpu", "A100 40GB", "--quant", "bf16", "--context", "8192", "--enable-lora", "--max-loras", "4", "--max-lora-rank", "64", "--kv-dtype", "auto"}},
		{"sglang-qwq-32b-tp4-l4", []string{"--model", "qwen2.5-32b", "--gpu", "L4", "--gpus", "4", "--backend", "sglang", "--quant", "bf16", "--context", "32768", "--mem-fraction-static", "0.85"}},
		{"llamacpp-mixtral-offload", []string{"--model", "mixtral-8x7b", "--gpu", "RTX 4090", "--backend", "llamacpp", "--quant", "q4_k_m", "--n-gpu-layers", "20", "--ram-gib", "64", "--context", "8192", "--kv-dtype", "f16"}},
		{"llamacpp-llama-3.1-70b-two-gpus", []string{"--model", "llama-3.1-70b", "--gpu", "RTX 4090,RTX 3090", "--backend", "llamacpp", "--quant", "q4_k_m", "--tensor-split", "1,1", "--context", "8192", "--flash-attn", "--kv-dtype", "q8_0"}},
		{"ollama-qwen3-30b-a3b-12gb", []string{"--model", "qwen3-30b-a3b", "--gpu", "RTX 3060", "--backend", "ollama", "--quant", "q4_k_m", "--context", "8192", "--kv-dtype", "f16"}},
		{"recommend-llama-3.1-8b-4090", []string{"--model", "llama-3.1-8b", "--gpu", "RTX 4090", "--gpus", "2", "--context", "32768", "--users", "16"}},
		{"recommend-none", []string{"--model", "llama-3.1-70b", "--gpu", "RTX 3060", "--gpus", "2", "--context", "131072", "--users", "64"}},
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
		{"server family without a capacity model", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "tgi"}, 2, "unknown --backend \"tgi\" (want vllm, sglang, llamacpp or ollama)"},
		{"seed formula of llama.cpp", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--capacity-model", "seed"}, 2, "--capacity-model seed models vLLM only, not llamacpp"},
		{"unknown capacity model", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--capacity-model", "exact"}, 2, "--capacity-model"},
		// these flags: every numeric one against its limit
		{"gpus 0 is the default, -1 is not", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--gpus", "-1"}, 2, "--gpus -1 is out of range: want 1 to 1024"},
		{"gpus above the limit", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--gpus", "5000"}, 2, "--gpus 5000 is out of range"},
		{"tensor parallel negative", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--tensor-parallel-size", "-2"}, 2, "--tensor-parallel-size -2 is out of range"},
		{"pipeline parallel huge", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--pipeline-parallel-size", "1099511627776"}, 2, "--pipeline-parallel-size"},
		{"more stages than layers", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--pipeline-parallel-size", "64"}, 2, "--pipeline-parallel-size 64 is more than the model's 28 layers"},
		{"tp against the GPU list", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090,RTX 3090", "--tensor-parallel-size", "4"}, 2, "tensor parallel 4 × pipeline parallel 1 needs 4"},
		{"tp on llama.cpp", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--tensor-parallel-size", "2"}, 2, "--tensor-parallel-size 2 is for vLLM and SGLang"},
		{"unknown GPU in a list", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090,RTX 9999"}, 2, "unknown --gpu \"RTX 9999\"; closest:"},
		{"list and count", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090,RTX 3090", "--gpus", "2"}, 2, "not both"},
		{"n-gpu-layers -2", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--n-gpu-layers", "-2"}, 2, "--n-gpu-layers -2 is out of range: want 0 to 100000"},
		{"tensor split not a number", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--tensor-split", "1,x"}, 2, "--tensor-split \"1,x\""},
		{"tensor split NaN", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "llamacpp", "--tensor-split", "NaN"}, 2, "--tensor-split"},
		{"tensor split length", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090", "--gpus", "2", "--backend", "llamacpp", "--tensor-split", "1,1,1"}, 2, "--tensor-split 3 values for 2 GPUs"},
		{"ram infinite", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--ram-gib", "Inf"}, 2, "--ram-gib +Inf is out of range"},
		{"ram negative", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--ram-gib", "-4"}, 2, "--ram-gib -4 is out of range"},
		{"lora rank without lora", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--max-lora-rank", "64"}, 2, "need --enable-lora"},
		{"lora rank too high", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--enable-lora", "--max-lora-rank", "4096"}, 2, "--max-lora-rank 4096 is out of range: want 1 to 512"},
		{"max loras zero", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--enable-lora", "--max-loras", "-1"}, 2, "--max-loras -1 is out of range"},
		{"unknown lora module", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--enable-lora", "--lora-target-modules", "q_proj,lm_head"}, 2, "unknown LoRA target module \"lm_head\""},
		{"images negative", []string{"--model", "qwen2.5-vl-7b", "--gpu-gib", "24", "--limit-images", "-3"}, 2, "--limit-images -3 is out of range"},
		{"mem fraction above 1", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang", "--mem-fraction-static", "1.5"}, 2, "--mem-fraction-static 1.5 is out of range: want 0.001 to 1"},
		{"mem fraction NaN", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang", "--mem-fraction-static", "NaN"}, 2, "--mem-fraction-static NaN"},
		{"max total tokens negative", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang", "--max-total-tokens", "-5"}, 2, "--max-total-tokens -5 is out of range"},
		{"chunked prefill -2", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang", "--chunked-prefill-size", "-2"}, 2, "--chunked-prefill-size -2 is out of range: want -1 to"},
		{"cuda graph bs huge", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--backend", "sglang", "--cuda-graph-max-bs", "9999999"}, 2, "--cuda-graph-max-bs 9999999 is out of range"},
		{"users zero", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090", "--context", "4096", "--users", "0"}, 2, "--users 0 is out of range"},
		{"users huge", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090", "--context", "4096", "--users", "99999999"}, 2, "--users 99999999 is out of range"},
		{"users without context", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090", "--users", "4"}, 2, "--users needs --context"},
		{"users over mixed GPUs", []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090,RTX 3090", "--context", "4096", "--users", "4"}, 2, "one kind of GPU"},
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

// TestPlanBreadthJSON: --json carries the per-GPU breakdown, the MoE
// parameter counts and, for plan --users, the ranked configurations with
// the simulator's throughput hook left null.
func TestPlanBreadthJSON(t *testing.T) {
	code, stdout, stderr := run(t, "plan", "--model", "qwen3-30b-a3b", "--gpu", "RTX 4090", "--gpus", "2", "--quant", "bf16", "--context", "32768", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Inputs       map[string]any `json:"inputs"`
		TotalParams  int64          `json:"total_params"`
		ActiveParams int64          `json:"active_params"`
		Predictions  []struct {
			Devices []map[string]any `json:"devices"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TotalParams < 30e9 || doc.ActiveParams > 4e9 || doc.Inputs["tensor_parallel_size"] != 2.0 || len(doc.Predictions[0].Devices) != 2 {
		t.Errorf("total %d active %d inputs %v devices %d", doc.TotalParams, doc.ActiveParams, doc.Inputs, len(doc.Predictions[0].Devices))
	}
	for _, f := range []string{"weights_gib", "kv_gib", "kv_heads", "tp_rank", "layers"} {
		if _, ok := doc.Predictions[0].Devices[1][f]; !ok {
			t.Errorf("device lacks %s: %v", f, doc.Predictions[0].Devices[1])
		}
	}
	code, stdout, stderr = run(t, "plan", "--model", "qwen2.5-7b", "--gpu", "RTX 4090", "--context", "8192", "--users", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rec struct {
		Users  int              `json:"users"`
		Fits   []map[string]any `json:"fits"`
		Source string           `json:"performance_source"`
	}
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Users != 4 || len(rec.Fits) == 0 {
		t.Fatalf("recommendation %+v", rec)
	}
	// throughput and latency come from the simulator, and say so
	if !strings.HasPrefix(rec.Source, "simulated") {
		t.Errorf("performance_source %q, want it to say the figures are simulated", rec.Source)
	}
	for _, f := range []string{"predicted_tok_s", "predicted_ttft_p50_ms", "predicted_tpot_p50_ms"} {
		if v, ok := rec.Fits[0][f].(float64); !ok || !(v > 0) {
			t.Errorf("%s %v, want a simulated figure", f, rec.Fits[0][f])
		}
	}
}
