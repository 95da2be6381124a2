package cli

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/servebench/servebench/launch"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/serverlog"
	"github.com/servebench/servebench/tinymodel"
)

// TestCalibrationPathsAgree holds servebench calibrate and run --profile's
// calibration (launch.Calibrate, which run_profile.go calls with the
// launched server's log) to the same record for the same log and the same
// server configuration, given once as flags and once as a profile. Both
// name the log by the file name they are given; a profile's unset knobs
// and calibrate's flags not given are taken from the log alike (the vLLM
// V0 log's total GPU memory replaces the device's 80 GiB, as it does when
// calibrate has no --gpu).
func TestCalibrationPathsAgree(t *testing.T) {
	tiny := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(tiny, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, log string
		flags     []string
		profile   string
		deviceGiB float64
	}{
		{"Ollama 0.6.5 testbed (slots, context and KV type from the log)", "ollama-0.6.5-testbed.log",
			[]string{"--backend", "ollama", "--model", tiny, "--gpu-gib", "16"},
			"backend: ollama\nmodel: servebench-tiny\nplan_model: " + tiny + "\n", 16},
		{"llama.cpp KV self size (Mistral-7B, n_ctx 1024)", "llamacpp-sycl-kvself.log",
			[]string{"--backend", "llamacpp", "--model", "mistral-7b", "--gpu-gib", "15.9"},
			"backend: llamacpp\nmodel: /models/mistral-7b.gguf\nplan_model: mistral-7b\n", 15.9},
		{"vLLM 0.21 (utilization, version, CUDA-graph charge from the log)", "vllm-0.21-lmcache-3430.log",
			[]string{"--backend", "vllm", "--model", "qwen3-8b", "--gpu-gib", "23.55", "--context", "16384"},
			"backend: vllm\nmodel: Qwen/Qwen3-8B\nplan_model: qwen3-8b\nmax_model_len: 16384\n", 23.55},
		{"vLLM V0 (blocks × block size; GPU memory from the log)", "vllm-v0-phi4.log",
			[]string{"--backend", "vllm", "--model", "phi-4", "--context", "2048"},
			"backend: vllm\nmodel: microsoft/phi-4\nplan_model: phi-4\nmax_model_len: 2048\n", 80},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(filepath.Dir(logFixture(c.log)))
			code, stdout, stderr := run(t, append([]string{"calibrate", "--log", c.log, "--json"}, c.flags...)...)
			if code != 0 {
				t.Fatalf("calibrate: exit %d: %s", code, stderr)
			}
			var fromCalibrate struct {
				Record record.Calibration `json:"record"`
			}
			if err := json.Unmarshal([]byte(stdout), &fromCalibrate); err != nil {
				t.Fatal(err)
			}
			p, err := launch.Parse("profile.yaml", []byte(c.profile))
			if err != nil {
				t.Fatal(err)
			}
			lg, err := serverlog.ReadFile(c.log)
			if err != nil {
				t.Fatal(err)
			}
			fromProfile, _, err := launch.Calibrate(p, &lg, c.log, c.deviceGiB)
			if err != nil {
				t.Fatalf("run --profile's calibration: %v", err)
			}
			if !reflect.DeepEqual(fromCalibrate.Record, *fromProfile) {
				t.Errorf("the two paths disagree:\ncalibrate     %+v\nrun --profile %+v", fromCalibrate.Record, *fromProfile)
			}
			if fromProfile.ActualTokens == 0 {
				t.Errorf("no actual tokens: %+v", fromProfile)
			}
		})
	}
}

// TestGivenCoversEveryFlag: every planner input a server can state is
// marked given by one of the flags that set it, so that renaming a flag
// without given() cannot let a log override it.
func TestGivenCoversEveryFlag(t *testing.T) {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	var f planFlags
	f.register(fs, "vllm")
	fs.VisitAll(func(fl *flag.Flag) { fs.Set(fl.Name, fl.DefValue) })
	g := reflect.ValueOf(f.given(fs))
	for i := 0; i < g.NumField(); i++ {
		if !g.Field(i).Bool() {
			t.Errorf("plan.Given.%s is set by no flag", g.Type().Field(i).Name)
		}
	}
}

// TestCalibrateDeprecatedSeedBackend: calibrate --backend seed holds the
// seed formula (of vLLM) against the log, as --capacity-model seed does,
// and says once, on stderr and in the --json warnings, that the spelling
// is deprecated.
func TestCalibrateDeprecatedSeedBackend(t *testing.T) {
	args := []string{"calibrate", "--log", logFixture("vllm-v0-phi4.log"), "--model", "phi-4", "--json"}
	_, want, _ := run(t, append(args, "--capacity-model", "seed")...)
	code, stdout, stderr := run(t, append(args, "--backend", "seed")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got, canonical struct {
		Record   record.Calibration `json:"record"`
		Warnings []string           `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &canonical); err != nil {
		t.Fatal(err)
	}
	const warning = "--backend seed is deprecated: use --backend vllm --capacity-model seed"
	if got.Record.Backend != "seed" || !reflect.DeepEqual(got.Record, canonical.Record) {
		t.Errorf("record %+v, want the seed formula's %+v", got.Record, canonical.Record)
	}
	if len(got.Warnings) == 0 || got.Warnings[0] != warning || len(got.Warnings) != len(canonical.Warnings)+1 {
		t.Errorf("warnings %q, want the deprecation first, then %q", got.Warnings, canonical.Warnings)
	}
	if stderr != "warning: "+warning+"\n" {
		t.Errorf("stderr %q, want the one deprecation warning", stderr)
	}
}
