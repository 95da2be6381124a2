package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/cputime"
)

// BenchmarkRunSim measures run --backend sim through the whole run path
// (flags, workload, load.Sweep on simrun's virtual clock, the records
// file, the report document): output tokens simulated per second of the
// process's CPU time (user + system; wall time where the OS gives none).
// The goal is at least 1,000,000 output tokens per CPU-second.
//
//	go test ./internal/cli -run '^$' -bench RunSim -benchtime 5x -count 5
func BenchmarkRunSim(b *testing.B) {
	cases := []struct {
		name string
		args []string
	}{
		{"vllm-chat-pool", []string{"--scenario", "chat", "--concurrency", "1,4,16,48", "--requests", "192"}},
		{"vllm-text-rate", []string{"--method", "rate", "--rate", "5,20", "--requests", "384"}},
		{"llamacpp-chat-pool", []string{"--scheduler", "llamacpp", "--quant", "q4_k_m", "--parallel", "8", "--context", "32768", "--scenario", "chat", "--concurrency", "1,4,16", "--requests", "192"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			out, recs := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
			args := append([]string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--quiet", "--out", out, "--records", recs}, c.args...)
			tokens := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				if _, stderr, err := cliRun(context.Background(), args...); err != nil {
					b.Fatalf("%v: %s", err, stderr)
				}
				for _, l := range readDoc(b, out).Runs[0].Levels {
					tokens += *l.OutputTokens
				}
			}
			sec := (cputime.Process() - cpu0).Seconds()
			if sec <= 0 {
				sec = b.Elapsed().Seconds()
			}
			b.ReportMetric(float64(tokens)/sec, "out_tokens/cpu_s")
		})
	}
}
