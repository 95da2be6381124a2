// Package summary rebuilds servebench's report document from the content
// of a records file: `servebench run` builds its report with it from the
// very lines it writes (a record.File), and `servebench report
// records.jsonl` rebuilds the same report from the saved file, without the
// server, streaming its lines through a Builder.
package summary

import (
	"fmt"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

// Runs rebuilds runs[] of the report: per run, its header's metadata and
// one Level per level in the order the Results appear (stats.Levels), with
// the planned Concurrency and RequestedRate from the header, the telemetry
// fields of its level_end line merged in (stats.MergeLevel), its request
// classes summarized at the level's concurrency, the schedule judged
// (stats.CheckSchedule: whether the client limited the rate), and Complete
// false unless a run_end line says it completed.
func Runs(f *record.File) []document.Run { return fromFile(f).Runs() }

// runDocument is the report's run for a records header's description of
// it, without levels.
func runDocument(h *record.Run) document.Run {
	return document.Run{
		Label: h.Label, Backend: h.Backend, Model: h.Model, Scenario: h.Scenario,
		PromptTokens: h.PromptTokens, MaxTokens: h.MaxTokens, StartedAt: h.StartedAt,
		GPU: h.GPU, GPUGiB: h.GPUGiB, KVCache: h.KVCache,
		Method: h.Method, API: h.API, URL: h.URL, Connection: h.Connection, Runtime: h.Runtime, Server: h.Server,
		Profile: h.Profile, Capacity: h.Capacity, Calibration: h.Calibration,
		Warnings: slices.Clone(h.Warnings),
		Trace:    h.Trace, Mix: slices.Clone(h.Mix),
	}
}

// BatchRecords rebuilds records[] (vllm-text-image-example.json shape) for
// the runs of f that used the batch method: one record per level, by
// stats.BatchRecord, with the GPU memory after each repeat from the level's
// level_end line.
func BatchRecords(f *record.File) []document.BatchRecord { return fromFile(f).BatchRecords() }

// Document rebuilds the whole report document of f (Builder.Document).
func Document(f *record.File) document.Document { return fromFile(f).Document() }

// fromFile feeds every line of f to a new Builder, in the order group
// used to see them: headers, then Results, then level and run ends.
func fromFile(f *record.File) *Builder {
	b := NewBuilder()
	for i := range f.Headers {
		b.Add(record.Line{Header: &f.Headers[i]})
	}
	for i := range f.Results {
		b.Add(record.Line{Result: &f.Results[i]})
	}
	for i := range f.LevelEnds {
		b.Add(record.Line{LevelEnd: &f.LevelEnds[i]})
	}
	for i := range f.RunEnds {
		b.Add(record.Line{RunEnd: &f.RunEnds[i]})
	}
	return b
}

// batchMethod describes the batch method in words, like the "method" of
// vllm-text-image-example.json, for the first batch run of headers; "" if
// none.
func batchMethod(headers []*record.Header) string {
	for _, h := range headers {
		if h.Run.Method != "batch" || len(h.Levels) == 0 {
			continue
		}
		return fmt.Sprintf("%d repetitions per point of a batch of `concurrency` simultaneous requests, each batch after the last finished; "+
			"%s prompts unique from their first word; fixed %d-token greedy outputs (ignore-EOS where the server has it, verified against server-reported counts); "+
			"output tokens divided by end-to-end batch completion time, after %d warm-up requests per point.",
			h.Levels[0].Repeats, h.Run.Scenario, h.Run.MaxTokens, h.Warmup)
	}
	return ""
}

// Succeeded counts the successful counted requests of f, for the exit
// status of `servebench run` (1 when none succeeded).
func Succeeded(f *record.File) int {
	n := 0
	for i := range f.Results {
		if !f.Results[i].Warmup && f.Results[i].OK() {
			n++
		}
	}
	return n
}
