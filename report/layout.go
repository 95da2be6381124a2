package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// Null is how a missing value is shown: never as 0.
const Null = "—"

// Align is a column's alignment.
type Align int

// Alignments.
const (
	Left Align = iota
	Right
)

// Column is one table column; the header carries the unit.
type Column struct {
	Header string
	Align  Align
}

// Table is rows of already formatted cells. Cells hold plain text; each
// writer escapes them for its format.
type Table struct {
	Columns []Column
	Rows    [][]string
	// Keys is how many leading columns name a row (the load; the class
	// and the load): a table folded to a terminal's width repeats them in
	// every fold. 0 means 1.
	Keys int
}

// Block is one run of the report: a title, details in words, its level
// table and its warnings.
type Block struct {
	Run     *Run
	Title   string
	Details []string
	Table   Table
	// Sections are further tables of the run, written after its level
	// table: the latency table (means and percentiles per level), and
	// the turns of multi-turn levels.
	Sections []Section
	Warnings []string
}

// Layout is the report's content, independent of the output format.
type Layout struct {
	// Files are the inputs.
	Files []string
	// Details are document-wide facts (GPU, runtime, profile, method).
	Details []string
	Blocks  []Block
	// Calibration is the planner-versus-server table; nil when no input
	// has calibration records.
	Calibration *Table
	// Warnings are set-wide findings.
	Warnings []string
	// Sections are further results laid out by other packages (the SLO
	// answer), written after the runs.
	Sections []Section
	// Width is the text writer's width in columns (WriteText): every
	// line of prose is wrapped to it and every table folded to it
	// (FoldTable); 0: no limit, each line whole (--wide).
	Width int
}

// Section is a titled table with lines of text under it.
type Section struct {
	Title string
	Table Table
	Lines []string
}

// Build lays out the report of s.
func Build(s *Set) *Layout {
	l := &Layout{Files: s.Files(), Warnings: s.Warnings}
	for _, src := range s.Sources {
		l.Details = append(l.Details, docDetails(src)...)
	}
	for _, r := range s.Runs {
		l.Blocks = append(l.Blocks, buildBlock(r))
	}
	if len(s.Calibration) > 0 {
		t := calibrationTable(s.Calibration)
		l.Calibration = &t
	}
	return l
}

func docDetails(src Source) []string {
	d := src.Doc
	var out []string
	add := func(k, v string) { out = append(out, src.File+": "+k+": "+v) }
	if d.GPU != nil {
		g := *d.GPU
		if d.GPUGiB != nil {
			g += " (" + num(*d.GPUGiB, 2) + " GiB)"
		}
		add("GPU", g)
	}
	if d.Runtime != nil {
		add("runtime", *d.Runtime)
	}
	if d.Profile != nil {
		add("profile", profileString(d.Profile))
	}
	if d.Method != "" {
		add("method", d.Method)
	}
	if len(d.RunDates) > 0 {
		add("run dates", d.RunDates[0]+" … "+d.RunDates[len(d.RunDates)-1])
	}
	if d.Tool != "" {
		add("written by", d.Tool)
	}
	return out
}

// profileString lists the set knobs of a server profile as key=value.
func profileString(p *record.Profile) string {
	var kv []string
	i := func(k string, v *int) {
		if v != nil {
			kv = append(kv, k+"="+strconv.Itoa(*v))
		}
	}
	b := func(k string, v *bool) {
		if v != nil {
			kv = append(kv, k+"="+strconv.FormatBool(*v))
		}
	}
	i("max_model_len", p.MaxModelLen)
	i("max_num_seqs", p.MaxNumSeqs)
	i("max_num_batched_tokens", p.MaxNumBatchedTokens)
	if p.GPUMemoryUtilization != nil {
		kv = append(kv, "gpu_memory_utilization="+strconv.FormatFloat(*p.GPUMemoryUtilization, 'g', -1, 64))
	}
	b("cuda_graphs", p.CUDAGraphs)
	b("prefix_caching", p.PrefixCaching)
	if len(p.LimitMMPerPrompt) > 0 {
		keys := make([]string, 0, len(p.LimitMMPerPrompt))
		for k := range p.LimitMMPerPrompt {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+strconv.Itoa(p.LimitMMPerPrompt[k]))
		}
		kv = append(kv, "limit_mm_per_prompt="+strings.Join(parts, ","))
	}
	if p.KVCacheDtype != nil {
		kv = append(kv, "kv_cache_dtype="+*p.KVCacheDtype)
	}
	i("parallel", p.Parallel)
	i("context_length", p.ContextLength)
	b("flash_attention", p.FlashAttention)
	i("tensor_parallel_size", p.TensorParallelSize)
	if len(kv) == 0 {
		return Null
	}
	return strings.Join(kv, " ")
}

// simulatedDetails says, for a run predicted by the simulator (run
// --backend sim), that nothing was measured and from what it was
// predicted.
func simulatedDetails(d *document.Run) []string {
	if !d.Simulated {
		return nil
	}
	line := "simulated: predicted by servebench's simulator in virtual time, not measured on a server"
	if s := d.Sim; s != nil {
		line += fmt.Sprintf(" (%s scheduler, %s on %s", s.Scheduler, s.Model, s.GPU)
		if s.Profile != "" {
			line += ", fit " + s.Profile
		}
		line += ")"
	}
	return []string{line}
}

func buildBlock(r *Run) Block {
	b := Block{Run: r, Title: r.Label, Warnings: r.Warnings}
	var who []string
	for _, s := range []string{r.Backend, r.Workload, r.Model} {
		if s != "" && s != r.Label {
			who = append(who, s)
		}
	}
	if r.Kind == KindBatch {
		who = append(who, "batch method")
	}
	if r.Kind == KindSweep && r.Sweep.Simulated {
		who = append(who, "SIMULATED")
	}
	if len(who) > 0 {
		b.Title += " — " + strings.Join(who, ", ")
	}
	switch r.Kind {
	case KindSweep:
		b.Details = append(simulatedDetails(r.Sweep), sweepDetails(r.Sweep)...)
		b.Table = sweepTable(r.Sweep)
		if sec := latencySection(r.Sweep); sec != nil {
			b.Sections = append(b.Sections, *sec)
		}
		if t, ok := turnTable(r.Sweep.Levels); ok {
			b.Sections = append(b.Sections, Section{Title: "turns: each session's turn k, per level", Table: t})
		}
		if t, ok := peopleTable(r.Sweep); ok {
			b.Sections = append(b.Sections, Section{Title: "people: each level's people, their conversations and turns, and the message rate they made", Table: t})
		}
	case KindBatch:
		b.Table = batchTable(r.Records)
	}
	if len(r.Files) > 1 {
		b.Details = append(b.Details, "merged from "+strings.Join(r.Files, ", "))
	}
	return b
}

// sweepDetails are the lines under a sweep's table: what each
// runDetails entry says of the run, then its workload, start, SLO and
// intervals.
func sweepDetails(r *document.Run) []string {
	var d []string
	for _, f := range runDetails {
		if s := f(r); s != "" {
			d = append(d, s)
		}
	}
	d = append(d, workloadDetails(r)...)
	if r.StartedAt != "" {
		d = append(d, "started "+r.StartedAt)
	}
	if r.SLO != "" {
		d = append(d, "goodput counts requests against the SLO "+r.SLO)
	}
	if conf := levelConfidence(r.Levels); conf != nil {
		d = append(d, fmt.Sprintf("± is the %s%% confidence interval (docs/metrics.md)", num(*conf*100, -1)))
		d = append(d, intervalNotes(r.Levels)...)
	}
	return d
}

// runDetails say one thing each of a run, in the order the report lists
// them, "" when the run does not record it: the requests sent, the
// method and API, the connection, the KV cache, the GPU, the runtime, the
// server, the launch profile and the KV capacity from the server's log.
var runDetails = []func(r *document.Run) string{
	requestsDetail,
	func(r *document.Run) string {
		if r.Method == "" && r.API == "" {
			return ""
		}
		return strings.TrimSpace("method " + r.Method + " " + apiPart(r.API))
	},
	func(r *document.Run) string { return connectionDetail(r.Connection) },
	kvCacheDetail,
	gpuDetail,
	func(r *document.Run) string {
		if r.Runtime == nil {
			return ""
		}
		return "runtime: " + *r.Runtime
	},
	serverDetail,
	func(r *document.Run) string {
		if r.Profile == nil {
			return ""
		}
		return "profile: " + profileString(r.Profile)
	},
	func(r *document.Run) string {
		c := r.Capacity
		if c == nil {
			return ""
		}
		return fmt.Sprintf("KV capacity from server log: %s tokens, %s blocks, %s MiB (%s)", intOrNull(c.Tokens), intOrNull(c.Blocks), floatOrNull(c.KVMiB, 1), orNull(c.Source))
	},
}

// requestsDetail is what the run sent: a trace, a mix of classes, or one
// prompt and output length.
func requestsDetail(r *document.Run) string {
	switch {
	case r.Trace != nil:
		return traceDetails(r.Trace)
	case len(r.Mix) > 0:
		return mixDetails(r.Mix, r.MaxTokens)
	}
	return fmt.Sprintf("prompt %d tok, max %d output tok", r.PromptTokens, r.MaxTokens)
}

// kvCacheDetail is the server's KV cache as the run recorded it.
func kvCacheDetail(r *document.Run) string {
	kv := r.KVCache
	if kv.Dtype == nil && kv.Blocks == nil && kv.BlockSize == nil && kv.GPUMemoryUtilization == nil {
		return ""
	}
	return fmt.Sprintf("KV cache: dtype %s, %s blocks × %s tok, gpu_memory_utilization %s",
		strOrNull(kv.Dtype), intOrNull(kv.Blocks), intOrNull(kv.BlockSize), floatOrNull(kv.GPUMemoryUtilization, -1))
}

// gpuDetail is the GPU, with its memory when known.
func gpuDetail(r *document.Run) string {
	if r.GPU == nil {
		return ""
	}
	g := *r.GPU
	if r.GPUGiB != nil {
		g += " (" + num(*r.GPUGiB, 2) + " GiB)"
	}
	return "GPU: " + g
}

// serverDetail is what the server said of itself: version, model,
// context, slots, then its other details by name.
func serverDetail(r *document.Run) string {
	s := r.Server
	if s == nil {
		return ""
	}
	var parts []string
	if s.Version != nil {
		parts = append(parts, "version "+*s.Version)
	}
	if s.Model != nil {
		parts = append(parts, "model "+*s.Model)
	}
	if s.ContextLength != nil {
		parts = append(parts, "context "+strconv.Itoa(*s.ContextLength))
	}
	if s.Slots != nil {
		parts = append(parts, "slots "+strconv.Itoa(*s.Slots))
	}
	keys := make([]string, 0, len(s.Details))
	for k := range s.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+" "+s.Details[k])
	}
	if len(parts) == 0 {
		return ""
	}
	return "server: " + strings.Join(parts, ", ")
}

// traceDetails describes a replayed trace in words.
func traceDetails(t *record.TraceInfo) string {
	s := fmt.Sprintf("trace %s (%s): %d requests over %s s, mean %s tok in, %s tok out, speed ×%s",
		t.File, t.Format, t.Rows, num(t.SpanSeconds, 1), num(t.MeanInputTokens, 1), num(t.MeanOutputTokens, 1), num(t.Speed, -1))
	if t.WindowStartSeconds > 0 || t.WindowSeconds > 0 {
		s += fmt.Sprintf(", window from %s s", num(t.WindowStartSeconds, -1))
		if t.WindowSeconds > 0 {
			s += fmt.Sprintf(" for %s s", num(t.WindowSeconds, -1))
		}
	}
	return s
}

// mixDetails lists a mix's classes and shares; maxTokens is the output
// length every class was given, 0 when each kept its scenario's.
func mixDetails(m []record.MixClass, maxTokens int) string {
	parts := make([]string, len(m))
	for i, c := range m {
		parts[i] = fmt.Sprintf("%s %s%%", c.Class, num(c.Weight*100, 1))
	}
	lengths := " (each class's prompt and output lengths are its scenario's)"
	if maxTokens > 0 {
		lengths = fmt.Sprintf(" (each class's prompt length is its scenario's; %d output tok each)", maxTokens)
	}
	return "mix of request classes: " + strings.Join(parts, ", ") + lengths
}

// connectionDetail says how the run's requests used connections and so
// where their clock started (docs/metrics.md, "The request clock").
func connectionDetail(c string) string {
	switch c {
	case "":
		return ""
	case "keep-alive":
		return "connection keep-alive: TTFT and E2E from the moment each request was written on a pooled connection"
	case "per-request":
		return "connection per-request: a new connection per request, TTFT and E2E from before it was opened (vLLM benchmark client's convention)"
	}
	return "connection " + c
}

// levelConfidence is the confidence of the first level with intervals.
func levelConfidence(ls []document.Level) *float64 {
	for _, l := range ls {
		if l.CIConfidence != nil {
			return l.CIConfidence
		}
	}
	return nil
}

func apiPart(api string) string {
	if api == "" {
		return ""
	}
	return "(" + api + " API)"
}

// sweepColumn is one column of a sweep level table.
type sweepColumn struct {
	Column
	// always shows the column even when every level lacks the value.
	always bool
	cell   func(l document.Level) string
}

// sweepColumns are the wide level table's columns: the load, then every
// figure of the figure table that shows in it, in its order.
func sweepColumns(r *document.Run) []sweepColumn {
	figs := document.Figures()
	var shown []*document.FigureSpec
	for i := range figs {
		if figs[i].Is(document.InTable) {
			shown = append(shown, &figs[i])
		}
	}
	return figureColumns(r, shown, false)
}

// figureColumns are the load column of r and a column per figure; always
// keeps every figure's column even where no level has it (a --columns
// choice), else only the figures marked Always do.
func figureColumns(r *document.Run, figs []*document.FigureSpec, always bool) []sweepColumn {
	cols := []sweepColumn{loadColumn(r)}
	for _, f := range figs {
		align := Right
		if f.Text != nil {
			align = Left
		}
		cols = append(cols, sweepColumn{Column{f.TableHeader(), align}, always || f.Always, func(l document.Level) string { return figureCell(&l, f) }})
	}
	return cols
}

// figureCell is a level's figure as a table shows it: with its interval
// where it has one ("v ±h"), "≈" before an estimate, Null where the level
// lacks it.
func figureCell(l *document.Level, f *document.FigureSpec) string {
	if f.Text != nil {
		return orNull(f.Text(l))
	}
	if f.Interval != nil {
		return withCI(l, f)
	}
	v := f.Value(l)
	if v == nil || !InRange(*v) {
		return Null
	}
	s := f.Format(*v)
	if f.Estimated != nil && f.Estimated(l) {
		return "≈" + s
	}
	return s
}

// withCI formats a figure with its confidence interval as "v ±h", h the
// larger distance from v to an end of the interval (so that v ± h holds
// the whole interval), and v alone when an end could not be bounded at
// the level's requests (intervalNotes says so under the table) or the
// level has no intervals (documents from before them).
func withCI(l *document.Level, f *document.FigureSpec) string {
	e := f.Estimate(l)
	if e.Value == nil {
		return Null
	}
	v := num(*e.Value, f.Prec)
	if l.CIConfidence == nil {
		return v
	}
	if e.Low == nil || e.High == nil {
		return v // left out; intervalNotes says why
	}
	h := max(*e.Value-*e.Low, *e.High-*e.Value, 0)
	return v + " ±" + num(h, f.Prec)
}

// sweepTable is the wide level table of a sweep run: the columns of
// examples/multi-backend-sweep.json always, servebench's extra columns
// where some level has them.
func sweepTable(r *document.Run) Table { return levelTable(r, sweepColumns(r)) }

// sweepTableOf is the level table of a sweep run with the load column and
// the columns of figs (View); always keeps a column no level has.
func sweepTableOf(r *document.Run, figs []*document.FigureSpec, always bool) Table {
	return levelTable(r, figureColumns(r, figs, always))
}

// levelTable is the table of r's levels in columns (those no level has
// left out, unless always). A run with request classes (--mix) gets a
// first column "class": each level's row is "all", followed by a row per
// class (document.Level.Classes), at its level's load.
func levelTable(r *document.Run, columns []sweepColumn) Table {
	t := Table{Keys: 1}
	levels := r.Levels
	rows := levels
	mixed := false
	for _, l := range levels {
		if len(l.Classes) > 0 {
			mixed = true
			rows = nil
			break
		}
	}
	if mixed {
		t.Columns = append(t.Columns, Column{"class", Left})
		t.Keys = 2
		for _, l := range levels {
			all := l
			all.Class = "all"
			rows = append(rows, all)
			for _, c := range l.Classes {
				c.Concurrency = l.Concurrency
				if c.RequestedRate == nil {
					c.RequestedRate = l.RequestedRate
				}
				rows = append(rows, c)
			}
		}
	}
	var cols []sweepColumn
	for _, c := range columns {
		if c.always || anyCell(rows, c.cell) {
			cols = append(cols, c)
			t.Columns = append(t.Columns, c.Column)
		}
	}
	for _, l := range rows {
		var row []string
		if mixed {
			row = append(row, orNull(l.Class))
		}
		for _, c := range cols {
			row = append(row, c.cell(l))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func anyCell(levels []document.Level, cell func(document.Level) string) bool {
	for _, l := range levels {
		if v := cell(l); v != Null && v != "" {
			return true
		}
	}
	return false
}

// batchTable is the table of a batch run, one row per record.
func batchTable(recs []document.BatchRecord) Table {
	t := Table{Columns: []Column{
		{"c", Right}, {"repeats", Right}, {"output tok/request", Right}, {"verified output tok", Right},
		{"aggregate tok/s", Right}, {"per-request tok/s", Right}, {"mean completion s", Right},
		{"mean TPOT ms (incl. prefill)", Right}, {"peak GPU MiB", Right}, {"per-repeat tok/s", Left},
	}}
	for _, r := range recs {
		var reps []string
		for _, run := range r.Runs {
			reps = append(reps, num(run.OutputTokS, 1))
		}
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(r.Concurrency), strconv.Itoa(r.Repeats), strconv.Itoa(r.OutputTokensPerRequest),
			strconv.Itoa(r.TotalVerifiedOutputTokens), num(r.AggregateOutputTokS, 1), num(r.PerRequestOutputTokS, 1),
			num(r.MeanCompletionSeconds, 3), num(r.MeanTPOTMs, 2), floatOrNull(r.PeakObservedGPUMemoryMiB, 0),
			orNull(strings.Join(reps, ", ")),
		})
	}
	return t
}

func calibrationTable(cs []record.Calibration) Table {
	t := Table{Columns: []Column{
		{"model", Left}, {"preset", Left}, {"KV dtype", Left}, {"capacity model", Left}, {"GPU GiB", Right}, {"weights GiB", Right},
		{"utilization", Right}, {"predicted tok", Right}, {"actual tok", Right}, {"error %", Right},
	}}
	for _, c := range cs {
		t.Rows = append(t.Rows, []string{
			c.Model, c.Preset, c.KVCacheDtype, orNull(c.Backend), num(c.GPUGiB, 2), num(c.WeightsGiB, 3),
			num(c.GPUMemoryUtilization, 2), strconv.Itoa(c.PredictedTokens), strconv.Itoa(c.ActualTokens),
			num(c.ErrorPct, 1),
		})
	}
	return t
}

// num formats v with prec decimals (prec < 0: shortest exact form); a
// value out of range (InRange) is Null.
func num(v float64, prec int) string {
	if !InRange(v) {
		return Null
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// floatOrNull formats *v like num, and nil as Null.
func floatOrNull(v *float64, prec int) string {
	if v == nil {
		return Null
	}
	return num(*v, prec)
}

// intOrNull formats *v, and nil as Null.
func intOrNull(v *int) string {
	if v == nil {
		return Null
	}
	return strconv.Itoa(*v)
}

// strOrNull returns *v, and nil or "" as Null.
func strOrNull(v *string) string {
	if v == nil {
		return Null
	}
	return orNull(*v)
}

func orNull(s string) string {
	if s == "" {
		return Null
	}
	return s
}

// FormatFloat formats *v with prec decimals, nil as Null; exported for the
// sub-packages so every format shows numbers alike.
func FormatFloat(v *float64, prec int) string { return floatOrNull(v, prec) }

// intervalNotes says, once per percentile, which figures of the level
// table have no interval at some level because the level had too few
// requests, and how many would give one: "p99 (TTFT, E2E): 72 requests
// give no 95% interval; 368 would".
func intervalNotes(levels []document.Level) []string {
	type gap struct {
		labels   []string
		lo, hi   int
		conf     float64
		pct      float64
		headline string
	}
	var order []string
	gaps := map[string]*gap{}
	figs := document.Figures()
	for i := range figs {
		f := &figs[i]
		if !f.Is(document.InTable) || f.Interval == nil {
			continue
		}
		for j := range levels {
			l := &levels[j]
			e := f.Estimate(l)
			if e.Value == nil || l.CIConfidence == nil || (e.Low != nil && e.High != nil) {
				continue
			}
			key := f.Stat
			if key == "" {
				key = f.Label
			}
			g, ok := gaps[key]
			if !ok {
				g = &gap{lo: l.Requests, hi: l.Requests, conf: *l.CIConfidence, pct: f.Percentile(), headline: key}
				gaps[key], order = g, append(order, key)
			}
			if !slices.Contains(g.labels, f.Latency) && f.Latency != "" {
				g.labels = append(g.labels, f.Latency)
			}
			g.lo, g.hi = min(g.lo, l.Requests), max(g.hi, l.Requests)
		}
	}
	var out []string
	for _, k := range order {
		g := gaps[k]
		head := g.headline
		if len(g.labels) > 0 {
			head += " (" + strings.Join(g.labels, ", ") + ")"
		}
		n := strconv.Itoa(g.lo)
		if g.hi != g.lo {
			n += "–" + strconv.Itoa(g.hi)
		}
		line := fmt.Sprintf("%s: %s requests give no %s%% interval", head, n, num(g.conf*100, -1))
		if need := stats.QuantileSampleSize(g.pct/100, g.conf); need > g.hi {
			line += fmt.Sprintf("; %d would", need)
		}
		out = append(out, line)
	}
	return out
}
