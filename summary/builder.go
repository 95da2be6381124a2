package summary

import (
	"maps"
	"reflect"
	"slices"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// Builder folds the lines of a records file, one at a time, into the
// report document: `servebench report records.jsonl` streams a file of any
// size through it (record.Scan) without holding the file's lines. What it
// keeps per request is what the summaries need: the level's
// stats.Accumulator (TTFT, TPOT, E2E and prompt length per request, and
// the inter-token gaps) and, for batch-method runs, a copy of the Result
// without its per-chunk arrays and error text (stats.BatchRuns reads only
// repeat, times, status and token count). The zero value is not ready:
// use NewBuilder.
type Builder struct {
	runs map[string]*runState
	// Runs are listed as the former group of a record.File saw them:
	// runs with a header in header order, then runs first seen in a
	// Result, a level_end or a run_end line, in that order.
	byHeader, byResult, byLevelEnd, byRunEnd []string
	// headers are all header lines in file order (batchMethod reads the
	// first of a batch run).
	headers []*record.Header
	// opts are the options every level is summarized with.
	opts Options
}

// runState is what the Builder keeps of one run.
type runState struct {
	header *record.Header
	// levels are the run's levels in order of their first counted
	// Result; acc their accumulators.
	levels []int
	acc    map[int]*stats.Accumulator
	// classes are the accumulators of each level's request classes (run
	// --mix: Result.Class), by level and class name.
	classes map[int]map[string]*stats.Accumulator
	// batch holds slim copies of the counted Results per level while the
	// run may be a batch run (no header yet, or a batch header).
	batch map[int][]record.Result
	ends  map[int]*record.LevelEnd
	end   *record.RunEnd
}

// NewBuilder returns an empty Builder that summarizes levels with opts
// (with a run's own recorded SLO and confidence where opts leaves them
// unset; a run's header must come before its Results, as run writes it).
func NewBuilder(opts Options) *Builder {
	return &Builder{runs: map[string]*runState{}, opts: opts}
}

// run returns the state of run label, noting it in order when new.
func (b *Builder) run(label string, order *[]string) *runState {
	r, ok := b.runs[label]
	if !ok {
		r = &runState{acc: map[int]*stats.Accumulator{}, classes: map[int]map[string]*stats.Accumulator{}, batch: map[int][]record.Result{}, ends: map[int]*record.LevelEnd{}}
		b.runs[label] = r
	}
	for _, l := range *order {
		if l == label {
			return r
		}
	}
	*order = append(*order, label)
	return r
}

// Add folds one line into the document. The Builder keeps the line's
// Header, LevelEnd and RunEnd (small), and of a Result only what the
// summaries need; the caller may reuse the Result's memory afterwards.
func (b *Builder) Add(l record.Line) {
	switch {
	case l.Header != nil:
		b.headers = append(b.headers, l.Header)
		r := b.run(l.Header.Run.Label, &b.byHeader)
		r.header = l.Header
		if load.Method(l.Header.Run.Method) != load.Batch {
			clear(r.batch)
		}
	case l.Result != nil:
		b.addResult(l.Result)
	case l.LevelEnd != nil:
		r := b.run(l.LevelEnd.Run, &b.byLevelEnd)
		r.ends[l.LevelEnd.Level] = combineEnds(r.ends[l.LevelEnd.Level], l.LevelEnd)
	case l.RunEnd != nil:
		b.run(l.RunEnd.Run, &b.byRunEnd).end = l.RunEnd
	}
}

func (b *Builder) addResult(res *record.Result) {
	r := b.run(res.Run, &b.byResult)
	if res.Warmup {
		return
	}
	opts := levelOptions(r.header, b.opts).Options
	a := r.acc[res.Level]
	if a == nil {
		a = &stats.Accumulator{Options: opts}
		r.acc[res.Level] = a
		r.levels = append(r.levels, res.Level)
	}
	a.Add(res)
	if res.Class != "" {
		byName := r.classes[res.Level]
		if byName == nil {
			byName = map[string]*stats.Accumulator{}
			r.classes[res.Level] = byName
		}
		ca := byName[res.Class]
		if ca == nil {
			ca = &stats.Accumulator{Options: opts}
			byName[res.Class] = ca
		}
		ca.Add(res)
	}
	if r.header == nil || load.Method(r.header.Run.Method) == load.Batch {
		r.batch[res.Level] = append(r.batch[res.Level], slim(res))
	}
}

// slim is a copy of res without what stats.BatchRuns does not read: the
// per-chunk arrays, the server timings and the error text (a failed
// request keeps a marker, so that OK stays false).
func slim(res *record.Result) record.Result {
	s := *res
	s.ChunkOffsetsNS, s.ChunkTokens, s.Server = nil, nil, nil
	if s.Error != "" {
		s.Error = "failed"
	}
	return s
}

// order lists the runs' labels (see Builder).
func (b *Builder) order() []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{b.byHeader, b.byResult, b.byLevelEnd, b.byRunEnd} {
		for _, l := range list {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// Runs is runs[] of the report (see the package's Runs).
func (b *Builder) Runs() []document.Run {
	order := b.order()
	out := make([]document.Run, 0, len(order))
	for _, label := range order {
		out = append(out, b.runs[label].document(label, b.opts))
	}
	return out
}

// document is the report's run for r.
func (r *runState) document(label string, opts Options) document.Run {
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
	o := levelOptions(r.header, opts)
	d.SLO, d.GoodputBudget = o.slo, o.Budget
	d.Label = label
	d.Levels = make([]document.Level, 0, len(r.levels))
	for _, key := range r.levels {
		l := r.acc[key].Level()
		if p, ok := plans[key]; ok {
			l.Concurrency = p.Concurrency
			if p.Rate > 0 {
				l.RequestedRate = &p.Rate
			}
		}
		if e := r.ends[key]; e != nil {
			if e.Fields != nil {
				stats.MergeLevel(&l, e.Fields)
			}
			if r.header != nil {
				stats.Cost(&l, r.header.Run.PricePerHour, r.header.Run.PricePerKWh)
			}
			l.Saturated = e.Saturated
		}
		l.Classes = r.classLevels(key, l.Concurrency)
		stats.CheckSchedule(&l)
		d.Levels = append(d.Levels, l)
	}
	complete := r.end != nil && r.end.Complete
	d.Complete = &complete
	if r.end != nil {
		d.Warnings = append(d.Warnings, r.end.Warnings...)
	}
	return d
}

// classLevels summarizes level key per request class, in order of class
// name, each at the level's concurrency; nil when no Result had a class.
func (r *runState) classLevels(key, concurrency int) []document.Level {
	byName := r.classes[key]
	if len(byName) == 0 {
		return nil
	}
	out := make([]document.Level, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		l := byName[name].Level()
		l.Class, l.Concurrency = name, concurrency
		out = append(out, l)
	}
	return out
}

// Level summarizes one level of one run as Runs would (its plan, its
// level_end lines, the run's options); false when the run has no counted
// Result at that level. It lets a caller that chooses levels as it goes
// (servebench find) read each level as soon as it ended.
func (b *Builder) Level(label string, level int) (document.Level, bool) {
	return b.oneLevel(label, level, true)
}

// ResultsLevel is Level as a Builder given only the run's header and
// Results would summarize it: without what the run's level_end lines add
// (telemetry, cost, the saturation mark, their plans). For a level whose
// Results all came in one pass, it is what a Builder of that pass alone
// says (servebench find's drift check), from this Builder's own
// accumulator, so the level is not summarized twice.
func (b *Builder) ResultsLevel(label string, level int) (document.Level, bool) {
	return b.oneLevel(label, level, false)
}

// oneLevel is the document level of one run's level, with or without its
// level_end lines (withEnds).
func (b *Builder) oneLevel(label string, level int, withEnds bool) (document.Level, bool) {
	r, ok := b.runs[label]
	if !ok || r.acc[level] == nil {
		return document.Level{}, false
	}
	one := *r
	one.levels = []int{level}
	if !withEnds {
		one.ends = nil
	}
	for _, l := range one.document(label, b.opts).Levels {
		return l, true
	}
	return document.Level{}, false
}

// Counted reports whether the run has a counted Result at level.
func (b *Builder) Counted(label string, level int) bool {
	r, ok := b.runs[label]
	return ok && r.acc[level] != nil
}

// Succeeded counts the successful counted requests added so far, for
// the exit status of `servebench run` (1 when none succeeded).
func (b *Builder) Succeeded() int {
	n := 0
	for _, r := range b.runs {
		for _, a := range r.acc {
			n += a.Succeeded()
		}
	}
	return n
}

// BatchRecords is records[] of the report (see the package's
// BatchRecords).
func (b *Builder) BatchRecords() []document.BatchRecord {
	var out []document.BatchRecord
	for _, label := range b.order() {
		r := b.runs[label]
		if r.header == nil || load.Method(r.header.Run.Method) != load.Batch {
			continue
		}
		wl := workload.Scenario(r.header.Run.Scenario).BatchWorkload()
		for _, p := range r.header.Levels {
			rs := r.batch[p.Level]
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

// Document is the whole report document: Runs, BatchRecords, run_dates
// from the runs' start times, gpu when all runs agree on it,
// calibration[] lifted from the runs' calibration records (launch
// profiles), complete false when any run is incomplete, and for batch runs
// the method in words and the top-level runtime and profile (each where
// all runs agree on it) as in vllm-text-image-example.json.
func (b *Builder) Document() document.Document {
	doc := document.Document{Runs: b.Runs(), Records: b.BatchRecords()}
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
	doc.Method = batchMethod(b.headers)
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
