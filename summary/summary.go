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
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

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
		// The server's prefix-cache hit rate: the mean of the
		// passes' rates, as their query counts are not kept.
		if a.PrefixCacheHitRate != nil && b.PrefixCacheHitRate != nil {
			a.PrefixCacheHitRate = ptr.To((*a.PrefixCacheHitRate + *b.PrefixCacheHitRate) / 2)
		} else if a.PrefixCacheHitRate == nil {
			a.PrefixCacheHitRate = b.PrefixCacheHitRate
		}
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
func levelOptions(h *record.Header, opts Options) runOptions {
	var o runOptions
	if h != nil {
		o.Confidence, o.Budget, o.slo = h.Run.CIConfidence, h.Run.GoodputBudget, h.Run.SLO
		o.Backend = h.Run.Backend
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
	b := NewBuilder(opts)
	feed(f, func(l record.Line) {
		switch {
		case l.Header != nil:
			if l.Header.Run.Label != label {
				return
			}
		case l.Result != nil:
			if l.Result.Run != label || l.Result.Level != level {
				return
			}
		case l.LevelEnd != nil:
			if l.LevelEnd.Run != label || l.LevelEnd.Level != level {
				return
			}
		case l.RunEnd != nil:
			if l.RunEnd.Run != label {
				return
			}
		}
		b.Add(l)
	})
	r, ok := b.runs[label]
	if !ok {
		return document.Level{}, false
	}
	for _, l := range r.document(label, opts).Levels {
		return l, true
	}
	return document.Level{}, false
}

// Runs rebuilds runs[] of the report with the default Options (see
// RunsWith).
func Runs(f *record.File) []document.Run { return RunsWith(f, Options{}) }

// RunsWith rebuilds runs[] of the report: per run, its header's metadata
// and one Level per level in the order the Results appear (with goodput
// against the run's SLO or opts.SLO), with the planned Concurrency and
// RequestedRate from the header or, for levels planned as they went
// (find), from their level_end lines, the telemetry fields of the
// level_end line merged in (stats.MergeLevel), its request classes
// summarized at the level's concurrency, the schedule judged
// (stats.CheckSchedule: whether the client limited the rate), and
// Complete false unless a run_end line says it completed.
func RunsWith(f *record.File, opts Options) []document.Run { return fromFile(f, opts).Runs() }

// runDocument is the report's run for a records header's description of
// it, without levels; its warnings and mix are its own copies.
func runDocument(h *record.Run) document.Run {
	r := document.Run{Run: *h}
	r.Warnings, r.Mix = slices.Clone(h.Warnings), slices.Clone(h.Mix)
	r.Headers = slices.Clone(h.Headers)
	return r
}

// BatchRecords rebuilds records[] (vllm-text-image-example.json shape) for
// the runs of f that used the batch method: one record per level, by
// stats.BatchRecord, with the GPU memory after each repeat from the level's
// level_end line.
func BatchRecords(f *record.File) []document.BatchRecord {
	return fromFile(f, Options{}).BatchRecords()
}

// Document rebuilds the whole report document of f with the default
// Options (Builder.Document).
func Document(f *record.File) document.Document { return DocumentWith(f, Options{}) }

// DocumentWith is Document with opts (see RunsWith).
func DocumentWith(f *record.File, opts Options) document.Document {
	return fromFile(f, opts).Document()
}

// fromFile feeds every line of f to a new Builder with opts (feed).
func fromFile(f *record.File, opts Options) *Builder {
	b := NewBuilder(opts)
	feed(f, b.Add)
	return b
}

// feed gives every line of f to add, in the order group used to see
// them: headers, then Results, then level and run ends.
func feed(f *record.File, add func(record.Line)) {
	for i := range f.Headers {
		add(record.Line{Header: &f.Headers[i]})
	}
	for i := range f.Results {
		add(record.Line{Result: &f.Results[i]})
	}
	for i := range f.LevelEnds {
		add(record.Line{LevelEnd: &f.LevelEnds[i]})
	}
	for i := range f.RunEnds {
		add(record.Line{RunEnd: &f.RunEnds[i]})
	}
}

// batchMethod describes the batch method in words, like the "method" of
// vllm-text-image-example.json, for the first batch run of headers; "" if
// none.
func batchMethod(headers []*record.Header) string {
	for _, h := range headers {
		if load.Method(h.Run.Method) != load.Batch || len(h.Levels) == 0 {
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
