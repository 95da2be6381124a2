package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/sim"
)

// simArgs is a small simulated sweep: run --backend sim with args after.
func simArgs(args ...string) []string {
	return append([]string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--quiet"}, args...)
}

// TestRunSimFlagErrors: every bad simulated run is one line naming the
// flag, exit 2, before anything runs.
func TestRunSimFlagErrors(t *testing.T) {
	dir := t.TempDir()
	twoRuns := filepath.Join(dir, "two.json")
	writeSimProfile(t, twoRuns, "a", "b")
	// A valid profile behind more than filecap.Config of leading blanks:
	// read whole, it would fill memory before the decoder saw its end.
	oversized := filepath.Join(dir, "oversized.json")
	valid, err := os.ReadFile(twoRuns)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oversized, append([]byte(strings.Repeat(" ", 17<<20)), valid...), 0o644); err != nil {
		t.Fatal(err)
	}
	// A llama.cpp run with none of its settings, beside a valid vLLM
	// run: the family is checked before what the run lacks, and only the
	// chosen run is checked.
	mixed := filepath.Join(dir, "mixed.json")
	two, err := sim.ReadProfile(bytes.NewReader(valid))
	if err != nil {
		t.Fatal(err)
	}
	two.Runs[0].Backend, two.Runs[0].Server = backend.LlamaCpp, sim.Server{}
	var buf bytes.Buffer
	if err := sim.WriteProfile(&buf, two); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mixed, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"llama.cpp profile on vLLM", simArgs("--sim-profile", mixed, "--sim-profile-run", "a"), `run: --sim-profile: run "a" was fitted to llamacpp, not the vllm being simulated (--scheduler llamacpp)`},
		{"llama.cpp profile lacking its settings", simArgs("--sim-profile", mixed, "--sim-profile-run", "a", "--scheduler", "llamacpp"), `run "a": invalid input: llamacpp needs slots`},
		{"unknown GPU", []string{"run", "--backend", "sim", "--gpu", "RTX 9999 Ultra", "--model", "qwen2.5-7b"}, "run: --gpu: unknown GPU"},
		{"unknown model", []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "gpt-17"}, "run: --model: unknown model"},
		{"ambiguous GPU", []string{"run", "--backend", "sim", "--gpu", "A100", "--model", "qwen2.5-7b"}, `run: --gpu: unknown GPU: GPU "A100" matches several boards: A100 40GB, A100 40GB PCIe, A100 80GB, A100 80GB PCIe; or describe a custom board: --gpu-gib N --gpu-bandwidth GB/s --gpu-tflops N`},
		{"custom board without FLOPS", []string{"run", "--backend", "sim", "--gpu-gib", "24", "--gpu-bandwidth", "900", "--model", "qwen2.5-7b"}, "or a custom board: --gpu-gib N --gpu-bandwidth GB/s --gpu-tflops N"},
		{"custom board bad bandwidth", simArgs("--gpu-bandwidth", "-3"), "run: --gpu-bandwidth -3: want a number from 0 to 1000000"},
		{"does not fit", []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "llama-3.1-70b", "--quant", "bf16"}, "run: --model/--gpu:"},
		{"no gpu", []string{"run", "--backend", "sim", "--model", "qwen2.5-7b"}, "--backend sim needs --gpu"},
		{"no model", []string{"run", "--backend", "sim", "--gpu", "RTX 4090"}, "--backend sim needs --model"},
		{"bad scheduler", simArgs("--scheduler", "tgi"), `run: --scheduler "tgi"`},
		{"negative setting", simArgs("--max-num-seqs", "-1"), "run: --max-num-seqs -1: want 0 to 1048576"},
		{"bad link", simArgs("--tensor-parallel-size", "2", "--gpu-link", "infiniband"), `run: --gpu-link "infiniband": want nvlink, pcie or pcie-host`},
		{"tensor parallel too large", simArgs("--tensor-parallel-size", "16"), "run: --tensor-parallel-size 16: want 0 to 8"},
		{"tensor parallel on llama.cpp", simArgs("--tensor-parallel-size", "2", "--scheduler", "llamacpp"), "splits layers over GPUs, not matrices"},
		{"no NVLink on GeForce", simArgs("--tensor-parallel-size", "2", "--gpu-link", "nvlink"), "GeForce RTX 4090 has no nvlink"},
		{"link without tensor parallel", simArgs("--gpu-link", "pcie"), "needs a tensor-parallel size above 1"},
		{"url with sim", simArgs("--url", "http://127.0.0.1:8000"), "run: --url does not apply to --backend sim"},
		{"telemetry with sim", simArgs("--metrics-url", "http://127.0.0.1:8000/metrics"), "run: --metrics-url does not apply to --backend sim"},
		{"sim flag without sim", []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:1", "--scheduler", "vllm"}, "run: --scheduler applies only to --backend sim"},
		{"engine flag without sim", []string{"run", "--url", "http://127.0.0.1:1", "--kv-blocks", "100"}, "run: --kv-blocks applies only to --backend sim"},
		{"profile without sim", []string{"run", "--url", "http://127.0.0.1:1", "--sim-profile", twoRuns}, "run: --sim-profile applies only to --backend sim"},
		{"profile run without profile", simArgs("--sim-profile-run", "a"), "run: --sim-profile-run needs --sim-profile"},
		{"missing profile", simArgs("--sim-profile", filepath.Join(dir, "none.json")), "cannot read: no such file or directory"},
		{"oversized profile", simArgs("--sim-profile", oversized, "--sim-profile-run", "a"), "oversized.json: cannot read: larger than 16 MiB, the most a sim profile may be"},
		{"ambiguous profile", simArgs("--sim-profile", twoRuns), "--sim-profile-run: " + twoRuns + ": invalid input: the sim profile has 2 runs (a, b): name one"},
		{"unknown profile run", simArgs("--sim-profile", twoRuns, "--sim-profile-run", "c"), `the sim profile has no run "c" (it has a, b)`},
		{"profile of another family", simArgs("--sim-profile", twoRuns, "--sim-profile-run", "a", "--scheduler", "llamacpp"), "was fitted to vllm, not the llamacpp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
}

// writeSimProfile writes a sim profile with one vLLM run per label, at
// the documented defaults.
func writeSimProfile(t *testing.T, path string, labels ...string) {
	t.Helper()
	cfg, err := sim.Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	p := &sim.Profile{Version: sim.ProfileVersion}
	for _, l := range labels {
		params := cfg.Params
		params.MemoryEfficiency *= 0.5 // a fit that halves the bandwidth achieved
		p.Runs = append(p.Runs, sim.RunProfile{Label: l, Backend: backend.VLLM, Model: "qwen2.5-7b", Cost: cfg.Model, GPU: cfg.GPU, Server: cfg.Server, Params: params})
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := sim.WriteProfile(fh, p); err != nil {
		t.Fatal(err)
	}
}

// TestRunSimRecordsRebuild: a simulated run writes the records and report
// of a real one — the report rebuilt from its records is the one it
// wrote — marked simulated, with the engine's inputs, and each level has
// the engine's telemetry.
func TestRunSimRecordsRebuild(t *testing.T) {
	dir := t.TempDir()
	out, recs := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	code, _, stderr := run(t, simArgs("--scenario", "chat", "--concurrency", "1,4", "--requests", "8", "--out", out, "--records", recs)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkRebuild(t, out, readRecords(t, recs))
	doc := readDoc(t, out)
	r := doc.Runs[0]
	if !r.Simulated || r.Sim == nil || r.Sim.Scheduler != "vllm" || r.Sim.GPU != "RTX 4090" || len(r.Sim.Engine) == 0 || r.Label != "sim-vllm-chat" {
		t.Fatalf("run not marked simulated with its inputs: %+v", r)
	}
	for _, l := range r.Levels {
		if l.Requests != 8 || l.Errors != 0 || l.PeakKVCacheUsage == nil || l.Preemptions == nil || l.ThroughputTokS == nil {
			t.Fatalf("level %d: %+v", l.Concurrency, l)
		}
	}
	if code, stdout, _ := run(t, "report", recs); code != 0 || !strings.Contains(stdout, "SIMULATED") {
		t.Fatalf("report of the records: exit %d, no SIMULATED in\n%s", code, stdout)
	}
}

// TestRunSimDeterministic: the same flags and seed give the same records
// (the header's start time aside); --seed moves them.
func TestRunSimDeterministic(t *testing.T) {
	dir := t.TempDir()
	records := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		if code, _, stderr := run(t, simArgs(append(args, "--records", p, "--out", p+".json", "--concurrency", "2,6", "--requests", "12")...)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(b), "\n") // the header has the wall-clock start
		return body
	}
	a := records("a")
	if records("b") != a {
		t.Fatal("same seed, different records")
	}
	if records("c", "--seed", "2") == a {
		t.Fatal("another seed, same records")
	}
}

// TestRunSimMethods: pool throughput rises with concurrency under vLLM's
// scheduler; a rate level under capacity achieves its rate; batch records
// come out in the vllm-text-image-example.json shape; a fit applied with
// --sim-profile (half the bandwidth) slows decoding.
func TestRunSimMethods(t *testing.T) {
	dir := t.TempDir()
	doc := func(args ...string) document.Document {
		out := filepath.Join(dir, "d.json")
		if code, _, stderr := run(t, simArgs(append(args, "--out", out)...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return readDoc(t, out)
	}
	pool := doc("--concurrency", "1,8,32", "--requests", "32")
	tp := func(l document.Level) float64 { return *l.ThroughputTokS }
	if ls := pool.Runs[0].Levels; !(tp(ls[1]) > 4*tp(ls[0]) && tp(ls[2]) > 2*tp(ls[1])) {
		t.Errorf("pool throughput does not rise with concurrency: %.0f, %.0f, %.0f tok/s", tp(ls[0]), tp(ls[1]), tp(ls[2]))
	}
	rate := doc("--method", "rate", "--rate", "1,4", "--requests", "60", "--arrival", "constant")
	for _, l := range rate.Runs[0].Levels {
		if l.AchievedRate == nil || l.RequestedRate == nil || *l.AchievedRate < 0.9**l.RequestedRate || *l.AchievedRate > 1.1**l.RequestedRate {
			t.Errorf("rate level: achieved %v, requested %v", l.AchievedRate, l.RequestedRate)
		}
	}
	batch := doc("--method", "batch", "--concurrency", "1,4", "--repeats", "2", "--scenario", "image", "--model", "qwen2.5-vl-7b", "--context", "8192")
	if len(batch.Records) != 2 || batch.Records[1].AggregateOutputTokS <= batch.Records[0].AggregateOutputTokS {
		t.Errorf("batch records: %+v", batch.Records)
	}
	profile := filepath.Join(dir, "p.json")
	writeSimProfile(t, profile, "a")
	base := doc("--concurrency", "1", "--requests", "4")
	fitted := doc("--concurrency", "1", "--requests", "4", "--sim-profile", profile)
	if a, b := *base.Runs[0].Levels[0].TPOTP50Ms, *fitted.Runs[0].Levels[0].TPOTP50Ms; !(b > 1.5*a) || fitted.Runs[0].Sim.Profile != profile+"#a" {
		t.Errorf("--sim-profile at half the bandwidth: TPOT %.2f ms against %.2f ms; profile %q", b, a, fitted.Runs[0].Sim.Profile)
	}
}

// TestRunSimCustomBoard: a board the catalog lacks, described by its
// memory, bandwidth and FLOPS, is simulated; twice the bandwidth gives a
// faster decode.
func TestRunSimCustomBoard(t *testing.T) {
	tpot := func(bw string) float64 {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.json")
		code, _, stderr := run(t, "run", "--backend", "sim", "--gpu-gib", "24", "--gpu-bandwidth", bw, "--gpu-tflops", "150",
			"--model", "qwen2.5-7b", "--quant", "awq", "--quiet", "--concurrency", "1", "--requests", "4", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		r := readDoc(t, out).Runs[0]
		if r.GPU == nil || !strings.HasPrefix(*r.GPU, "custom 24 GiB "+bw+" GB/s") {
			t.Fatalf("run GPU %v, want the custom board", r.GPU)
		}
		return *r.Levels[0].TPOTP50Ms
	}
	slow, fast := tpot("500"), tpot("1000")
	if !(fast < slow*0.7) {
		t.Errorf("TPOT p50 %.2f ms at 1000 GB/s, %.2f at 500: want faster", fast, slow)
	}
}
