package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

const corpusPath = "testdata/calibration/cases.jsonl"

// targetCases is the corpus size the share limits are measured against
// until the corpus reaches it.
const targetCases = 150

// TestPageCurrent: docs/accuracy.md and the figures sim.AccuracyClaim
// embeds (sim/accuracy_cv.json) are what the command writes from the
// committed corpus and today's simulator, so neither can drift from
// either (go run ./sim/accuracy rewrites both).
func TestPageCurrent(t *testing.T) {
	t.Chdir("../..")
	page, figures, err := Generate(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	for file, got := range map[string]string{"docs/accuracy.md": page, cvFile: figures} {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != got {
			t.Errorf("%s differs from the command's output: run go run ./sim/accuracy and review the diff", file)
		}
	}
}

// TestCorpusComposition holds the corpus to its rules: every case names
// one page per source, every source is in SOURCES.md, and no source or
// organisation dominates it: a source at most 10% and an organisation at
// most 20% of the cases, or of the corpus's target size (targetCases)
// while it is smaller, so a source that would dominate the full corpus is
// refused now.
func TestCorpusComposition(t *testing.T) {
	f, err := os.Open("../../" + corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("%d cases, want at least 20", len(cases))
	}
	bySource, byOrg, srcURL := map[string]int{}, map[string]int{}, map[string]string{}
	for _, c := range cases {
		bySource[c.Source]++
		byOrg[c.Org]++
		if u, ok := srcURL[c.Source]; ok && u != c.URL {
			t.Errorf("%s: source %q has two pages, %s and %s", c.ID, c.Source, u, c.URL)
		}
		srcURL[c.Source] = c.URL
	}
	n := float64(max(len(cases), targetCases))
	for s, k := range bySource {
		if float64(k) > 0.10*n+0.5 {
			t.Errorf("source %q has %d cases (> 10%% of %v)", s, k, n)
		}
	}
	for o, k := range byOrg {
		if float64(k) > 0.20*n+0.5 {
			t.Errorf("organisation %q has %d cases (> 20%% of %v)", o, k, n)
		}
	}
	sources, err := os.ReadFile("../../testdata/calibration/SOURCES.md")
	if err != nil {
		t.Fatal(err)
	}
	for s, u := range srcURL {
		if !bytes.Contains(sources, []byte(u)) {
			t.Errorf("source %q (%s) is not in SOURCES.md", s, u)
		}
	}
}

func TestClassOf(t *testing.T) {
	for gpu, want := range map[string]Class{
		"GeForce RTX 4090": Consumer, "NVIDIA GeForce RTX 3090": Consumer, "RTX 5090": Consumer,
		"RTX A6000": Workstation, "RTX 6000 Ada Generation": Workstation, "RTX PRO 6000 Blackwell": Workstation,
		"L40S": Workstation, "A40": Workstation,
		"H100 80GB": Datacenter, "A100 40GB": Datacenter, "L4": Datacenter, "Tesla T4": Datacenter, "H200": Datacenter,
	} {
		if got := classOf(gpu); got != want {
			t.Errorf("classOf(%q) = %s, want %s", gpu, got, want)
		}
	}
}

// TestParseCasesRejects: each malformed case is refused with the field
// it gets wrong.
func TestParseCasesRejects(t *testing.T) {
	good := `{"id":"a","source":"s","org":"o","url":"https://example.org/p","server":"vllm","tool":"vllm bench serve","gpu":"H100 80GB","gpu_count":1,"tp":1,"model":"m","preset":"llama-3.1-8b","quant":"bf16","regime":"closed_loop","concurrency":4,"prompt_tokens":10,"output_tokens":10,"measured":{"output_tok_s":100}}`
	if _, err := ParseCases(strings.NewReader(good)); err != nil {
		t.Fatalf("good case refused: %v", err)
	}
	for name, tc := range map[string]struct{ old, new, want string }{
		"unknown field":  {`"tp":1`, `"tp":1,"tpp":2`, "unknown field"},
		"reserved":       {`https://example.org/p`, `https://github.com/ggml-org/llama.cpp/pull/15131`, "reserved source"},
		"no url":         {`https://example.org/p`, `example`, "url"},
		"tp > gpus":      {`"tp":1`, `"tp":2`, "tp"},
		"regime":         {`closed_loop`, `closed`, "regime"},
		"no concurrency": {`"concurrency":4`, `"concurrency":0`, "concurrency"},
		"no figure":      {`{"output_tok_s":100}`, `{}`, "no figure"},
		"negative":       {`"output_tok_s":100`, `"output_tok_s":-1`, "must be > 0"},
		"empty id":       {`"id":"a"`, `"id":""`, "id is empty"},
	} {
		bad := strings.Replace(good, tc.old, tc.new, 1)
		_, err := ParseCases(strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, tc.want)
		}
	}
	if _, err := ParseCases(strings.NewReader(good + "\n" + good)); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("repeated id: %v", err)
	}
}

// TestSkipReasons: a case the simulator cannot run says why.
func TestSkipReasons(t *testing.T) {
	base := Case{ID: "x", Server: "vllm", Tool: "vllm bench serve", GPU: "H100 80GB", GPUCount: 1, TP: 1, Preset: "llama-3.1-8b",
		Model: "m", Quant: "bf16", Regime: SingleStream, PromptTokens: 100, OutputTokens: 50, Measured: Figures{OutputTokS: ptr(100)}}
	for name, tc := range map[string]struct {
		edit func(*Case)
		want string
	}{
		"family": {func(c *Case) { c.Server = "tensorrt-llm" }, "not a simulated family"},
		"tp":     {func(c *Case) { c.GPUCount, c.TP = 2, 1 }, "tensor parallelism only"},
		"preset": {func(c *Case) { c.Preset = "" }, "no preset"},
		"gpu":    {func(c *Case) { c.GPU = "RTX Z9000" }, "not in catalog"},
	} {
		c := base
		tc.edit(&c)
		o := Run([]Case{c})[0]
		if !strings.Contains(o.Skip, tc.want) {
			t.Errorf("%s: skip %q, want %q", name, o.Skip, tc.want)
		}
	}
	if o := Run([]Case{base})[0]; o.Skip != "" || len(o.Points) != 1 {
		t.Errorf("runnable case: skip %q, %d points", o.Skip, len(o.Points))
	}
}

func FuzzParseCases(f *testing.F) {
	f.Add(`{"id":"a","source":"s","org":"o","url":"https://example.org/p","server":"vllm","tool":"t","gpu":"L4","gpu_count":1,"tp":1,"model":"m","preset":"","quant":"bf16","regime":"burst","num_requests":4,"prompt_tokens":10,"output_tokens":10,"measured":{"ttft_mean_ms":5}}`)
	f.Add("# comment\n\n{}")
	f.Add(`{"id":"a"} {"id":"b"}`)
	f.Fuzz(func(t *testing.T, s string) {
		cases, err := ParseCases(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, c := range cases {
			if err := c.validate(); err != nil {
				t.Fatalf("accepted case fails validation: %v", err)
			}
		}
	})
}
