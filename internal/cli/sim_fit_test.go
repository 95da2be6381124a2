package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/sim"
)

const (
	sweepExample = "../../examples/multi-backend-sweep.json"
	batchExample = "../../examples/vllm-text-image-example.json"
)

// TestSimFitUsageErrors: every bad sim fit command line and every input
// that cannot be fitted is one line naming the file or flag, exit 2.
func TestSimFitUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.json")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noLevels := write("no-levels.json", `{"gpu":"RTX 4090","runs":[{"label":"r","backend":"vllm","model":"qwen2.5-7b","prompt_tokens":100,"max_tokens":100,"levels":[]}]}`)
	noFigures := write("no-figures.json", `{"gpu":"RTX 4090","runs":[{"label":"r","backend":"vllm","model":"qwen2.5-7b","prompt_tokens":100,"max_tokens":100,"levels":[{"concurrency":1,"requests":8,"errors":0}]}]}`)
	badGPU := write("bad-gpu.json", `{"gpu":"RTX 9999","runs":[{"label":"r","backend":"vllm","model":"qwen2.5-7b","prompt_tokens":100,"max_tokens":100,"levels":[{"concurrency":1,"requests":8,"errors":0,"throughput_tok_s":100}]}]}`)
	badBackend := write("bad-backend.json", `{"gpu":"RTX 4090","runs":[{"label":"r","backend":"tgi","model":"qwen2.5-7b","prompt_tokens":100,"max_tokens":100,"levels":[{"concurrency":1,"requests":8,"errors":0,"throughput_tok_s":100}]}]}`)
	notJSON := write("junk.json", "{")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"--out", out}, "no result document given"},
		{"no --out", []string{sweepExample}, "--out is required"},
		{"bad tolerance", []string{sweepExample, "--out", out, "--tolerance", "0"}, "--tolerance 0"},
		{"bad max-iter", []string{sweepExample, "--out", out, "--max-iter", "0"}, "--max-iter 0"},
		{"out in missing dir", []string{sweepExample, "--out", filepath.Join(dir, "nope", "p.json")}, "--out " + filepath.Join(dir, "nope", "p.json")},
		{"unknown --gpu", []string{sweepExample, "--out", out, "--gpu", "RTX 9999"}, `--gpu: unknown GPU "RTX 9999"`},
		{"unknown --run", []string{sweepExample, "--out", out, "--run", "nope"}, `--run "nope": no such run`},
		{"unreadable file", []string{filepath.Join(dir, "missing.json"), "--out", out}, "missing.json"},
		{"not a document", []string{notJSON, "--out", out}, "junk.json"},
		{"no levels", []string{noLevels, "--out", out}, "no-levels.json: too few levels to fit"},
		{"no figures", []string{noFigures, "--out", out}, "no-figures.json: too few levels to fit"},
		{"unknown GPU in the document", []string{badGPU, "--out", out}, `bad-gpu.json: runs[0] (r): unknown GPU "RTX 9999"`},
		{"unknown backend", []string{badBackend, "--out", out}, `bad-backend.json: runs[0] (r): invalid input: backend "tgi"`},
		{"bad flag", []string{sweepExample, "--out", out, "--nope"}, "unknown flag --nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, append([]string{"sim", "fit"}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			// progress lines ("sim fit: fitting …") may come first; the
			// error is the one line servebench: starts
			_, errLine, _ := strings.Cut(stderr, "servebench: ")
			if !strings.Contains(errLine, tc.want) || strings.Count(strings.TrimSpace(errLine), "\n") > 0 {
				t.Errorf("stderr %q: want one error line with %q", stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed fit wrote the profile")
	}
}

// residualRow matches a row of sim fit's residual table.
// (the last column is the leave-one-level-out error, "-" where none).
var residualRow = regexp.MustCompile(`(?m)^\s+(\d+)\s+(\S+)\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)%\s+(yes|no)\s+(-|[+-][\d.]+%)\s*$`)

// TestSimFitExamples: sim fit on each example document writes a profile
// ReadProfile accepts, and that profile predicts the fitted levels within
// the residuals it printed; the sweep fitted on its lowest level prints
// the other levels as not fitted.
func TestSimFitExamples(t *testing.T) {
	cases := []struct {
		name string
		args []string
		runs int
	}{
		{"batch document", []string{batchExample}, 1},
		{"sweep, one vLLM run on its lowest level", []string{sweepExample, "--run", "vllm-fp16kv-chat", "--lowest"}, 1},
		{"sweep, Ollama on every level", []string{sweepExample, "--run", "ollama-q4km", "--max-iter", "80"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sim-profile.json")
			code, stdout, stderr := run(t, append([]string{"sim", "fit", "--out", out}, tc.args...)...)
			if code != 0 && code != 1 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if code == 1 && (!strings.Contains(stdout, "TARGETS MISSED") || !strings.Contains(stderr, "miss the")) {
				t.Errorf("exit 1 without the residuals saying so:\n%s\n%s", stdout, stderr)
			}
			fh, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			prof, err := sim.ReadProfile(fh)
			if err != nil {
				t.Fatalf("ReadProfile: %v", err)
			}
			if len(prof.Runs) != tc.runs {
				t.Fatalf("%d runs in the profile, want %d", len(prof.Runs), tc.runs)
			}
			rows := residualRow.FindAllStringSubmatch(stdout, -1)
			if len(rows) == 0 {
				t.Fatalf("no residual table in:\n%s", stdout)
			}
			checkLeaveOneOut(t, &prof.Runs[0], rows, stdout)
			rp := &prof.Runs[0]
			for _, want := range []string{"fitted: ", rp.Label, map[bool]string{true: "targets met", false: "TARGETS MISSED"}[code == 0]} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			// predict the fitted levels again from the profile alone
			doc, err := document.ReadFile(tc.args[0])
			if err != nil {
				t.Fatal(err)
			}
			specs, err := sim.RunSpecs(doc)
			if err != nil {
				t.Fatal(err)
			}
			var rs *sim.RunSpec
			for i := range specs {
				if specs[i].Label == rp.Label {
					rs = &specs[i]
				}
			}
			if rs == nil {
				t.Fatalf("no run %s in %s", rp.Label, tc.args[0])
			}
			fitted := *rs
			fitted.Cases = nil
			for _, c := range rs.Cases {
				for _, l := range rp.FitLevels {
					if c.Load.Key == l {
						fitted.Cases = append(fitted.Cases, c)
						break
					}
				}
			}
			_, res, err := sim.Predict(rp.Config(), &fitted, 1)
			if err != nil {
				t.Fatal(err)
			}
			notFitted := 0
			for _, row := range rows {
				if row[7] == "no" {
					notFitted++
				}
			}
			if strings.Contains(strings.Join(tc.args, " "), "--lowest") && notFitted == 0 {
				t.Error("--lowest printed no level as not fitted")
			}
			for _, r := range res {
				printed := math.NaN()
				for _, row := range rows {
					if row[1] == strconv.Itoa(r.Level) && row[3] == r.Metric && row[7] == "yes" && (r.Workload == "" || row[2] == r.Workload) {
						printed, _ = strconv.ParseFloat(row[6], 64)
					}
				}
				if math.IsNaN(printed) {
					t.Errorf("c=%d %s: not in the printed table", r.Level, r.Metric)
					continue
				}
				if math.Abs(r.ErrorPct) > math.Abs(printed)+0.05 {
					t.Errorf("c=%d %s: the profile predicts %+.2f%%, the fit printed %+.1f%%", r.Level, r.Metric, r.ErrorPct, printed)
				}
			}
		})
	}
}

// TestSimFitMissesTargets: a fit that cannot reach its targets prints its
// residuals, says which figures it misses, still writes the profile, and
// exits 1 — never a silent success.
func TestSimFitMissesTargets(t *testing.T) {
	doc, err := document.ReadFile(sweepExample)
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs = doc.Runs[5:6] // vllm-fp16kv-chat
	tpot := 1.0              // 1 ms per token of a 4.5 GB model: 4.5 TB/s on a 0.9 TB/s GPU
	doc.Runs[0].Levels[0].TPOTP50Ms = &tpot
	dir := t.TempDir()
	in := filepath.Join(dir, "impossible.json")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p.json")
	code, stdout, stderr := run(t, "sim", "fit", in, "--out", out, "--lowest", "--max-iter", "60")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "TARGETS MISSED") || !strings.Contains(stdout, "tpot_p50_ms at level 1") {
		t.Errorf("stdout does not name the missed figure:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 of 1 runs miss the ±10% tolerance (vllm-fp16kv-chat)") || strings.Count(strings.TrimSpace(stderr), "\n") != 2 {
		t.Errorf("stderr %q", stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the profile was not written: %v", err)
	}
}

// TestSimServeWithProfile: fit → profile → sim serve --sim-profile: the
// served engine takes the fitted parameters (printed), serves a run, and
// bad profile flags are usage errors naming the flag.
func TestSimServeWithProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "sim-profile.json")
	if code, _, stderr := run(t, "sim", "fit", sweepExample, "--run", "vllm-fp16kv-chat", "--lowest", "--out", prof); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	fh, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.ReadProfile(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	fit := p.Runs[0].Params
	const model = "Qwen/Qwen2.5-7B-Instruct-AWQ"
	served := &lineWriter{first: make(chan string, 1)}
	url, stop := startSimServeTo(t, served, "--as", "vllm", "--gpu", "RTX 5070 Ti", "--model", model, "--sim-profile", prof)
	out := filepath.Join(dir, "run.json")
	var stdout, stderr bytes.Buffer
	err = Run(t.Context(), []string{"run", "--backend", "vllm", "--url", url, "--model", model, "--concurrency", "1",
		"--requests", "2", "--warmup", "0", "--prompt-tokens", "64", "--max-tokens", "16", "--gpu", "none", "--quiet", "--out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if _, err := stop(); err != nil {
		t.Errorf("sim serve: %v", err)
	}
	want := "memory efficiency " + strconv.FormatFloat(fit.MemoryEfficiency, 'f', 3, 64)
	if got := served.String(); !strings.Contains(got, `fit "vllm-fp16kv-chat"`) || !strings.Contains(got, want) {
		t.Errorf("sim serve did not say it applied the fit (%s):\n%s", want, got)
	}
	bad := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--sim-profile", filepath.Join(dir, "none.json")}, "--sim-profile " + filepath.Join(dir, "none.json") + ": cannot read"},
		{"not a profile", []string{"--sim-profile", sweepExample}, "--sim-profile " + sweepExample + ": invalid input: sim profile"},
		{"unknown run", []string{"--sim-profile", prof, "--sim-profile-run", "nope"}, `--sim-profile-run: ` + prof + `: invalid input: the sim profile has no run "nope"`},
		{"run without profile", []string{"--sim-profile-run", "x"}, "--sim-profile-run needs --sim-profile"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sim", "serve", "--as", "vllm", "--gpu", "RTX 5070 Ti", "--model", model, "--addr", "127.0.0.1:0"}, tc.args...)
			code, _, stderr := run(t, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
	// a fit of another family does not apply: checked first, naming the
	// flag that would apply it
	code, _, errText := run(t, "sim", "serve", "--as", "llamacpp", "--gpu", "RTX 5070 Ti", "--model", model, "--addr", "127.0.0.1:0", "--sim-profile", prof)
	if code != 2 || !strings.Contains(errText, "sim serve: --sim-profile: run \"vllm-fp16kv-chat\" was fitted to vllm, not the llamacpp being simulated (--as vllm)") {
		t.Errorf("family mismatch: exit %d, %q", code, errText)
	}
}

// TestSimFitProgress: sim fit says on stderr each run it fitted, with how
// many of the file's runs are done, before the tables at the end.
func TestSimFitProgress(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim-profile.json")
	code, _, stderr := run(t, "sim", "fit", "--out", out, sweepExample, "--run", "vllm-fp16kv-chat,vllm-fp8kv-chat", "--lowest", "--max-iter", "5")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"sim fit: " + sweepExample + ": run vllm-fp16kv-chat fitted (1 of 2, ",
		"sim fit: " + sweepExample + ": run vllm-fp8kv-chat fitted (2 of 2, ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// checkLeaveOneOut: a fit of several levels predicts each from the
// others and prints the errors beside the residuals.
func checkLeaveOneOut(t *testing.T, rp *sim.RunProfile, rows [][]string, stdout string) {
	t.Helper()
	if len(slices.Compact(slices.Sorted(slices.Values(rp.FitLevels)))) < 2 {
		return
	}
	lolo := 0
	for _, r := range rows {
		if r[8] != "-" {
			lolo++
		}
	}
	if lolo == 0 || len(rp.LeaveOneOut) == 0 || !strings.Contains(stdout, "left out;") {
		t.Errorf("a fit of several levels prints no leave-one-level-out error:\n%s", stdout)
	}
}

// TestSimFitModelLessProfileRuns: the profile sim fit writes for a batch
// document (which names no model) is the whole server: run --backend sim
// takes it with --sim-profile alone and reproduces the fitted record's
// aggregate throughput; a profile of a preset's fit still needs --model.
func TestSimFitModelLessProfileRuns(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "sim-profile.json")
	if code, _, stderr := run(t, "sim", "fit", batchExample, "--out", prof); code != 0 {
		t.Fatalf("sim fit: exit %d: %s", code, stderr)
	}
	res := filepath.Join(dir, "run.json")
	code, _, stderr := run(t, "run", "--backend", "sim", "--sim-profile", prof, "--concurrency", "4", "--requests", "8", "--max-tokens", "128", "--out", res)
	if code != 0 {
		t.Fatalf("run --backend sim --sim-profile (no --model): exit %d: %s", code, stderr)
	}
	doc, err := document.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 || len(doc.Runs[0].Levels) != 1 || doc.Runs[0].Levels[0].ThroughputTokS == nil {
		t.Fatalf("run wrote no level with a throughput: %+v", doc.Runs)
	}
	// the text record: 486.9 tok/s at 4 requests of 128 tokens
	if got := *doc.Runs[0].Levels[0].ThroughputTokS; math.Abs(got-486.9)/486.9 > 0.10 {
		t.Errorf("throughput %.1f tok/s, want the fitted record's 486.9 within 10%%", got)
	}
	pre := filepath.Join(dir, "preset.json")
	if code, _, stderr := run(t, "sim", "fit", sweepExample, "--run", "vllm-fp16kv-chat", "--lowest", "--out", pre); code > 1 {
		t.Fatalf("sim fit: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "run", "--backend", "sim", "--sim-profile", pre, "--requests", "2", "--out", filepath.Join(dir, "r2.json"))
	if code != 2 || !strings.Contains(stderr, "needs --model") {
		t.Errorf("a preset's profile without --model: exit %d, %q; want 2 naming --model", code, stderr)
	}
}
