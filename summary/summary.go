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
		e := &f.LevelEnds[i]
		r := get(e.Run)
		r.ends[e.Level] = combineEnds(r.ends[e.Level], e)
	}
	for i := range f.RunEnds {
		get(f.RunEnds[i].Run).end = &f.RunEnds[i]
	}
	return order, runs
}

// Options tune how a document is rebuilt.
type Options struct {
	// Confidence is the confidence of the levels' intervals; 0 means
	// stats.DefaultConfidence.
	Confidence float64
	// SLO, when set, replaces every run's own SLO (its header's, from run
	// --slo) as the budget of goodput: report --slo on a records file.
	SLO *SLO
}

// SLO is a latency budget as a run records it: its canonical text and its
// per-request bounds.
type SLO struct {
	Text   string
	Budget record.GoodputBudget
}

// combineEnds folds a further level_end line of a level into the first:
// a level that find ran again (a repeated probe) has one per pass. Peaks
// take the larger value, preemptions add up, warnings and per-repeat GPU
// memory append. The lines of f are left alone.
func combineEnds(have, e *record.LevelEnd) *record.LevelEnd {
	if have == nil {
		return e
	}
	c := *have
	c.RepeatGPUMemoryMiB = append(slices.Clone(have.RepeatGPUMemoryMiB), e.RepeatGPUMemoryMiB...)
	if e.Plan != nil {
		c.Plan = e.Plan
	}
	if e.Saturated != "" {
		c.Saturated = e.Saturated
	}
	switch {
	case e.Fields == nil:
	case have.Fields == nil:
		c.Fields = e.Fields
	default:
		a, b := *have.Fields, e.Fields
		a.PeakVRAMGiB = maxOf(a.PeakVRAMGiB, b.PeakVRAMGiB)
		a.PeakKVCacheUsage = maxOf(a.PeakKVCacheUsage, b.PeakKVCacheUsage)
		a.PeakRequestsRunning = maxOf(a.PeakRequestsRunning, b.PeakRequestsRunning)
		a.PeakRequestsWaiting = maxOf(a.PeakRequestsWaiting, b.PeakRequestsWaiting)
		a.RequestsWaitingRise = maxOf(a.RequestsWaitingRise, b.RequestsWaitingRise)
		if a.Preemptions != nil && b.Preemptions != nil {
			a.Preemptions = ptr.To(*a.Preemptions + *b.Preemptions)
		} else if a.Preemptions == nil {
			a.Preemptions = b.Preemptions
		}
		a.Warnings = append(slices.Clone(a.Warnings), b.Warnings...)
		c.Fields = &a
	}
	return &c
}

// maxOf is the larger of two optional values; nil where both are.
func maxOf(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// runOptions are the summary options of one run and the SLO text that
// goes with its budget.
type runOptions struct {
	stats.Options
	slo string
}

// levelOptions are a run's summary options: opts' where given, else what
// its header recorded (run --slo, --confidence).
func levelOptions(r *run, opts Options) runOptions {
	var o runOptions
	if r.header != nil {
		o.Confidence, o.Budget, o.slo = r.header.Run.CIConfidence, r.header.Run.GoodputBudget, r.header.Run.SLO
	}
	if opts.Confidence > 0 {
		o.Confidence = opts.Confidence
	}
	if opts.SLO != nil {
		b := opts.SLO.Budget
		o.Budget, o.slo = &b, opts.SLO.Text
	}
	return o
}

// LevelOf summarizes one level of one run of f as RunsWith would (its
// plan, its level_end lines, the run's options); false when the run has
// no counted Result at that level. It lets a caller that chooses levels as
// it goes (servebench find) read each level as soon as it ended.
func LevelOf(f *record.File, label string, level int, opts Options) (document.Level, bool) {
	_, runs := group(f)
	r, ok := runs[label]
	if !ok {
		return document.Level{}, false
	}
	sub := &run{header: r.header, ends: map[int]*record.LevelEnd{}, end: r.end}
	for _, res := range r.results {
		if res.Level == level {
			sub.results = append(sub.results, res)
		}
	}
	if e := r.ends[level]; e != nil {
		sub.ends[level] = e
	}
	d := buildRun(label, sub, opts)
	for _, l := range d.Levels {
		return l, true
	}
	return document.Level{}, false
}

// Runs rebuilds runs[] of the report with the default Options (see
// RunsWith).
func Runs(f *record.File) []document.Run { return RunsWith(f, Options{}) }

// RunsWith rebuilds runs[] of the report: per run, its header's metadata
// and one Level per level in the order the Results appear (stats.Levels,
// with goodput against the run's SLO or opts.SLO), with the planned
// Concurrency and RequestedRate from the header or, for levels planned
// as they went (find), from their level_end lines, the telemetry fields
// of the level_end line merged in (stats.MergeLevel), and Complete false
// unless a run_end line says it completed.
func RunsWith(f *record.File, opts Options) []document.Run {
	order, runs := group(f)
	out := make([]document.Run, 0, len(order))
	for _, label := range order {
		out = append(out, buildRun(label, runs[label], opts))
	}
	return out
}

func buildRun(label string, r *run, opts Options) document.Run {
	var d document.Run
	plans := map[int]record.LevelPlan{}
	if r.header != nil {
		d = runDocument(&r.header.Run)
		for _, p := range r.header.Levels {
			plans[p.Level] = p
		}
	}
	for level, e := range r.ends {
		if e.Plan != nil {
			plans[level] = *e.Plan
		}
	}
	sopts := levelOptions(r, opts)
	d.SLO, d.GoodputBudget = sopts.slo, sopts.Budget
	d.Label = label
	d.Levels = stats.Levels(r.results, sopts.Options)
	for i := range d.Levels {
		l := &d.Levels[i]
		key := l.Concurrency // stats.Levels sets it to the Result's Level
		if p, ok := plans[key]; ok {
			l.Concurrency = p.Concurrency
			if p.Rate > 0 {
				l.RequestedRate = &p.Rate
			}
		}
		if e := r.ends[key]; e != nil {
			if e.Fields != nil {
				stats.MergeLevel(l, e.Fields)
			}
			l.Saturated = e.Saturated
		}
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
		Warnings: slices.Clone(h.Warnings), SLO: h.SLO, GoodputBudget: h.GoodputBudget, CIConfidence: h.CIConfidence,
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

// Document rebuilds the whole report document of f with the default
// Options: Runs, BatchRecords,
// run_dates from the runs' start times, gpu when all runs agree on it,
// calibration[] lifted from the runs' calibration records (launch
// profiles), complete false when any run is incomplete, and for batch runs
// the method in words and the top-level runtime and profile (each where all
// runs agree on it) as in vllm-text-image-example.json.
func Document(f *record.File) document.Document { return DocumentWith(f, Options{}) }

// DocumentWith is Document with opts (see RunsWith).
func DocumentWith(f *record.File, opts Options) document.Document {
	doc := document.Document{Runs: RunsWith(f, opts), Records: BatchRecords(f)}
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
