package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateExitCodes runs the CI gates on the reference examples: exit 1
// with one line per broken figure on stderr, 0 when nothing breaks, 2
// for a file that cannot be read or a bad flag.
func TestGateExitCodes(t *testing.T) {
	ex := filepath.Join(repoRoot, "examples", "vllm-text-image-example.json")
	sweep := filepath.Join(repoRoot, "examples", "multi-backend-sweep.json")
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		lines []string // stderr lines before the error's own, in order
	}{
		{"regressed", []string{"compare", ex + "#text", ex + "#one_image_per_request", "--max-regression", "5%"}, 1,
			[]string{"servebench: regression: text c=4 throughput tok/s: 486.9 → 262.6 (-46.1%)", "servebench: regression: text c=4 mean TPOT ms (batch, incl. prefill): 8.215 → 15.23 (+85.4%)"}},
		{"significant only", []string{"compare", ex + "#text", ex + "#one_image_per_request", "--max-regression", "5%", "--significant-only"}, 1,
			[]string{"servebench: regression: text c=4 throughput tok/s: 486.9 → 262.6 (-46.1%)"}},
		{"improved", []string{"compare", ex + "#one_image_per_request", ex + "#text", "--max-regression", "5%"}, 0, nil},
		{"no gate", []string{"compare", ex + "#text", ex + "#one_image_per_request"}, 0, nil},
		{"unreadable", []string{"compare", missing, ex, "--max-regression", "5%"}, 2, nil},
		{"bad threshold", []string{"compare", ex, ex, "--max-regression", "lots"}, 2, nil},
		{"significant alone", []string{"compare", ex, ex, "--significant-only"}, 2, nil},
		{"slo holds", []string{"report", sweep, "--slo", "ttft_p95=1000s", "--fail-on-breach"}, 0, nil},
		{"slo breached", []string{"report", sweep, "--slo", "ttft_p95=1ms", "--fail-on-breach"}, 1, []string{"servebench: slo breach: "}},
		{"breach without slo", []string{"report", sweep, "--fail-on-breach"}, 2, nil},
		{"slo unreadable", []string{"report", missing, "--slo", "ttft_p95=1s", "--fail-on-breach"}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := cliRun(context.Background(), tc.args...)
			var errLine strings.Builder
			if code := ExitCode(err, &errLine); code != tc.code {
				t.Fatalf("exit %d, want %d (%v)\n%s", code, tc.code, err, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if stderr == "" {
				lines = nil
			}
			if tc.code == 1 && (len(lines) < len(tc.lines) || strings.Count(errLine.String(), "\n") != 1) {
				t.Fatalf("stderr %q, error %q; want %d breach lines and one error line", stderr, errLine.String(), len(tc.lines))
			}
			if tc.code == 1 && tc.args[0] == "compare" && len(lines) != len(tc.lines) {
				t.Errorf("stderr has %d lines, want %d: %q", len(lines), len(tc.lines), stderr)
			}
			for i, want := range tc.lines {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q; want %q", i, lines[i], want)
				}
			}
		})
	}
}

// TestReportReadsVLLMResults: two vLLM --save-result files of one label
// are one run of two levels, with the notes on what they lack; compare
// takes one as a side.
func TestReportReadsVLLMResults(t *testing.T) {
	dir := filepath.Join(repoRoot, "report", "testdata", "foreign")
	c4, c16 := filepath.Join(dir, "vllm-bench-c4.json"), filepath.Join(dir, "vllm-bench-c16.json")
	out, stderr, err := cliRun(context.Background(), "report", "--format", "csv", c4, c16)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], ",qwen-h100,sweep,vllm-bench,") || !strings.Contains(lines[2], ",16,") {
		t.Fatalf("csv:\n%s", out)
	}
	if !strings.Contains(stderr, "TTFT and E2E start before the connection is opened") || !strings.Contains(stderr, "lacks [") {
		t.Errorf("stderr lacks the vLLM notes:\n%s", stderr)
	}
	if _, stderr, err := cliRun(context.Background(), "compare", c4, c4, "--max-regression", "5%"); err != nil {
		t.Errorf("compare a vLLM file with itself: %v\n%s", err, stderr)
	}
}
