package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/cputime"
	"github.com/servebench/servebench/record"
)

// benchAccumulator is a pool level of n successful requests with spread
// latencies, as a short-request level has them.
func benchAccumulator(n int) *Accumulator {
	rng := rand.New(rand.NewPCG(1, 2))
	var a Accumulator
	for i := range n {
		ttft := 20 + 80*rng.Float64()
		a.Add(ptrResult(ok(4, float64(i)*5, ttft, ttft+200+100*rng.Float64(), 32+rng.IntN(32), 500)))
	}
	return &a
}

func ptrResult(r record.Result) *record.Result { return &r }

// BenchmarkLevelIntervals measures the confidence intervals a level's
// summary computes after it ends (throughput and the p50, p95 and p99 of
// TTFT, TPOT and E2E), per counted request.
func BenchmarkLevelIntervals(b *testing.B) {
	for _, n := range []int{48, 72, 400, 2000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			a := benchAccumulator(n)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Process()
			for range b.N {
				var l document.Level
				l.ThroughputTokS = fp(1)
				a.intervals(&l)
			}
			// CPU time as well as wall time: on a shared machine the
			// process's CPU time is the steadier figure.
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/request")
			b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/request")
		})
	}
}
