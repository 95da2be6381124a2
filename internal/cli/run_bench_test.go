package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/stats"
)

// The comparisons whose truth depends on an idle machine: client TPOT
// against the server's own decode time per token, level by level, and
// throughput gains from concurrency and slots. On a starved machine
// Ollama's HTTP server may forward a whole stream in one burst (client
// TPOT then reads near 0 at that level, honestly), and levels run at
// different moments of another process's load. The tests check what holds
// on a busy machine (checkAgainstServerTimings); these benchmarks measure
// the rest, and README gives their figures with the machine's load.
//
//	scripts/ollama-testbed run go test ./internal/cli -run '^$' -bench 'Ollama(Sweep|Slots)' -benchtime 3x

// BenchmarkOllamaSweep runs a pool sweep of levels 1, 2 and 4 (12 requests
// each, 128 output tokens) against the testbed per iteration, and reports
// the medians over iterations of: per level, the median over its requests
// of client TPOT / (eval_duration / eval_count) (tpot-ratio-cN: 1 when the
// client sees the server's decode pace) and the throughput (tok/s-cN); and
// the throughput ratio of level 4 to level 1 (c4/c1).
func BenchmarkOllamaSweep(b *testing.B) {
	url, model := testenv.Ollama(b)
	levels := []int{1, 2, 4}
	ratio := map[int][]float64{}
	tput := map[int][]float64{}
	var gain []float64
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		report, recs := filepath.Join(dir, fmt.Sprintf("r%d.json", i)), filepath.Join(dir, fmt.Sprintf("r%d.jsonl", i))
		if _, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
			"--concurrency", "1,2,4", "--requests", "12", "--warmup", "1", "--max-tokens", itoa(integrationMaxTokens),
			"--gpu", "none", "--out", report, "--records", recs, "--quiet"); err != nil {
			b.Fatalf("run: %v\n%s", err, stderr)
		}
		doc, f := readDoc(b, report), readRecords(b, recs)
		perLevel := map[int][]float64{}
		for j := range f.Results {
			r := &f.Results[j]
			tp, ok := stats.TPOTNS(r)
			if r.Warmup || !ok || r.Server == nil || r.Server.EvalNS == nil {
				continue
			}
			perLevel[r.Level] = append(perLevel[r.Level], tp/(float64(*r.Server.EvalNS)/float64(*r.OutputTokens)))
		}
		for k, l := range doc.Runs[0].Levels {
			ratio[levels[k]] = append(ratio[levels[k]], median(perLevel[l.Concurrency]))
			tput[levels[k]] = append(tput[levels[k]], *l.ThroughputTokS)
		}
		gain = append(gain, *doc.Runs[0].Levels[2].ThroughputTokS / *doc.Runs[0].Levels[0].ThroughputTokS)
	}
	for _, c := range levels {
		b.ReportMetric(median(ratio[c]), fmt.Sprintf("tpot-ratio-c%d", c))
		b.ReportMetric(median(tput[c]), fmt.Sprintf("tok/s-c%d", c))
	}
	b.ReportMetric(median(gain), "c4/c1")
}

// BenchmarkOllamaSlots launches the testbed's Ollama twice per iteration,
// with OLLAMA_NUM_PARALLEL 1 and 4, runs concurrency 4 against each
// (16 requests of 128 tokens) and reports the medians over iterations of
// the throughputs (tok/s-np1, tok/s-np4), their ratio (np4/np1) and the
// TTFT p50s (ttft-p50-ms-np1, -np4).
func BenchmarkOllamaSlots(b *testing.B) {
	dir := b.TempDir()
	p1, _ := ollamaProfile(b, dir, "ollama-np1", 1)
	p4, _ := ollamaProfile(b, dir, "ollama-np4", 4)
	var np1, np4, gain, ttft1, ttft4 []float64
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(dir, fmt.Sprintf("slots%d.json", i))
		if _, stderr, err := cliRun(context.Background(), "run", "--profile", p1, "--profile", p4, "--concurrency", "4",
			"--requests", "16", "--warmup", "2", "--max-tokens", "128", "--gpu", "none", "--out", out, "--quiet"); err != nil {
			b.Fatalf("run: %v\n%s", err, stderr)
		}
		doc := readDoc(b, out)
		a, c := *doc.Runs[0].Levels[0].ThroughputTokS, *doc.Runs[1].Levels[0].ThroughputTokS
		np1, np4, gain = append(np1, a), append(np4, c), append(gain, c/a)
		ttft1, ttft4 = append(ttft1, *doc.Runs[0].Levels[0].TTFTP50Ms), append(ttft4, *doc.Runs[1].Levels[0].TTFTP50Ms)
	}
	b.ReportMetric(median(np1), "tok/s-np1")
	b.ReportMetric(median(np4), "tok/s-np4")
	b.ReportMetric(median(gain), "np4/np1")
	b.ReportMetric(median(ttft1), "ttft-p50-ms-np1")
	b.ReportMetric(median(ttft4), "ttft-p50-ms-np4")
}
