package main

import (
	"os"
	"strings"
	"testing"
)

// TestDefaultsIndependentOfCorpus holds the claim the cross-validation
// section makes: no figure the default constants are fitted to comes from
// a corpus page, so the no-fit prediction of every source is a held-out
// one. Fitting a default to a corpus page fails here until the page
// refits it per held-out source.
func TestDefaultsIndependentOfCorpus(t *testing.T) {
	t.Chdir("../..")
	f, err := os.Open(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, p := range fitFiles {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("fit source %s: %v", p, err)
		}
		text.Write(b)
	}
	if leaks := fitLeaks(cases, text.String()); len(leaks) > 0 {
		t.Errorf("the defaults' sources cite corpus pages, so their no-fit figures are not held out: %v", leaks)
	}
}

func TestFitLeaks(t *testing.T) {
	cases := []Case{
		{Source: "thread", URL: "https://github.com/ggml-org/llama.cpp/pull/7676"},
		{Source: "file", URL: "https://github.com/o/r/blob/0123abc/docs/bench.md"},
		{Source: "blog", URL: "https://example.org/posts/bench/"},
	}
	for name, tc := range map[string]struct {
		text string
		want string // "" = no leak
	}{
		"thread by number": {`"source": "ggml-org/llama.cpp#7676 (CUDA: use tensor cores for MMQ)"`, "thread"},
		"thread by url":    {"see https://github.com/ggml-org/llama.cpp/pull/7676", "thread"},
		"other thread":     {"ggml-org/llama.cpp#76760 and #15802", ""},
		"file by path":     {"o/r, docs/bench.md (2026-09)", "file"},
		"path elsewhere":   {"x/y, docs/bench.md", ""},
		"blog":             {"figures from example.org/posts/bench", "blog"},
		"unrelated":        {"pegainfer-project/pegainfer, docs/models/qwen3/serving-perf-5090.md", ""},
	} {
		got := fitLeaks(cases, tc.text)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: leaks %v, want none", name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want+" ")):
			t.Errorf("%s: leaks %v, want %s", name, got, tc.want)
		}
	}
}

func TestGroupStatus(t *testing.T) {
	good := Summary{N: 6, MedAbs: 0.1, Bias: 0.05}
	for name, tc := range map[string]struct {
		n    int
		sums map[Metric]Summary
		want string
	}{
		"validated":        {6, map[Metric]Summary{Throughput: good, TPOT: good}, "validated"},
		"no case":          {0, map[Metric]Summary{}, "outside the validated range (fewer than 5 cases)"},
		"four cases":       {4, map[Metric]Summary{Throughput: {N: 4, MedAbs: 0.01}}, "outside the validated range (fewer than 5 cases)"},
		"biased TTFT":      {6, map[Metric]Summary{Throughput: good, TTFT: {N: 6, MedAbs: 0.15, Bias: -0.15}}, "outside the validated range"},
		"few TPOT points":  {6, map[Metric]Summary{Throughput: good, TPOT: {N: 2, MedAbs: 0.01}}, "outside the validated range"},
		"prefill not held": {6, map[Metric]Summary{Throughput: good, Prefill: {N: 1, MedAbs: 0.5}}, "validated"},
	} {
		if got := groupStatus(tc.n, tc.sums); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestCorpusTargets holds the corpus to the size and spread its accuracy
// figures are claimed over: at least 150 cases from 25 sources and 25
// organisations (a study's result files are sources of one organisation,
// not independent of each other), 30 on each GPU class, 5 with tensor parallelism over 2-4 GPUs, and closed-loop,
// open-loop rate and SGLang cases.
func TestCorpusTargets(t *testing.T) {
	f, err := os.Open("../../" + corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := ParseCases(f)
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]Outcome, len(cases))
	for i, c := range cases {
		outs[i] = Outcome{Case: c, Class: classOf(c.GPU)}
	}
	c := compose(outs)
	if c.Cases < targetCases || c.Sources < 25 {
		t.Errorf("%d cases from %d sources, want at least %d from 25", c.Cases, c.Sources, targetCases)
	}
	if c.Orgs < 25 {
		t.Errorf("%d organisations, want at least 25", c.Orgs)
	}
	for _, cl := range Classes {
		if c.ByClass[cl] < 30 {
			t.Errorf("%d %s cases, want at least 30", c.ByClass[cl], cl)
		}
	}
	if c.TensorParallel < 5 {
		t.Errorf("%d cases with tensor parallelism over 2-4 GPUs, want at least 5", c.TensorParallel)
	}
	if c.ByRegime[ClosedLoop] == 0 || c.ByRegime[OpenRate] == 0 || c.ByServer["sglang"] == 0 {
		t.Errorf("closed-loop %d, rate %d, SGLang %d cases: want each", c.ByRegime[ClosedLoop], c.ByRegime[OpenRate], c.ByServer["sglang"])
	}
}

func TestCompose(t *testing.T) {
	mk := func(src, org, gpu string, tp int, r Regime, server string) Outcome {
		return Outcome{Case: Case{Source: src, Org: org, GPU: gpu, TP: tp, GPUCount: tp, Regime: r, Server: server}, Class: classOf(gpu)}
	}
	c := compose([]Outcome{
		mk("a", "x", "GeForce RTX 4090", 1, SingleStream, "vllm"),
		mk("a", "x", "H100 80GB", 2, Burst, "sglang"),
		mk("b", "x", "RTX A6000", 4, OpenRate, "vllm"),
		mk("c", "y", "H200", 8, ClosedLoop, "sglang"),
	})
	if c.Cases != 4 || c.Sources != 3 || c.Orgs != 2 || c.TensorParallel != 2 {
		t.Errorf("cases %d sources %d orgs %d tp %d, want 4 3 2 2", c.Cases, c.Sources, c.Orgs, c.TensorParallel)
	}
	if c.LargestSourceName != "a" || c.LargestSource != 2 || c.LargestOrgName != "x" || c.LargestOrg != 3 {
		t.Errorf("largest source %s %d, org %s %d", c.LargestSourceName, c.LargestSource, c.LargestOrgName, c.LargestOrg)
	}
	if c.ByClass[Consumer] != 1 || c.ByClass[Workstation] != 1 || c.ByClass[Datacenter] != 2 || c.ByServer["sglang"] != 2 {
		t.Errorf("by class %v, by server %v", c.ByClass, c.ByServer)
	}
}
