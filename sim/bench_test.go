package sim

import (
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/cputime"
	"github.com/servebench/servebench/load"
)

// BenchmarkSimulate measures simulation speed in virtual time: output
// tokens simulated per second of the process's CPU time (user + system,
// garbage collection included; wall time where the OS gives no rusage),
// for levels of the reference sweep's shapes and a large batch. The goal
// is at least 1,000,000 output tokens per CPU-second.
func BenchmarkSimulate(b *testing.B) {
	cases := []struct {
		name    string
		spec    Spec
		prompt  int
		clients int
	}{
		{"vllm-chat-c1", Spec{Backend: backend.VLLM, GPU: "RTX 5070 Ti", Model: "Qwen/Qwen2.5-7B-Instruct-AWQ"}, 482, 1},
		{"vllm-chat-c16", Spec{Backend: backend.VLLM, GPU: "RTX 5070 Ti", Model: "Qwen/Qwen2.5-7B-Instruct-AWQ"}, 482, 16},
		{"vllm-long-c48", Spec{Backend: backend.VLLM, GPU: "RTX 5070 Ti", Model: "Qwen/Qwen2.5-7B-Instruct-AWQ"}, 3512, 48},
		{"vllm-chat-c256", Spec{Backend: backend.VLLM, GPU: "H100 80GB", Model: "qwen2.5-7b"}, 482, 256},
		{"vllm-chat-c256-tp4", Spec{Backend: backend.VLLM, GPU: "H100 80GB", Model: "qwen2.5-7b", TensorParallel: 4}, 482, 256},
		{"llamacpp-chat-c16", Spec{Backend: backend.LlamaCpp, GPU: "RTX 5070 Ti", Model: "qwen2.5-7b", Quant: "q4_k_m", Server: Server{Slots: 8, SlotContext: 4096}}, 482, 16},
		{"ollama-chat-c4", Spec{Backend: backend.Ollama, GPU: "RTX 5070 Ti", Model: "qwen2.5:7b-instruct"}, 482, 4},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			cfg, err := c.spec.Config()
			if err != nil {
				b.Fatal(err)
			}
			w := Workload{PromptTokens: c.prompt, OutputTokens: 256}
			l := Load{Method: load.Pool, Concurrency: c.clients, Requests: max(48, 3*c.clients), Seed: 1}
			tokens := 0
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				e, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				lr, err := RunLevel(e, w, l)
				if err != nil {
					b.Fatal(err)
				}
				tokens += *lr.Level.OutputTokens
			}
			sec := (cputime.Process() - cpu0).Seconds()
			if sec <= 0 {
				sec = b.Elapsed().Seconds()
			}
			b.ReportMetric(float64(tokens)/sec, "out_tokens/cpu_s")
		})
	}
}
