// Package report turns servebench result documents into what people read:
// aligned tables, Markdown, CSV, JSON and Go benchmark lines. Sub-packages
// draw charts (report/chart), write the HTML page (report/html), answer the
// capacity question for a latency budget (report/slo) and compare two
// results (report/compare).
//
// All of them work on a Set: the runs of one or more documents merged by run
// label and normalised into Points, one per concurrency level, so that the
// sweep shape (multi-backend-sweep.json) and the batch shape
// (vllm-text-image-example.json) are drawn and compared alike. Values a
// document does not have stay nil and render as "—", never as 0.
package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/slo"
)

// Kind is the shape a run came from.
type Kind string

// Run kinds.
const (
	// KindSweep is a run of the sweep shape: runs[].levels[].
	KindSweep Kind = "sweep"
	// KindBatch is a run of the batch shape: records[] grouped by label or
	// workload.
	KindBatch Kind = "batch"
)

// Source is one input file and the document read from it.
type Source struct {
	File string
	Doc  *document.Document
}

// Set is the merged contents of one or more result documents.
type Set struct {
	// Sources are the inputs in command-line order.
	Sources []Source
	// Runs are the merged runs in first-seen order.
	Runs []*Run
	// Calibration collects the calibration records of all sources.
	Calibration []record.Calibration
	// Warnings are findings about the set as a whole (document warnings,
	// merge conflicts), as data.
	Warnings []string
}

// Run is one line on a chart: one server configuration and workload over
// several concurrency levels.
type Run struct {
	// Label names the run; runs of several files merge by it.
	Label string
	// Backend is the server family ("vllm", "llamacpp", "ollama", ...).
	Backend string
	// Workload is the scenario of a sweep or the workload of a batch
	// record ("chat", "long", "text", "one_image_per_request").
	Workload string
	// Model is the model the server served, where the document says.
	Model string
	// Kind is the shape the run came from.
	Kind Kind
	// Files are the inputs the run was read from.
	Files []string
	// Sweep is the run as its document had it, levels merged and sorted by
	// concurrency (KindSweep only).
	Sweep *document.Run
	// Records are the batch records, sorted by concurrency (KindBatch
	// only), with derived fields as the document had them.
	Records []document.BatchRecord
	// Doc is the document the run (first) came from, for its GPU,
	// runtime, profile and method.
	Doc *document.Document
	// Points are the run's levels, normalised, sorted by concurrency.
	Points []Point
	// Warnings are findings about the run, as data: the document's own
	// run and level warnings plus what report found (merge conflicts,
	// derived fields that do not recompute).
	Warnings []string
}

// Point is one concurrency level of a run, in the units its name says.
type Point struct {
	Concurrency int
	// Requests and Errors are counted requests and failed requests; nil
	// for batch records, which do not count them.
	Requests, Errors *int
	// ThroughputTokS is output tokens per second of the whole level: a
	// sweep level's throughput_tok_s, or a batch record's
	// aggregate_output_tok_s.
	ThroughputTokS *float64
	// PerRequestTokS is ThroughputTokS / Concurrency: the share of the
	// output rate one concurrent user sees, queueing included (for batch
	// records it is per_request_output_tok_s).
	PerRequestTokS *float64
	// TTFTP50Ms, TTFTP95Ms and TPOTP50Ms are sweep percentiles (docs/metrics.md
	// definitions); nil for batch records, which do not measure them.
	TTFTP50Ms, TTFTP95Ms, TPOTP50Ms *float64
	// BatchTPOTMs is a batch record's mean_tpot_ms: mean batch completion
	// time / output tokens per request. It includes prefill and queueing,
	// so it is not TPOTP50Ms.
	BatchTPOTMs *float64
	// PeakVRAMGiB is peak GPU memory in GiB (batch records'
	// peak_observed_gpu_memory_mib / 1024).
	PeakVRAMGiB *float64
	// PeakKVCacheUsage is the server's peak KV-cache usage, 0–1.
	PeakKVCacheUsage *float64
	// Preemptions is the server's preemption counter delta.
	Preemptions *float64
	// Samples are per-repeat throughputs (tok/s) where the level was
	// repeated (batch runs' output_tok_s); empty otherwise.
	Samples []float64

	// Rate is the requested rate of a rate-method level, requests/s; nil
	// for closed-loop levels and batch records. Level is the sweep level
	// the point was made from, for the figures a Point does not copy
	// (the other percentiles, the confidence intervals, goodput); nil for
	// batch records.
	Rate  *float64
	Level *document.Level
}

// Load is what the point loaded the server with: its requested rate for
// a rate-method level, else its concurrency.
func (p Point) Load() float64 {
	if p.Rate != nil {
		return *p.Rate
	}
	return float64(p.Concurrency)
}

// Estimate is the point's figure f with its confidence interval, from its
// sweep level; zero for batch records.
func (p Point) Estimate(f document.Figure) document.Estimate {
	if p.Level == nil {
		return document.Estimate{}
	}
	return p.Level.Estimate(f)
}

// Figure is the point's figure f: its sweep level's, or for a batch
// record (no level) the examples' figures a batch record has
// (throughput, per-request rate, peak VRAM); nil where the point lacks it.
func (p Point) Figure(f *document.FigureSpec) *float64 {
	if p.Level != nil {
		if f.Value == nil {
			return nil
		}
		return f.Value(p.Level)
	}
	switch f.Key {
	case document.FigThroughput:
		return p.ThroughputTokS
	case "per_request_tok_s":
		return p.PerRequestTokS
	case "peak_vram_gib":
		return p.PeakVRAMGiB
	case document.FigTTFTP50:
		return p.TTFTP50Ms
	case document.FigTTFTP95:
		return p.TTFTP95Ms
	case document.FigTPOTP50:
		return p.TPOTP50Ms
	}
	return nil
}

// Subject is the point as slo.Judge judges it.
func (p Point) Subject() slo.Subject {
	return slo.Subject{Level: p.Level, Figure: p.Figure, Requests: p.Requests, Errors: p.Errors}
}

// ErrorRate is Errors / Requests, nil where either is unknown or there were
// no requests.
func (p Point) ErrorRate() *float64 {
	if p.Requests == nil || p.Errors == nil || *p.Requests == 0 {
		return nil
	}
	r := float64(*p.Errors) / float64(*p.Requests)
	return &r
}

// Options tune how a Set is built.
type Options struct {
	// BatchRecompute recomputes a batch record's derived fields from its
	// runs; nil uses RecomputeBatch.
	BatchRecompute func(document.BatchRecord) Derived
}

// NewSet merges the sources' runs by label. Sweep runs with the same label
// merge their levels when they continue one another (same backend,
// scenario and model, no load in common); runs of one label that collide
// are kept apart as "LABEL (FILE)" with one warning, and a level whose
// concurrency one source repeats keeps the first and is a warning. Batch records group into runs by their label,
// or by workload where they have none, and have their derived fields
// recomputed (a mismatch beyond 1e-6 relative is a warning).
func NewSet(sources []Source, opt Options) *Set {
	if opt.BatchRecompute == nil {
		opt.BatchRecompute = RecomputeBatch
	}
	s := &Set{Sources: sources}
	byLabel := map[string]*Run{}
	for _, src := range sources {
		doc := src.Doc
		for _, w := range doc.Warnings {
			s.Warnings = append(s.Warnings, src.File+": "+w)
		}
		if doc.Complete != nil && !*doc.Complete {
			s.Warnings = append(s.Warnings, src.File+": the run was interrupted; the document holds only what was measured until then")
		}
		s.Calibration = append(s.Calibration, doc.Calibration...)
		for i := range doc.Runs {
			s.addSweep(byLabel, src, &doc.Runs[i])
		}
		for _, rec := range doc.Records {
			s.addBatch(byLabel, src, rec, opt)
		}
	}
	for _, r := range s.Runs {
		r.normalise()
	}
	return s
}

// run returns the run of kind labelled label that src adds to, and whether
// it existed. A label an earlier run of the other kind holds is kept apart:
// within one document (a records file's batch run is both a sweep run and
// batch records) as "LABEL (KIND)", across files as "LABEL (FILE)" with one
// warning.
func (s *Set) run(byLabel map[string]*Run, label string, kind Kind, src Source) (*Run, bool) {
	if r, ok := byLabel[label]; ok && r.Kind != kind {
		if r.Doc == src.Doc {
			label += " (" + string(kind) + ")"
		} else {
			apart := label + " (" + src.File + ")"
			if _, seen := byLabel[apart]; !seen {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: run %q is a %s run but an earlier file has a %s run of that label; kept apart as %q", src.File, label, kind, r.Kind, apart))
			}
			label = apart
		}
	}
	if r, ok := byLabel[label]; ok && r.Kind == kind {
		if !slices.Contains(r.Files, src.File) {
			r.Files = append(r.Files, src.File)
		}
		return r, true
	}
	r := &Run{Label: label, Kind: kind, Files: []string{src.File}, Doc: src.Doc}
	byLabel[label] = r
	s.Runs = append(s.Runs, r)
	return r, false
}

// collides reports whether sweep run dr of another file, labelled as r
// is, is a different run rather than more levels of r: another backend,
// scenario or model, or another start time and a load both measured (two
// commands run with one default label). Two such runs are kept apart
// instead of one's levels being dropped.
func collides(r *Run, dr *document.Run) bool {
	if dr.Backend != r.Backend || dr.Scenario != r.Workload || dr.Model != r.Model {
		return true
	}
	if dr.StartedAt == r.Sweep.StartedAt {
		return false
	}
	for _, l := range dr.Levels {
		if levelIndex(r.Sweep.Levels, l.Concurrency) >= 0 {
			return true
		}
	}
	return false
}

func (s *Set) addSweep(byLabel map[string]*Run, src Source, dr *document.Run) {
	label := dr.Label
	if prev, ok := byLabel[label]; ok && prev.Kind == KindSweep && prev.Doc != src.Doc && collides(prev, dr) {
		apart := label + " (" + src.File + ")"
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: run %q has the label of a run of %s but measured other things at the same loads; shown as %q", src.File, label, prev.Files[0], apart))
		label = apart
	}
	r, existed := s.run(byLabel, label, KindSweep, src)
	if !existed {
		cp := *dr
		cp.Levels = append([]document.Level(nil), dr.Levels...)
		cp.Warnings = append([]string(nil), dr.Warnings...)
		r.Sweep = &cp
		r.Backend, r.Workload, r.Model = dr.Backend, dr.Scenario, dr.Model
		r.Warnings = append(r.Warnings, dr.Warnings...)
		if dr.Complete != nil && !*dr.Complete {
			r.Warnings = append(r.Warnings, "the run was cut short; later levels are missing")
		}
		return
	}
	found := func(w string) {
		r.Warnings = append(r.Warnings, w)
		r.Sweep.Warnings = append(r.Sweep.Warnings, w)
	}
	if dr.Backend != r.Backend || dr.Scenario != r.Workload || dr.Model != r.Model {
		found(fmt.Sprintf("%s has run %q with backend %q, scenario %q, model %q; merged into the run of backend %q, scenario %q, model %q", src.File, dr.Label, dr.Backend, dr.Scenario, dr.Model, r.Backend, r.Workload, r.Model))
	}
	r.Warnings = append(r.Warnings, dr.Warnings...)
	r.Sweep.Warnings = append(r.Sweep.Warnings, dr.Warnings...)
	for _, l := range dr.Levels {
		if i := levelIndex(r.Sweep.Levels, l.Concurrency); i >= 0 {
			found(fmt.Sprintf("concurrency %d appears in %s and again in %s; kept the first", l.Concurrency, r.Files[0], src.File))
			continue
		}
		r.Sweep.Levels = append(r.Sweep.Levels, l)
	}
}

func (s *Set) addBatch(byLabel map[string]*Run, src Source, rec document.BatchRecord, opt Options) {
	label := rec.Label
	if label == "" {
		label = rec.Workload
	}
	r, existed := s.run(byLabel, label, KindBatch, src)
	if !existed {
		r.Workload = rec.Workload
		r.Backend = backendOf(src.Doc.Runtime)
		if sw, ok := byLabel[label]; ok && sw.Kind == KindSweep && sw.Doc == src.Doc {
			// The same run's sweep view knows the server.
			r.Backend, r.Model = sw.Backend, sw.Model
		}
	}
	for _, have := range r.Records {
		if have.Concurrency == rec.Concurrency {
			r.Warnings = append(r.Warnings, fmt.Sprintf("concurrency %d of %q appears twice (%s); kept the first", rec.Concurrency, label, src.File))
			return
		}
	}
	for _, w := range rec.Warnings {
		r.Warnings = append(r.Warnings, fmt.Sprintf("c=%d: %s", rec.Concurrency, w))
	}
	found := CheckBatch(rec, opt.BatchRecompute(rec))
	r.Warnings = append(r.Warnings, found...)
	rec.Warnings = append(append([]string(nil), rec.Warnings...), found...)
	rec.Label = label
	r.Records = append(r.Records, rec)
}

// backendOf names the server family from a batch document's runtime
// string ("vLLM main 7ca49fb…" → "vllm"); "" when unknown.
func backendOf(runtime *string) string {
	if runtime == nil {
		return ""
	}
	f := strings.Fields(*runtime)
	if len(f) == 0 {
		return ""
	}
	name := strings.ToLower(f[0])
	switch name {
	case "llama.cpp", "llama-server", "llamacpp":
		return "llamacpp"
	}
	return name
}

func levelIndex(levels []document.Level, c int) int {
	for i, l := range levels {
		if l.Concurrency == c {
			return i
		}
	}
	return -1
}

// normalise sorts the run's levels and fills Points.
func (r *Run) normalise() {
	switch r.Kind {
	case KindSweep:
		sort.SliceStable(r.Sweep.Levels, func(i, j int) bool { return levelLess(&r.Sweep.Levels[i], &r.Sweep.Levels[j]) })
		var ws []levelWarning
		lc := loadColumn(r.Sweep)
		for i, l := range r.Sweep.Levels {
			p := PointOf(l)
			p.Level = &r.Sweep.Levels[i]
			r.Points = append(r.Points, p)
			at := lc.cell(l)
			for _, w := range l.Warnings {
				ws = append(ws, levelWarning{at, w})
			}
			for _, w := range OutOfRange(l) {
				ws = append(ws, levelWarning{at, w})
			}
		}
		r.Warnings = append(r.Warnings, foldLevelWarnings(ws, lc.words)...)
	case KindBatch:
		sort.SliceStable(r.Records, func(i, j int) bool { return r.Records[i].Concurrency < r.Records[j].Concurrency })
		for _, rec := range r.Records {
			r.Points = append(r.Points, batchPoint(rec))
			for _, w := range OutOfRange(rec) {
				r.Warnings = append(r.Warnings, fmt.Sprintf("c=%d: %s", rec.Concurrency, w))
			}
		}
	}
}

// levelLess orders levels by concurrency, then by requested rate (the
// rate method's levels share their cap on requests in flight).
func levelLess(a, b *document.Level) bool {
	if a.Concurrency != b.Concurrency {
		return a.Concurrency < b.Concurrency
	}
	return a.RequestedRate != nil && b.RequestedRate != nil && *a.RequestedRate < *b.RequestedRate
}

// PointOf is the point of a sweep level (Level is a copy of l).
func PointOf(l document.Level) Point {
	req, errs := l.Requests, l.Errors
	p := Point{
		Concurrency:      l.Concurrency,
		Requests:         &req,
		Errors:           &errs,
		ThroughputTokS:   l.ThroughputTokS,
		TTFTP50Ms:        l.TTFTP50Ms,
		TTFTP95Ms:        l.TTFTP95Ms,
		TPOTP50Ms:        l.TPOTP50Ms,
		PeakVRAMGiB:      l.PeakVRAMGiB,
		PeakKVCacheUsage: l.PeakKVCacheUsage,
		Preemptions:      l.Preemptions,
		Rate:             l.RequestedRate,
		Level:            &l,
	}
	if l.ThroughputTokS != nil {
		v := *l.ThroughputTokS / float64(l.Concurrency)
		p.PerRequestTokS = &v
	}
	return p
}

func batchPoint(rec document.BatchRecord) Point {
	agg, per, tpot := rec.AggregateOutputTokS, rec.PerRequestOutputTokS, rec.MeanTPOTMs
	p := Point{
		Concurrency:    rec.Concurrency,
		ThroughputTokS: &agg,
		PerRequestTokS: &per,
		BatchTPOTMs:    &tpot,
	}
	if rec.PeakObservedGPUMemoryMiB != nil {
		v := *rec.PeakObservedGPUMemoryMiB / 1024
		p.PeakVRAMGiB = &v
	}
	for _, run := range rec.Runs {
		p.Samples = append(p.Samples, run.OutputTokS)
	}
	return p
}

// Find returns the run labelled label, or nil.
func (s *Set) Find(label string) *Run {
	for _, r := range s.Runs {
		if r.Label == label {
			return r
		}
	}
	return nil
}

// Labels lists the run labels in order.
func (s *Set) Labels() []string {
	out := make([]string, len(s.Runs))
	for i, r := range s.Runs {
		out[i] = r.Label
	}
	return out
}

// Files lists the source file names in order.
func (s *Set) Files() []string {
	out := make([]string, len(s.Sources))
	for i, src := range s.Sources {
		out[i] = src.File
	}
	return out
}
