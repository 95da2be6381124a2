package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlanFlagLimits (item 5): every numeric flag of plan and
// calibrate is checked against its written limit — finite, within range —
// with one error line naming the flag and the range, exit 2. Before, plan
// printed negative weights for --weights-gib 1e308 and "fits (up to
// −9,223,372,036,854,775,808 cells)" for --parallel 1099511627776, with
// exit 0.
func TestPlanFlagLimits(t *testing.T) {
	base := []string{"--model", "qwen2.5-7b", "--gpu", "RTX 4090"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"weights 1e308", []string{"--weights-gib", "1e308"}, "--weights-gib 1e+308 is out of range: want 0.001 to 100,000"},
		{"weights NaN", []string{"--weights-gib", "NaN"}, "--weights-gib NaN is out of range"},
		{"weights +Inf", []string{"--weights-gib", "+Inf"}, "--weights-gib +Inf is out of range"},
		{"weights negative", []string{"--weights-gib", "-2"}, "--weights-gib -2 is out of range"},
		{"parallel 2^40", []string{"--backend", "ollama", "--parallel", "1099511627776"}, "--parallel 1099511627776 is out of range: want 1 to 4,096"},
		{"parallel negative", []string{"--backend", "llamacpp", "--parallel", "-1"}, "--parallel -1 is out of range"},
		{"context 17M", []string{"--context", "17000000"}, "--context 17000000 is out of range: want 1 to 16,777,216"},
		{"gpu memory 1e6", []string{"--gpu-gib", "1e6"}, "--gpu-gib 1000000 is out of range: want 0.001 to 100,000"},
		{"gpu memory NaN", []string{"--gpu-gib", "NaN"}, "--gpu-gib NaN is out of range"},
		{"utilization 2", []string{"--gpu-memory-utilization", "2"}, "--gpu-memory-utilization 2 is out of range: want 0.001 to 1"},
		{"utilization NaN", []string{"--gpu-memory-utilization", "NaN"}, "--gpu-memory-utilization NaN is out of range"},
		{"block size", []string{"--block-size", "1000000"}, "--block-size 1000000 is out of range: want 1 to 65,536"},
		{"max num seqs", []string{"--max-num-seqs", "-5"}, "--max-num-seqs -5 is out of range"},
		{"max batched tokens", []string{"--max-num-batched-tokens", "99999999999"}, "--max-num-batched-tokens 99999999999 is out of range"},
		{"ubatch huge", []string{"--backend", "llamacpp", "--ubatch", "100000000"}, "--ubatch 100000000 is out of range"},
		{"vllm version part", []string{"--vllm-version", "99999999999999999999999.1.0"}, "part 1 is above 9999"},
		{"vllm version patch", []string{"--vllm-version", "0.21.10000"}, "part 3 is above 9999"},
	}
	for _, cmd := range []string{"plan", "calibrate"} {
		for _, c := range cases {
			t.Run(cmd+"/"+c.name, func(t *testing.T) {
				args := append([]string{cmd}, base...)
				if cmd == "calibrate" {
					args = append(args, "--log", logFixture("vllm-v1-0.10.1.1.log"))
				}
				code, stdout, stderr := run(t, append(args, c.args...)...)
				if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, c.want)
				}
				if stdout != "" {
					t.Errorf("printed a plan for a bad flag:\n%s", stdout)
				}
			})
		}
	}
	t.Run("limits at their edge plan without overflow", func(t *testing.T) {
		for _, b := range []string{"vllm", "llamacpp", "ollama"} {
			code, stdout, stderr := run(t, "plan", "--model", "deepseek-v3", "--backend", b, "--gpu-gib", "100000", "--parallel", "4096",
				"--context", "16777216", "--max-num-seqs", "65536", "--max-num-batched-tokens", "16777216", "--ubatch", "16777216", "--block-size", "65536")
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", b, code, stderr)
			}
			if negative.MatchString(stdout) || strings.Contains(stdout, "−") {
				t.Errorf("%s: a negative figure at the limits:\n%s", b, stdout)
			}
		}
	})
	t.Run("help lists the limits", func(t *testing.T) {
		for _, cmd := range []string{"plan", "calibrate"} {
			_, stdout, _ := run(t, cmd, "--help")
			for _, want := range []string{"1 to 4,096", "1 to 16,777,216", "0.001 to 100,000", "0.001 to 1,", "1 to 65,536", "each part 0 to 9999"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%s --help lacks %q", cmd, want)
				}
			}
		}
	})
}

// negative matches a negative figure in plan's text output.
var negative = regexp.MustCompile(`(^|[\s(])-[0-9]`)

// TestPlanUnclearErrors (item 13): an empty or wrong-magic
// .gguf is named as such, not "not valid JSON"; a missing --calibration
// file is an error (it was ignored with exit 0); an overlong
// --vllm-version is an error (it printed as 9223372036854775807.0.0).
func TestPlanUnclearErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	wrong := filepath.Join(dir, "wrong.gguf")
	os.WriteFile(wrong, []byte("PK\x03\x04 a zip file"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"empty gguf", []string{"--model", empty, "--gpu-gib", "16"}, "empty.gguf: not a GGUF file: the file is empty"},
		{"wrong magic", []string{"--model", wrong, "--gpu-gib", "16"}, `wrong.gguf: not a GGUF file: it starts with "PK\x03\x04", not the magic "GGUF"`},
		{"missing calibration", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--calibration", filepath.Join(dir, "nonexistent.json")}, "--calibration: calibration file " + filepath.Join(dir, "nonexistent.json") + ": no such file or directory"},
		{"overlong version", []string{"--model", "qwen2.5-7b", "--gpu-gib", "16", "--vllm-version", "9223372036854775808.0"}, "--vllm-version: vLLM version \"9223372036854775808.0\": part 1 is above 9999"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"plan"}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, c.want)
			}
			if strings.Contains(stderr, "JSON") || strings.Contains(stdout, "9223372036854775807") {
				t.Errorf("misleading output: %q %q", stdout, stderr)
			}
		})
	}
	// calibrate --fit still creates a calibration file that is missing.
	cal := filepath.Join(dir, "new-cal.json")
	code, _, stderr := run(t, "calibrate", "--backend", "vllm", "--log", logFixture("vllm-v1-0.10.1.1.log"), "--fit", "--calibration", cal,
		"--model", "qwen2-7b", "--gpu", "A100 80GB", "--gpu-memory-utilization", "0.25", "--weights-gib", "14.2488", "--context", "16384")
	if code != 0 {
		t.Fatalf("calibrate --fit with a new file: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(cal); err != nil {
		t.Fatalf("calibrate --fit did not create the file: %v", err)
	}
}
