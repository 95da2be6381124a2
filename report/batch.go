package report

import (
	"fmt"
	"math"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/stats"
)

// Derived holds a batch record's derived fields as recomputed from its runs.
type Derived struct {
	TotalVerifiedOutputTokens int
	AggregateOutputTokS       float64
	PerRequestOutputTokS      float64
	MeanCompletionSeconds     float64
	MeanTPOTMs                float64
	// PeakObservedGPUMemoryMiB is nil when no run has a reading.
	PeakObservedGPUMemoryMiB *float64
	// RunOutputTokS are each run's generated_tokens / wall_seconds.
	RunOutputTokS []float64
}

// RecomputeBatch recomputes a batch record's derived fields from its runs
// with the definitions of docs/metrics.md, as stats.DeriveBatchRecord computes them
// when a run writes the record: total = Σ generated tokens; aggregate =
// total / Σ wall seconds; per request = aggregate / concurrency; mean
// completion = mean wall seconds; mean TPOT = mean completion × 1000 /
// output tokens per request (prefill included); peak GPU memory = max of
// gpu_memory_mib_after. Each run's output_tok_s is generated_tokens /
// wall_seconds.
func RecomputeBatch(rec document.BatchRecord) Derived {
	s := stats.DeriveBatchRecord(rec.Workload, rec.Concurrency, rec.OutputTokensPerRequest, rec.Runs)
	d := Derived{
		TotalVerifiedOutputTokens: s.TotalVerifiedOutputTokens,
		AggregateOutputTokS:       s.AggregateOutputTokS,
		PerRequestOutputTokS:      s.PerRequestOutputTokS,
		MeanCompletionSeconds:     s.MeanCompletionSeconds,
		MeanTPOTMs:                s.MeanTPOTMs,
		PeakObservedGPUMemoryMiB:  s.PeakObservedGPUMemoryMiB,
	}
	for _, r := range rec.Runs {
		d.RunOutputTokS = append(d.RunOutputTokS, ratio(float64(r.GeneratedTokens), r.WallSeconds))
	}
	return d
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// RelTol is the relative tolerance within which a stored derived field
// agrees with its recomputed value.
const RelTol = 1e-6

// CheckBatch compares a record's stored derived fields with d and returns a
// warning for each that differs by more than RelTol relative, plus one for
// a repeat count that is not the number of runs and one for each run whose
// generated tokens are not concurrency × output tokens per request.
func CheckBatch(rec document.BatchRecord, d Derived) []string {
	var w []string
	at := fmt.Sprintf("c=%d %s: ", rec.Concurrency, rec.Workload)
	if rec.Repeats != len(rec.Runs) {
		w = append(w, fmt.Sprintf("%srepeats is %d but the record has %d runs", at, rec.Repeats, len(rec.Runs)))
	}
	num := func(name string, stored, recomputed float64) {
		if !within(stored, recomputed) {
			w = append(w, fmt.Sprintf("%s%s is %g but its runs give %g", at, name, stored, recomputed))
		}
	}
	num("total_verified_output_tokens", float64(rec.TotalVerifiedOutputTokens), float64(d.TotalVerifiedOutputTokens))
	num("aggregate_output_tok_s", rec.AggregateOutputTokS, d.AggregateOutputTokS)
	num("per_request_output_tok_s", rec.PerRequestOutputTokS, d.PerRequestOutputTokS)
	num("mean_completion_seconds", rec.MeanCompletionSeconds, d.MeanCompletionSeconds)
	num("mean_tpot_ms", rec.MeanTPOTMs, d.MeanTPOTMs)
	switch {
	case rec.PeakObservedGPUMemoryMiB == nil && d.PeakObservedGPUMemoryMiB != nil:
		w = append(w, fmt.Sprintf("%speak_observed_gpu_memory_mib is null but its runs give %g", at, *d.PeakObservedGPUMemoryMiB))
	case rec.PeakObservedGPUMemoryMiB != nil && d.PeakObservedGPUMemoryMiB == nil:
		w = append(w, fmt.Sprintf("%speak_observed_gpu_memory_mib is %g but no run has a reading", at, *rec.PeakObservedGPUMemoryMiB))
	case rec.PeakObservedGPUMemoryMiB != nil:
		num("peak_observed_gpu_memory_mib", *rec.PeakObservedGPUMemoryMiB, *d.PeakObservedGPUMemoryMiB)
	}
	want := rec.Concurrency * rec.OutputTokensPerRequest
	for i, r := range rec.Runs {
		if i < len(d.RunOutputTokS) {
			num(fmt.Sprintf("runs[%d].output_tok_s", i), r.OutputTokS, d.RunOutputTokS[i])
		}
		if rec.OutputTokensPerRequest > 0 && r.GeneratedTokens != want {
			w = append(w, fmt.Sprintf("%sruns[%d] generated %d tokens, want %d (%d requests × %d)", at, i, r.GeneratedTokens, want, rec.Concurrency, rec.OutputTokensPerRequest))
		}
	}
	return w
}

// within reports whether a and b agree within RelTol relative (exactly, for
// zero).
func within(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= RelTol*math.Max(math.Abs(a), math.Abs(b))
}
