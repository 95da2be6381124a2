package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
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
	// the turns of multi-turn levels (issue 14).
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
func profileString(p *document.Profile) string {
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
		b.Table = sweepTable(r.Sweep.Levels)
		if sec := latencySection(r.Sweep.Levels); sec != nil {
			b.Sections = append(b.Sections, *sec)
		}
		if t, ok := turnTable(r.Sweep.Levels); ok {
			b.Sections = append(b.Sections, Section{Title: "turns: each session's turn k, per level", Table: t})
		}
	case KindBatch:
		b.Table = batchTable(r.Records)
	}
	if len(r.Files) > 1 {
		b.Details = append(b.Details, "merged from "+strings.Join(r.Files, ", "))
	}
	return b
}

func sweepDetails(r *document.Run) []string {
	var d []string
	switch {
	case r.Trace != nil:
		d = append(d, traceDetails(r.Trace))
	case len(r.Mix) > 0:
		d = append(d, mixDetails(r.Mix, r.MaxTokens))
	default:
		d = append(d, fmt.Sprintf("prompt %d tok, max %d output tok", r.PromptTokens, r.MaxTokens))
	}
	if r.Method != "" || r.API != "" {
		d = append(d, strings.TrimSpace("method "+r.Method+" "+apiPart(r.API)))
	}
	if c := connectionDetail(r.Connection); c != "" {
		d = append(d, c)
	}
	kv := r.KVCache
	if kv.Dtype != nil || kv.Blocks != nil || kv.BlockSize != nil || kv.GPUMemoryUtilization != nil {
		d = append(d, fmt.Sprintf("KV cache: dtype %s, %s blocks × %s tok, gpu_memory_utilization %s",
			strOrNull(kv.Dtype), intOrNull(kv.Blocks), intOrNull(kv.BlockSize), floatOrNull(kv.GPUMemoryUtilization, -1)))
	}
	if r.GPU != nil {
		g := *r.GPU
		if r.GPUGiB != nil {
			g += " (" + num(*r.GPUGiB, 2) + " GiB)"
		}
		d = append(d, "GPU: "+g)
	}
	if r.Runtime != nil {
		d = append(d, "runtime: "+*r.Runtime)
	}
	if s := r.Server; s != nil {
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
		if len(parts) > 0 {
			d = append(d, "server: "+strings.Join(parts, ", "))
		}
	}
	if r.Profile != nil {
		d = append(d, "profile: "+profileString(r.Profile))
	}
	if c := r.Capacity; c != nil {
		d = append(d, fmt.Sprintf("KV capacity from server log: %s tokens, %s blocks, %s MiB (%s)", intOrNull(c.Tokens), intOrNull(c.Blocks), floatOrNull(c.KVMiB, 1), orNull(c.Source)))
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
	}
	return d
}

// traceDetails describes a replayed trace in words.
func traceDetails(t *document.TraceInfo) string {
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
func mixDetails(m []document.MixClass, maxTokens int) string {
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

var sweepColumns = []sweepColumn{
	{Column{"c", Right}, true, func(l document.Level) string { return strconv.Itoa(l.Concurrency) }},
	{Column{"requests", Right}, true, func(l document.Level) string { return strconv.Itoa(l.Requests) }},
	{Column{"errors", Right}, true, func(l document.Level) string { return strconv.Itoa(l.Errors) }},
	{Column{"throughput tok/s", Right}, true, func(l document.Level) string { return withCI(l, document.FigThroughput, 1) }},
	{Column{"per-request tok/s", Right}, true, func(l document.Level) string {
		if l.ThroughputTokS == nil {
			return Null
		}
		return num(*l.ThroughputTokS/float64(l.Concurrency), 1)
	}},
	{Column{"TTFT p50 ms", Right}, true, func(l document.Level) string { return withCI(l, document.FigTTFTP50, 1) }},
	{Column{"TTFT p95 ms", Right}, true, func(l document.Level) string { return withCI(l, document.FigTTFTP95, 1) }},
	{Column{"TTFT p99 ms", Right}, false, func(l document.Level) string { return withCI(l, document.FigTTFTP99, 1) }},
	{Column{"TPOT p50 ms", Right}, true, func(l document.Level) string { return withCI(l, document.FigTPOTP50, 2) }},
	{Column{"TPOT p95 ms", Right}, false, func(l document.Level) string { return withCI(l, document.FigTPOTP95, 2) }},
	{Column{"ITL p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.ITLP50Ms, 2) }},
	{Column{"ITL p99 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.ITLP99Ms, 2) }},
	{Column{"E2E p50 ms", Right}, false, func(l document.Level) string { return withCI(l, document.FigE2EP50, 1) }},
	{Column{"E2E p95 ms", Right}, false, func(l document.Level) string { return withCI(l, document.FigE2EP95, 1) }},
	{Column{"peak VRAM GiB", Right}, true, func(l document.Level) string { return floatOrNull(l.PeakVRAMGiB, 2) }},
	{Column{"peak KV cache %", Right}, true, func(l document.Level) string { return percent(l.PeakKVCacheUsage) }},
	{Column{"preemptions", Right}, true, func(l document.Level) string { return floatOrNull(l.Preemptions, -1) }},
	{Column{"mean prompt tok", Right}, true, func(l document.Level) string { return floatOrNull(l.MeanPromptTokens, 1) }},
	{Column{"output tok", Right}, false, func(l document.Level) string { return intOrNull(l.OutputTokens) }},
	{Column{"wall s", Right}, false, func(l document.Level) string { return floatOrNull(l.WallSeconds, 2) }},
	{Column{"requested req/s", Right}, false, func(l document.Level) string { return floatOrNull(l.RequestedRate, 2) }},
	{Column{"achieved req/s", Right}, false, func(l document.Level) string { return floatOrNull(l.AchievedRate, 2) }},
	{Column{"schedule lag p99 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.ScheduleLagP99Ms, 1) }},
	// Coordinated omission (issue 14): the lag's median, latencies from
	// the scheduled send time beside the send-time ones, and the verdict.
	{Column{"schedule lag p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.ScheduleLagP50Ms, 1) }},
	{Column{"TTFT sched p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.TTFTSchedP50Ms, 1) }},
	{Column{"TTFT sched p99 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.TTFTSchedP99Ms, 1) }},
	// The send-time E2E mean, only beside the scheduled one (every level
	// has it in the latency section).
	{Column{"E2E mean ms", Right}, false, func(l document.Level) string {
		if l.E2ESchedMeanMs == nil {
			return Null
		}
		return floatOrNull(l.E2EMeanMs, 1)
	}},
	{Column{"E2E sched mean ms", Right}, false, func(l document.Level) string { return floatOrNull(l.E2ESchedMeanMs, 1) }},
	{Column{"E2E sched p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.E2ESchedP50Ms, 1) }},
	{Column{"E2E sched p99 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.E2ESchedP99Ms, 1) }},
	{Column{"client limited", Left}, false, func(l document.Level) string { return yesNo(l.ClientLimited) }},
	{Column{"peak running", Right}, false, func(l document.Level) string { return floatOrNull(l.PeakRequestsRunning, -1) }},
	{Column{"peak waiting", Right}, false, func(l document.Level) string { return floatOrNull(l.PeakRequestsWaiting, -1) }},
	{Column{"errors by reason", Left}, false, func(l document.Level) string { return reasons(l.ErrorsByReason) }},
	// Sessions, shared prefixes and the server's prefix cache (issue 14):
	// prompt tokens sent beside the part served from cache, where the
	// server says.
	{Column{"prompt tok sent", Right}, false, func(l document.Level) string {
		if l.PromptTokensCached == nil && l.PrefixCacheHitRate == nil {
			return Null
		}
		return intOrNull(l.PromptTokensSent)
	}},
	{Column{"cached prompt tok", Right}, false, func(l document.Level) string { return intOrNull(l.PromptTokensCached) }},
	{Column{"prompt cache hit %", Right}, false, func(l document.Level) string { return percent(l.PromptCacheHitRate) }},
	{Column{"server prefix cache hit %", Right}, false, func(l document.Level) string { return percent(l.PrefixCacheHitRate) }},
	// Reasoning models (issue 14); "≈" marks estimated token splits.
	{Column{"TTFR p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.TTFRP50Ms, 1) }},
	{Column{"TTFA p50 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.TTFAP50Ms, 1) }},
	{Column{"TTFA p95 ms", Right}, false, func(l document.Level) string { return floatOrNull(l.TTFAP95Ms, 1) }},
	{Column{"reasoning tok", Right}, false, func(l document.Level) string { return estimated(l.ReasoningTokens, l.ReasoningTokensEstimated) }},
	{Column{"answer tok", Right}, false, func(l document.Level) string { return estimated(l.AnswerTokens, l.ReasoningTokensEstimated) }},
	// Goodput and saturation (issue 15).
	{Column{"goodput req/s", Right}, false, func(l document.Level) string { return floatOrNull(l.GoodputReqS, 2) }},
	{Column{"good %", Right}, false, func(l document.Level) string { return percent(l.GoodputFraction) }},
	{Column{"repeats", Right}, false, func(l document.Level) string {
		if l.Repeats == 0 {
			return Null
		}
		return strconv.Itoa(l.Repeats)
	}},
	{Column{"saturated", Left}, false, func(l document.Level) string { return orNull(l.Saturated) }},
	// Energy and cost: shown where a level has them (a GPU with a power
	// sensor; a --price-per-hour or --price-per-kwh).
	{Column{"energy J", Right}, false, func(l document.Level) string { return floatOrNull(l.EnergyJ, 0) }},
	{Column{"J/out tok", Right}, false, func(l document.Level) string { return floatOrNull(l.JoulesPerOutputToken, 3) }},
	{Column{"mean W", Right}, false, func(l document.Level) string { return floatOrNull(l.MeanPowerW, 1) }},
	{Column{"peak W", Right}, false, func(l document.Level) string { return floatOrNull(l.PeakPowerW, 1) }},
	{Column{"tok/s per W", Right}, false, func(l document.Level) string { return floatOrNull(l.TokSPerWatt, 3) }},
	{Column{"$/M out tok", Right}, false, func(l document.Level) string { return floatOrNull(l.CostUSDPerMTok, 4) }},
}

// withCI formats a figure with its confidence interval as "v ±h", h the
// larger distance from v to an end of the interval (so that v ± h holds
// the whole interval), "v ±∞" when an end is unbounded, and v alone when
// the level has no intervals (documents from before them).
func withCI(l document.Level, f document.Figure, prec int) string {
	e := l.Estimate(f)
	if e.Value == nil {
		return Null
	}
	v := num(*e.Value, prec)
	if l.CIConfidence == nil {
		return v
	}
	if e.Low == nil || e.High == nil {
		return v + " ±∞"
	}
	h := max(*e.Value-*e.Low, *e.High-*e.Value, 0)
	return v + " ±" + num(h, prec)
}

// sweepTable is the level table of a sweep run: the columns of
// examples/multi-backend-sweep.json always, servebench's extra columns where
// some level has them. A run with request classes (--mix) gets a first
// column "class": each level's row is "all", followed by a row per class
// (document.Level.Classes).
func sweepTable(levels []document.Level) Table {
	var t Table
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
		for _, l := range levels {
			all := l
			all.Class = "all"
			rows = append(rows, all)
			rows = append(rows, l.Classes...)
		}
	}
	var cols []sweepColumn
	for _, c := range sweepColumns {
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

// yesNo shows a verdict: "yes", "no", or Null when not judged.
func yesNo(v *bool) string {
	switch {
	case v == nil:
		return Null
	case *v:
		return "yes"
	}
	return "no"
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

func calibrationTable(cs []document.Calibration) Table {
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

// percent formats a 0–1 fraction as a percentage with one decimal.
func percent(v *float64) string {
	if v == nil {
		return Null
	}
	return num(*v*100, 1)
}

func reasons(m map[string]int) string {
	if len(m) == 0 {
		return Null
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// FormatFloat formats *v with prec decimals, nil as Null; exported for the
// sub-packages so every format shows numbers alike.
func FormatFloat(v *float64, prec int) string { return floatOrNull(v, prec) }
