package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkCapacitySim4090: the simulated answer to the 4090 question
// (how many chat users does one RTX 4090 serve Qwen2.5-14B AWQ to, at a
// 4,096-token context, on vLLM) — a whole capacity search in virtual
// time; it should cost under a second of CPU.
func BenchmarkCapacitySim4090(b *testing.B) {
	out := filepath.Join(b.TempDir(), "capacity.json")
	for b.Loop() {
		code, _, stderr := runB(b, "find", "--by", "users", "--slo", "ttft_p95=1s,tpot_p95=100ms", "--backend", "sim", "--gpu", "RTX 4090",
			"--model", "qwen2.5-14b", "--quant", "awq", "--context", "4096", "--quiet", "--out", out)
		if code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}

// runB is run for a benchmark.
func runB(b *testing.B, args ...string) (code int, stdout, stderr string) {
	b.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, &out, &errb)
	return ExitCode(err, &errb), out.String(), errb.String()
}
