package stats

import (
	"fmt"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// BatchRuns turns the Results of one batch-method level into one BatchRun
// per repetition (Result.Repeat, in ascending order), warm-ups excluded:
// GeneratedTokens = Σ server-reported output tokens of the batch's
// successful requests (counts that cannot be true, see
// record.PlausibleOutputTokens, are left out: Level warns of them); WallSeconds = the batch's first send to its last
// finish; OutputTokS = GeneratedTokens / WallSeconds. GPUMemoryMiBAfter is
// taken from gpuMiB[repeat] where given (telemetry), else null.
func BatchRuns(rs []record.Result, gpuMiB []*float64) []document.BatchRun {
	type acc struct {
		tokens     int
		start, end int64
	}
	byRepeat := map[int]*acc{}
	for _, r := range rs {
		if r.Warmup {
			continue
		}
		a := byRepeat[r.Repeat]
		if a == nil {
			a = &acc{start: r.StartNS, end: r.StartNS + r.E2ENS}
			byRepeat[r.Repeat] = a
		}
		a.start = min(a.start, r.StartNS)
		a.end = max(a.end, r.StartNS+r.E2ENS)
		if r.OK() && r.OutputTokens != nil && record.PlausibleOutputTokens(*r.OutputTokens, r.ExpectedOutputTokens) {
			a.tokens += *r.OutputTokens
		}
	}
	repeats := make([]int, 0, len(byRepeat))
	for k := range byRepeat {
		repeats = append(repeats, k)
	}
	slices.Sort(repeats)
	runs := make([]document.BatchRun, 0, len(repeats))
	for _, k := range repeats {
		a := byRepeat[k]
		wall := float64(a.end-a.start) / 1e9
		run := document.BatchRun{GeneratedTokens: a.tokens, WallSeconds: wall}
		if wall > 0 {
			run.OutputTokS = float64(a.tokens) / wall
		}
		if k >= 0 && k < len(gpuMiB) {
			run.GPUMemoryMiBAfter = gpuMiB[k]
		}
		runs = append(runs, run)
	}
	return runs
}

// DeriveBatchRecord computes a BatchRecord's derived fields from its runs,
// by the docs/metrics.md definitions for R = len(runs) repetitions of a batch of
// C = concurrency simultaneous requests of N = outputTokensPerRequest
// output tokens each:
//
//   - TotalVerifiedOutputTokens = Σ runs' GeneratedTokens (server-reported)
//   - AggregateOutputTokS = that total / Σ runs' WallSeconds
//   - PerRequestOutputTokS = AggregateOutputTokS / C
//   - MeanCompletionSeconds = mean of the runs' WallSeconds
//   - MeanTPOTMs = MeanCompletionSeconds × 1000 / N. This includes prefill
//     and queueing: it is the batch's time per output position, not the
//     per-request TPOT of a Level.
//   - PeakObservedGPUMemoryMiB = max of the runs' GPUMemoryMiBAfter (null
//     when none is known).
//
// A total that differs from R × C × N is reported in Warnings. A run whose
// GeneratedTokens cannot be a count (negative or above
// record.MaxTokenCount, as a hand-written document may hold) is left out
// of the token total with a warning, so the sum cannot wrap.
func DeriveBatchRecord(workload string, concurrency, outputTokensPerRequest int, runs []document.BatchRun) document.BatchRecord {
	rec := document.BatchRecord{
		Workload:               workload,
		Concurrency:            concurrency,
		Repeats:                len(runs),
		OutputTokensPerRequest: outputTokensPerRequest,
		Runs:                   runs,
	}
	var wall float64
	for i, r := range runs {
		if record.PlausibleTokens(r.GeneratedTokens) {
			rec.TotalVerifiedOutputTokens += r.GeneratedTokens
		} else {
			rec.Warnings = append(rec.Warnings, fmt.Sprintf("run %d: generated_tokens %d cannot be a token count; left out of the total", i+1, r.GeneratedTokens))
		}
		wall += r.WallSeconds
		if m := r.GPUMemoryMiBAfter; m != nil && (rec.PeakObservedGPUMemoryMiB == nil || *m > *rec.PeakObservedGPUMemoryMiB) {
			rec.PeakObservedGPUMemoryMiB = ptr.To(*m)
		}
	}
	if wall > 0 {
		rec.AggregateOutputTokS = float64(rec.TotalVerifiedOutputTokens) / wall
	}
	if concurrency > 0 {
		rec.PerRequestOutputTokS = rec.AggregateOutputTokS / float64(concurrency)
	}
	if len(runs) > 0 {
		rec.MeanCompletionSeconds = wall / float64(len(runs))
	}
	if outputTokensPerRequest > 0 {
		rec.MeanTPOTMs = rec.MeanCompletionSeconds * 1000 / float64(outputTokensPerRequest)
	}
	// In floating point: a document's concurrency × tokens may be too
	// large for an int product.
	if want := float64(len(runs)) * float64(concurrency) * float64(outputTokensPerRequest); float64(rec.TotalVerifiedOutputTokens) != want {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("verified output tokens %d differ from %d repeats × %d requests × %d tokens = %.0f",
			rec.TotalVerifiedOutputTokens, len(runs), concurrency, outputTokensPerRequest, want))
	}
	return rec
}

// BatchRecord builds the vllm-text-image-example.json record of one
// batch-method level from its Results: BatchRuns, then DeriveBatchRecord.
// gpuMiB is the GPU memory after each repeat, or nil.
func BatchRecord(workload string, concurrency, outputTokensPerRequest int, rs []record.Result, gpuMiB []*float64) document.BatchRecord {
	return DeriveBatchRecord(workload, concurrency, outputTokensPerRequest, BatchRuns(rs, gpuMiB))
}
