package simserve_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/cputime"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// BenchmarkHoldStreams holds 2,000 streams at once against a simulated
// vLLM on an H100 (max_num_seqs 2048, so all of them decode together) with
// servebench's own client (package backend, what `servebench run` uses)
// in the same process: both halves of `servebench run --concurrency 2000`
// against `servebench sim serve` on this machine. It fails unless every
// stream completes with all its tokens, and reports
//   - wall/predicted: the wall time from the first send to the last
//     token over the engine's own prediction for the same requests (1.0:
//     the simulated server kept its schedule);
//   - late-p50-ms, late-p99-ms, late-max-ms: how far behind the engine's
//     schedule the server wrote its token chunks;
//   - paused-s: the time the simulated server paused because the machine
//     fell more than 100 ms behind (wall/predicted includes it);
//   - cpu-us/token: the process's CPU time (server and client) per token.
func BenchmarkHoldStreams(b *testing.B) {
	const streams, maxTokens = 2000, 128
	spec := simservetest.Spec(backend.VLLM)
	spec.Server.MaxNumSeqs = 2048
	for b.Loop() {
		srv, err := simserve.New(simserve.Options{As: backend.VLLM, Spec: spec})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		c, err := backend.New(backend.Config{Kind: backend.VLLM, BaseURL: ts.URL, Model: testModel, Timeout: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		results := make([]record.Result, streams)
		cpu0, start := cputime.Process(), time.Now()
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				c.Do(context.Background(), &backend.Request{Prompt: "hello there world", MaxTokens: maxTokens, Seed: int64(i)}, &results[i])
			})
		}
		wg.Wait()
		wall, cpu := time.Since(start), cputime.Process()-cpu0
		sum := srv.Summary()
		srv.Close()
		ts.Close()
		for i := range results {
			if r := &results[i]; !r.OK() || r.OutputTokens == nil || *r.OutputTokens != maxTokens {
				b.Fatalf("stream %d of %d: %s %s (%v tokens)", i, streams, r.Reason, r.Error, r.OutputTokens)
			}
		}
		predicted := predictDrain(b, srv.Config(), streams, 11, maxTokens)
		b.ReportMetric(streams, "streams")
		b.ReportMetric(wall.Seconds()/predicted.Seconds(), "wall/predicted")
		b.ReportMetric(ms(sum.LatenessP50), "late-p50-ms")
		b.ReportMetric(ms(sum.LatenessP99), "late-p99-ms")
		b.ReportMetric(ms(sum.LatenessMax), "late-max-ms")
		b.ReportMetric(sum.Paused.Seconds(), "paused-s")
		if cpu > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/float64(streams*maxTokens), "cpu-us/token")
		}
		b.Logf("%d streams of %d tokens: wall %v, engine's prediction %v, %d tokens written, lateness p50 %v p99 %v max %v, paused %v, CPU %v",
			streams, maxTokens, wall.Round(time.Millisecond), predicted.Round(time.Millisecond), sum.Writes, sum.LatenessP50, sum.LatenessP99, sum.LatenessMax, sum.Paused, cpu)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// predictDrain is when the engine, in virtual time, finishes n requests
// sent together.
func predictDrain(b *testing.B, cfg sim.Config, n, prompt, output int) time.Duration {
	e, err := sim.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for range n {
		if _, err := e.Submit(sim.Request{PromptTokens: prompt, OutputTokens: output}, 0, nil); err != nil {
			b.Fatal(fmt.Errorf("predict: %w", err))
		}
	}
	return e.Drain()
}
