package sim

import (
	"testing"

	"github.com/servebench/servebench/load"
)

func TestZZSeeds(t *testing.T) {
	var pv publishedVLLM
	readJSON(t, "testdata/published-vllm-rtx5090-qwen3-4b.json", &pv)
	base := vllmSweepConfig(t, &pv)
	p := pv.Points[len(pv.Points)-1]
	e, _ := New(base)
	n := int(p.QPS * pv.ArrivalSeconds)
	lr, err := RunLevel(e, Workload{PromptTokens: pv.PromptTokens, OutputTokens: pv.OutputTokens},
		Load{Method: load.Rate, Key: 1, Rate: p.QPS, Requests: n, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	rs := lr.Results
	var busy float64
	for _, r := range rs {
		busy += float64(r.E2ENS)
	}
	last := rs[len(rs)-1].StartNS - rs[0].StartNS
	t.Logf("n %d span %.2fs rate %.3f meanE2E %.3fs inflight %.2f ptoks %v out %v", len(rs), float64(last)/1e9, float64(len(rs)-1)/(float64(last)/1e9), busy/float64(len(rs))/1e9, busy/float64(last), *rs[5].PromptTokens, *rs[5].OutputTokens)
}
