package cli

import (
	"runtime"
	"testing"

	"github.com/servebench/servebench/record"
)

// recordedHeapPerResult records n successful Results of chunks chunks
// each through a recorder that writes no file, and returns the live heap
// it then holds per Result.
func recordedHeapPerResult(n, chunks int) float64 {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rec, _ := newRecorder("", "run")
	rec.header(&record.Header{Run: record.Run{Label: "r", Method: "pool"}, Levels: []record.LevelPlan{{Level: 1, Concurrency: 1, Requests: n}}})
	for i := range n {
		offs, toks := make([]int64, chunks), make([]int, chunks)
		for k := range offs {
			offs[k], toks[k] = int64(1000+k*1000+i%7), 1
		}
		ttft, out, in := int64(1000), chunks, 100
		rec.result(&record.Result{Run: "r", Seq: i, Level: 1, StartNS: int64(i) * 1e6, TTFTNS: &ttft, E2ENS: int64(chunks+1) * 1000,
			ChunkOffsetsNS: offs, ChunkTokens: toks, OutputTokens: &out, PromptTokens: &in, ExpectedOutputTokens: chunks, Status: 200})
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(rec)
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
}

// TestRecorderKeepsSummariesNotResults checks that what a run holds per
// request is what its summaries need (a few figures and one gap per
// token), not the request's Result: less than the Result's per-chunk
// arrays alone (16 bytes a chunk).
func TestRecorderKeepsSummariesNotResults(t *testing.T) {
	const chunks = 128
	if got := recordedHeapPerResult(5000, chunks); got >= 16*chunks {
		t.Fatalf("the recorder holds %.0f bytes per request of %d chunks, want below the %d bytes of its chunk arrays", got, chunks, 16*chunks)
	}
}

// BenchmarkRecorderMemory reports the live heap a run holds per request
// of 128 chunks (live-B/req).
func BenchmarkRecorderMemory(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(recordedHeapPerResult(20000, 128), "live-B/req")
	}
}
