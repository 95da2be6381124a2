// Package summary rebuilds servebench's report document from the content
// of a records file (record.File): `servebench run` builds its report with
// it from the very lines it writes, and `servebench report records.jsonl`
// rebuilds the same report from the saved file, without the server.
package summary

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// run gathers one run's lines.
type run struct {
	header  *record.Header
	results []record.Result
	ends    map[int]*record.LevelEnd
	end     *record.RunEnd
}

// group splits f by run label, in order of first appearance (header or
// Result). Results of a run without header form a run with only a label.
func group(f *record.File) ([]string, map[string]*run) {
	var order []string
	runs := map[string]*run{}
	get := func(label string) *run {
		r, ok := runs[label]
		if !ok {
			r = &run{ends: map[int]*record.LevelEnd{}}
			runs[label] = r
			order = append(order, label)
		}
		return r
	}
	for i := range f.Headers {
		get(f.Headers[i].Run.Label).header = &f.Headers[i]
	}
	for _, res := range f.Results {
		r := get(res.Run)
		r.results = append(r.results, res)
	}
	for i := range f.LevelEnds {
		get(f.LevelEnds[i].Run).ends[f.LevelEnds[i].Level] = &f.LevelEnds[i]
	}
	for i := range f.RunEnds {
		get(f.RunEnds[i].Run).end = &f.RunEnds[i]
	}
	return order, runs
}

// Runs rebuilds runs[] of the report: per run, its header's metadata and
// one Level per level in the order the Results appear (stats.Levels), with
// the planned Concurrency and RequestedRate from the header, the telemetry
// fields of its level_end line merged in (stats.MergeLevel), its classes
// given the level's concurrency, the schedule judged (stats.CheckSchedule:
// whether the client limited the rate), and Complete false unless a
// run_end line says it completed.
func Runs(f *record.File) []document.Run {
	order, runs := group(f)
	out := make([]document.Run, 0, len(order))
	for _, label := range order {
		out = append(out, buildRun(label, runs[label]))
	}
	return out
}

func buildRun(label string, r *run) document.Run {
	var d document.Run
	plans := map[int]record.LevelPlan{}
	if r.header != nil {
		d = runDocument(&r.header.Run)
		for _, p := range r.header.Levels {
			plans[p.Level] = p
		}
	}
	d.Label = label
	d.Levels = stats.Levels(r.results)
	for i := range d.Levels {
		l := &d.Levels[i]
		key := l.Concurrency // stats.Levels sets it to the Result's Level
		if p, ok := plans[key]; ok {
			l.Concurrency = p.Concurrency
			if p.Rate > 0 {
				l.RequestedRate = &p.Rate
			}
		}
		if e := r.ends[key]; e != nil && e.Fields != nil {
			stats.MergeLevel(l, e.Fields)
		}
		for i := range l.Classes {
			l.Classes[i].Concurrency = l.Concurrency
		}
		stats.CheckSchedule(l)
	}
	complete := r.end != nil && r.end.Complete
	d.Complete = &complete
	if r.end != nil {
		d.Warnings = append(d.Warnings, r.end.Warnings...)
	}
	return d
}

// runDocument is the report's run for a records header's description of
// it, without levels.
func runDocument(h *record.Run) document.Run {
	return document.Run{
		Label: h.Label, Backend: h.Backend, Model: h.Model, Scenario: h.Scenario,
		PromptTokens: h.PromptTokens, MaxTokens: h.MaxTokens, StartedAt: h.StartedAt,
		GPU: h.GPU, GPUGiB: h.GPUGiB, KVCache: h.KVCache,
		Method: h.Method, API: h.API, URL: h.URL, Runtime: h.Runtime, Server: h.Server,
		Profile: h.Profile, Capacity: h.Capacity, Calibration: h.Calibration,
		Warnings: slices.Clone(h.Warnings),
		Trace:    h.Trace, Mix: slices.Clone(h.Mix),
		Turns: h.Turns, ThinkTime: h.ThinkTime, SharedPrefixTokens: h.SharedPrefixTokens, PrefixGroups: h.PrefixGroups,
	}
}

// BatchRecords rebuilds records[] (vllm-text-image-example.json shape) for
// the runs of f that used the batch method: one record per level, by
// stats.BatchRecord, with the GPU memory after each repeat from the level's
// level_end line.
func BatchRecords(f *record.File) []document.BatchRecord {
	order, runs := group(f)
	var out []document.BatchRecord
	for _, label := range order {
		r := runs[label]
		if r.header == nil || r.header.Run.Method != "batch" {
			continue
		}
		wl := workload.Scenario(r.header.Run.Scenario).BatchWorkload()
		for _, p := range r.header.Levels {
			rs := levelResults(r.results, p.Level)
			if len(rs) == 0 {
				continue
			}
			var mem []*float64
			if e := r.ends[p.Level]; e != nil {
				mem = e.RepeatGPUMemoryMiB
			}
			rec := stats.BatchRecord(wl, p.Concurrency, r.header.Run.MaxTokens, rs, mem)
			rec.Label = label
			out = append(out, rec)
		}
	}
	return out
}

func levelResults(rs []record.Result, level int) []record.Result {
	var out []record.Result
	for _, r := range rs {
		if r.Level == level && !r.Warmup {
			out = append(out, r)
		}
	}
	return out
}

// Document rebuilds the whole report document of f: Runs, BatchRecords,
// run_dates from the runs' start times, gpu when all runs agree on it,
// calibration[] lifted from the runs' calibration records (launch
// profiles), complete false when any run is incomplete, and for batch runs
// the method in words and the top-level runtime and profile (each where all
// runs agree on it) as in vllm-text-image-example.json.
func Document(f *record.File) document.Document {
	doc := document.Document{Runs: Runs(f), Records: BatchRecords(f)}
	complete := true
	for i, r := range doc.Runs {
		if r.StartedAt != "" {
			doc.RunDates = append(doc.RunDates, r.StartedAt)
		}
		if r.Complete != nil && !*r.Complete {
			complete = false
		}
		if r.Calibration != nil {
			doc.Calibration = append(doc.Calibration, *r.Calibration)
			doc.Runs[i].Calibration = nil // once, in the seed's place
		}
		if i == 0 {
			doc.GPU, doc.GPUGiB = r.GPU, r.GPUGiB
		} else if !ptr.Equal(doc.GPU, r.GPU) {
			doc.GPU, doc.GPUGiB = nil, nil
		}
	}
	doc.Complete = &complete
	doc.Method = batchMethod(f)
	if len(doc.Records) > 0 {
		// The batch shape names the server and its profile at the top.
		doc.Runtime, doc.Profile = doc.Runs[0].Runtime, doc.Runs[0].Profile
		for _, r := range doc.Runs[1:] {
			if !ptr.Equal(doc.Runtime, r.Runtime) {
				doc.Runtime = nil
			}
			if !reflect.DeepEqual(doc.Profile, r.Profile) {
				doc.Profile = nil
			}
		}
	}
	return doc
}

// batchMethod describes the batch method in words, like the "method" of
// vllm-text-image-example.json, for the first batch run of f; "" if none.
func batchMethod(f *record.File) string {
	for _, h := range f.Headers {
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
