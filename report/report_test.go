package report

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"

	"golang.org/x/perf/benchfmt"

	"github.com/servebench/servebench/document"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// seedDir holds the reference documents: the repository's examples/.
const seedDir = "../examples"

var seedNames = []string{"multi-backend-sweep.json", "vllm-text-image-example.json"}

// loadSeeds reads the named seeds as sources named by their base names.
func loadSeeds(t testing.TB, names ...string) *Set {
	t.Helper()
	var srcs []Source
	for _, n := range names {
		doc, err := document.ReadFile(filepath.Join(seedDir, n))
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, Source{File: n, Doc: doc})
	}
	return NewSet(srcs, Options{})
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), got, *update, "go test ./report -update")
}

func TestGolden(t *testing.T) {
	writers := map[string]func(*bytes.Buffer, *Set) error{
		"table":    func(b *bytes.Buffer, s *Set) error { return WriteText(b, Build(s)) },
		"markdown": func(b *bytes.Buffer, s *Set) error { return WriteMarkdown(b, Build(s)) },
		"csv":      func(b *bytes.Buffer, s *Set) error { return WriteCSV(b, s) },
		"json":     func(b *bytes.Buffer, s *Set) error { return WriteJSON(b, s) },
		"gobench":  func(b *bytes.Buffer, s *Set) error { return WriteGoBench(b, s) },
	}
	for _, seed := range seedNames {
		for format, write := range writers {
			t.Run(seed+"/"+format, func(t *testing.T) {
				var b bytes.Buffer
				if err := write(&b, loadSeeds(t, seed)); err != nil {
					t.Fatal(err)
				}
				golden(t, strings.TrimSuffix(seed, ".json")+"."+format+".golden", b.Bytes())
			})
		}
	}
}

// TestSeedsHaveNoWarnings checks that both references load clean: in
// particular the batch example's derived fields recompute within 1e-6.
func TestSeedsHaveNoWarnings(t *testing.T) {
	s := loadSeeds(t, seedNames...)
	if len(s.Warnings) > 0 {
		t.Errorf("set warnings: %q", s.Warnings)
	}
	for _, r := range s.Runs {
		if len(r.Warnings) > 0 {
			t.Errorf("run %s: warnings %q", r.Label, r.Warnings)
		}
	}
	if len(s.Runs) != 11 {
		t.Errorf("got %d runs (%v), want 9 sweep + 2 batch", len(s.Runs), s.Labels())
	}
}

// TestBatchMismatchWarns changes each derived field of the batch example
// just beyond the tolerance and expects a warning naming it.
func TestBatchMismatchWarns(t *testing.T) {
	base := loadSeeds(t, "vllm-text-image-example.json").Sources[0].Doc.Records[0]
	cases := []struct {
		name  string
		apply func(r *document.BatchRecord)
		want  string
	}{
		{"aggregate", func(r *document.BatchRecord) { r.AggregateOutputTokS *= 1 + 2e-6 }, "aggregate_output_tok_s is"},
		{"per request", func(r *document.BatchRecord) { r.PerRequestOutputTokS *= 1 - 2e-6 }, "per_request_output_tok_s is"},
		{"mean completion", func(r *document.BatchRecord) { r.MeanCompletionSeconds += 0.001 }, "mean_completion_seconds is"},
		{"mean tpot", func(r *document.BatchRecord) { r.MeanTPOTMs = 8.2 }, "mean_tpot_ms is 8.2 but its runs give 8.21498426027"},
		{"total", func(r *document.BatchRecord) { r.TotalVerifiedOutputTokens = 1535 }, "total_verified_output_tokens is 1535 but its runs give 1536"},
		{"peak", func(r *document.BatchRecord) { v := 23010.0; r.PeakObservedGPUMemoryMiB = &v }, "peak_observed_gpu_memory_mib is 23010 but its runs give 23054"},
		{"peak null", func(r *document.BatchRecord) { r.PeakObservedGPUMemoryMiB = nil }, "peak_observed_gpu_memory_mib is null"},
		{"repeats", func(r *document.BatchRecord) { r.Repeats = 4 }, "repeats is 4 but the record has 3 runs"},
		{"run tok/s", func(r *document.BatchRecord) { r.Runs[1].OutputTokS = 480 }, "runs[1].output_tok_s is 480"},
		{"short run", func(r *document.BatchRecord) { r.Runs[2].GeneratedTokens = 500 }, "runs[2] generated 500 tokens, want 512"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := base
			rec.Runs = append([]document.BatchRun(nil), base.Runs...)
			tc.apply(&rec)
			w := CheckBatch(rec, RecomputeBatch(rec))
			if !strings.Contains(strings.Join(w, "\n"), tc.want) {
				t.Errorf("warnings %q, want one containing %q", w, tc.want)
			}
		})
	}
	if w := CheckBatch(base, RecomputeBatch(base)); len(w) != 0 {
		t.Errorf("unchanged record warns: %q", w)
	}
	// Within tolerance: no warning.
	rec := base
	rec.AggregateOutputTokS *= 1 + 5e-7
	if w := CheckBatch(rec, RecomputeBatch(rec)); len(w) != 0 {
		t.Errorf("change within 1e-6 warns: %q", w)
	}
}

// TestMergeByLabel merges two documents that split one run's levels and
// repeat one level.
func TestMergeByLabel(t *testing.T) {
	doc, err := document.ReadFile(filepath.Join(seedDir, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	first, second := *doc, *doc
	first.Runs = []document.Run{doc.Runs[7]}
	first.Runs[0].Levels = doc.Runs[7].Levels[:2]
	second.Runs = []document.Run{doc.Runs[7]}
	second.Runs[0].Levels = doc.Runs[7].Levels[1:]
	s := NewSet([]Source{{File: "b.json", Doc: &second}, {File: "a.json", Doc: &first}}, Options{})
	if len(s.Runs) != 1 {
		t.Fatalf("got runs %v, want one merged run", s.Labels())
	}
	r := s.Runs[0]
	var cs []int
	for _, p := range r.Points {
		cs = append(cs, p.Concurrency)
	}
	if len(cs) != 3 || cs[0] != 1 || cs[1] != 4 || cs[2] != 16 {
		t.Errorf("concurrencies %v, want [1 4 16]", cs)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "concurrency 4 appears in b.json and again in a.json") {
		t.Errorf("warnings %q, want one about concurrency 4", r.Warnings)
	}
	if got := r.Files; len(got) != 2 {
		t.Errorf("files %v", got)
	}
}

// TestMergeKindsApart merges a sweep run and batch records of one label
// from two files: the batch records stay one run of their own, with one
// warning, however many records they have.
func TestMergeKindsApart(t *testing.T) {
	sweep, err := document.ReadFile(filepath.Join(seedDir, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := document.ReadFile(filepath.Join(seedDir, "vllm-text-image-example.json"))
	if err != nil {
		t.Fatal(err)
	}
	sweep.Runs = sweep.Runs[:1]
	sweep.Runs[0].Label = "text"
	second := batch.Records[0]
	second.Concurrency = 8
	batch.Records = append(batch.Records, second)
	s := NewSet([]Source{{File: "a.json", Doc: sweep}, {File: "b.json", Doc: batch}}, Options{})
	var labels []string
	for _, r := range s.Runs {
		labels = append(labels, r.Label+":"+string(r.Kind))
	}
	if got := strings.Join(labels, " "); got != "text:sweep text (b.json):batch one_image_per_request:batch" {
		t.Errorf("runs %s", got)
	}
	if r := s.Find("text (b.json)"); r == nil || len(r.Points) != 2 {
		t.Errorf("the batch text run should hold both records: %+v", r)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `kept apart as "text (b.json)"`) {
		t.Errorf("warnings %q, want one", s.Warnings)
	}
}

// TestNullsNeverZero checks that null values render as the null mark in
// the text formats and as empty cells in CSV.
func TestNullsNeverZero(t *testing.T) {
	s := loadSeeds(t, "multi-backend-sweep.json")
	var text, md, csv bytes.Buffer
	WriteText(&text, Build(s))
	WriteMarkdown(&md, Build(s))
	WriteCSV(&csv, s)
	// llamacpp-f16kv-chat c=1 has null KV usage and preemptions.
	for name, out := range map[string]string{"table": text.String(), "markdown": md.String()} {
		line := lineWith(out, "161.2")
		if strings.Count(line, Null) != 2 {
			t.Errorf("%s: line %q: want 2 null marks", name, line)
		}
	}
	line := lineWith(csv.String(), "llamacpp-f16kv-chat,sweep,llamacpp,chat,/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf,1,")
	if !strings.Contains(line, "7.22,,9.28,,,") {
		t.Errorf("csv line %q: want empty cells for nulls", line)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestEscaping feeds a model named like a script tag and labels with
// Markdown and control characters through the text formats.
func TestEscaping(t *testing.T) {
	doc, err := document.ReadFile(filepath.Join(seedDir, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs = doc.Runs[:1]
	doc.Runs[0].Model = "<script>alert(1)</script>"
	doc.Runs[0].Label = "a|b *x* [l](http://e)\x1b[31m\n# heading"
	doc.Runs[0].Levels[0].Warnings = []string{"<img src=x onerror=alert(2)>"}
	s := NewSet([]Source{{File: "evil.json", Doc: doc}}, Options{})
	var md, text bytes.Buffer
	if err := WriteMarkdown(&md, Build(s)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<img", "a|b", "*x*", "[l]", "\x1b"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("markdown contains %q unescaped:\n%s", bad, md.String())
		}
	}
	if !strings.Contains(md.String(), `&lt;script&gt;alert(1)&lt;/script&gt;`) {
		t.Errorf("markdown lacks the escaped model name")
	}
	if err := WriteText(&text, Build(s)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "\x1b") {
		t.Errorf("text output passes an escape sequence through")
	}
	// A line break in a label stays on the label's line in both formats.
	for name, out := range map[string]string{"table": text.String(), "markdown": md.String()} {
		if !strings.Contains(lineWith(out, "heading"), "http") {
			t.Errorf("%s: the label's line break split the line:\n%s", name, out)
		}
	}
}

// TestCSVFormulaInjection: text cells from servers and labels that a
// spreadsheet would evaluate as formulas are quoted; numbers are not.
func TestCSVFormulaInjection(t *testing.T) {
	doc, err := document.ReadFile(filepath.Join(seedDir, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs = doc.Runs[:1]
	doc.Runs[0].Label = `=HYPERLINK("http://e","x")`
	doc.Runs[0].Model = "@SUM(A1)"
	doc.Runs[0].Backend = "+cmd"
	doc.Runs[0].Scenario = "-1.5"
	s := NewSet([]Source{{File: "-evil.json", Doc: doc}}, Options{})
	var out bytes.Buffer
	if err := WriteCSV(&out, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'-evil.json", `'=HYPERLINK("http://e","x")`, "sweep", "'+cmd", "-1.5", "'@SUM(A1)"}
	if got := rows[1][:6]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("text cells %q, want %q", got, want)
	}
	if rows[1][6] != "1" {
		t.Errorf("concurrency cell %q", rows[1][6])
	}
}

func TestGoBenchNames(t *testing.T) {
	s := loadSeeds(t, "vllm-text-image-example.json")
	var b bytes.Buffer
	if err := WriteGoBench(&b, s); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "BenchmarkServe/label=text/c=4\t1\t"); n != 3 {
		t.Errorf("got %d lines for text c=4, want 3 (one per repeat):\n%s", n, b.String())
	}
	if got := benchName("a b/c=d\u00a0e\tf"); got != "a_b_c_d_e_f" {
		t.Errorf("benchName = %q", got)
	}
}

// TestGoBenchParses reads the gobench output with benchfmt, the reader
// benchstat uses, and checks names, units and values.
func TestGoBenchParses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGoBench(&b, loadSeeds(t, seedNames...)); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&b, "gobench")
	found := false
	n := 0
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			if se, isErr := r.Result().(*benchfmt.SyntaxError); isErr {
				t.Fatalf("benchfmt: %v", se)
			}
			continue
		}
		n++
		if string(res.Name) == "Serve/label=vllm-fp8kv-chat/c=16" {
			found = true
			if v, ok := res.Value("tok/s"); !ok || v != 1209.9 {
				t.Errorf("tok/s = %v %v, want 1209.9", v, ok)
			}
			if v, ok := res.Value("ttft-p95-ms"); !ok || v != 1294.8 {
				t.Errorf("ttft-p95-ms = %v %v, want 1294.8", v, ok)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if !found || n != 31+6 {
		t.Errorf("found=%v, %d results; want the vllm-fp8kv-chat c=16 line among 31 levels + 6 repeats", found, n)
	}
}

// TestMeansAndTailsInEveryFormat: a level's latency means and p90/p99
// reach every format: the table and Markdown latency section,
// CSV columns, JSON fields and gobench units; documents without means keep
// their tables as they were.
func TestMeansAndTailsInEveryFormat(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	lvl := document.Level{Concurrency: 4, Requests: 8, ThroughputTokS: f(100),
		TTFTP50Ms: f(20), TTFTP95Ms: f(40), TPOTP50Ms: f(5),
		TTFTMeanMs: f(21.5), TTFTP90Ms: f(35.25), TTFTP99Ms: f(48.5),
		TPOTMeanMs: f(5.125), TPOTP90Ms: f(6.5), TPOTP95Ms: f(6.75), TPOTP99Ms: f(7.25),
		ITLMeanMs: f(5.375), ITLP50Ms: f(5), ITLP90Ms: f(8.5), ITLP95Ms: f(9.5), ITLP99Ms: f(12.25),
		E2EMeanMs: f(700.5), E2EP50Ms: f(690), E2EP90Ms: f(750.5), E2EP95Ms: f(780.5), E2EP99Ms: f(799.5)}
	doc := &document.Document{Runs: []document.Run{{Run: record.Run{Label: "r", Backend: "vllm"}, Levels: []document.Level{lvl}}}}
	s := NewSet([]Source{{File: "r.json", Doc: doc}}, Options{})
	render := func(write func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	outs := map[string]string{
		"table":    render(func(b *bytes.Buffer) error { return WriteText(b, Build(s)) }),
		"markdown": render(func(b *bytes.Buffer) error { return WriteMarkdown(b, Build(s)) }),
		"csv":      render(func(b *bytes.Buffer) error { return WriteCSV(b, s) }),
		"json":     render(func(b *bytes.Buffer) error { return WriteJSON(b, s) }),
		"gobench":  render(func(b *bytes.Buffer) error { return WriteGoBench(b, s) }),
	}
	want := map[string][]string{
		"table":    {"mean ms", "p90 ms", "p99 ms", "TTFT        21.5    20.0    35.2    40.0    48.5", "TPOT        5.12    5.00    6.50    6.75    7.25", "E2E        700.5   690.0   750.5   780.5   799.5"},
		"markdown": {"### latency per level: mean and percentiles", "| 4 | ITL | 5.38 | 5.00 | 8.50 | 9.50 | 12.25 |"},
		"csv":      {"ttft_mean_ms", "tpot_p99_ms", "itl_p90_ms", "e2e_p99_ms", ",21.5,35.25,48.5,5.125,6.5,6.75,7.25,5.375,5,8.5,9.5,12.25,700.5,690,750.5,780.5,799.5"},
		"json":     {`"ttft_mean_ms": 21.5`, `"tpot_p99_ms": 7.25`, `"itl_mean_ms": 5.375`, `"e2e_p90_ms": 750.5`, `"e2e_p99_ms": 799.5`},
		"gobench":  {"Unit ttft-mean-ms better=lower", "21.5 ttft-mean-ms", "7.25 tpot-p99-ms", "5.375 itl-mean-ms", "799.5 e2e-p99-ms"},
	}
	for format, subs := range want {
		for _, sub := range subs {
			if !strings.Contains(outs[format], sub) {
				t.Errorf("%s lacks %q:\n%s", format, sub, outs[format])
			}
		}
	}
	// A seed document has no means: its table gets no latency section.
	var b bytes.Buffer
	if err := WriteText(&b, Build(loadSeeds(t, "multi-backend-sweep.json"))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "latency per level") {
		t.Error("a document without means got a latency section")
	}
}

// TestIntervalsInTable: a level with intervals shows each figure as
// "v ±h", h the larger distance to an end, the value alone where an end
// is unbounded, with one note naming the percentile, and says the
// confidence; goodput and saturation get columns
// where some level has them.
func TestIntervalsInTable(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	l := document.Level{Concurrency: 4, Requests: 400, CIConfidence: f(0.95),
		ThroughputTokS: f(1000), ThroughputTokSCILow: f(960), ThroughputTokSCIHigh: f(1010),
		TTFTP50Ms: f(20), TTFTP50MsCILow: f(19), TTFTP50MsCIHigh: f(22),
		TTFTP95Ms: f(80), TTFTP95MsCILow: f(70),
		GoodputReqS: f(12.5), GoodputFraction: f(0.975), Saturated: "throughput_flat: +1.0%"}
	doc := &document.Document{Runs: []document.Run{{Run: record.Run{Label: "r", SLO: "ttft_p95=100ms"}, Levels: []document.Level{l}}}}
	var out bytes.Buffer
	if err := WriteText(&out, Build(NewSet([]Source{{File: "x.json", Doc: doc}}, Options{}))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "∞") {
		t.Errorf("an unbounded interval printed:\n%s", out.String())
	}
	for _, want := range []string{"1000.0 ±40.0", "20.0 ±2.0", "  80.0  ", "p95 (TTFT): 400 requests give no 95% interval", "± is the 95% confidence interval", "goodput counts requests against the SLO ttft_p95=100ms", "goodput req/s", "12.50", "97.5", "throughput_flat: +1.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestE2EMeanColumnOnlyBesideScheduled: the level table's "E2E mean ms"
// column reads beside "E2E sched mean ms" on rate levels; a pool level,
// which has its E2E mean in the latency section, does not get it.
func TestE2EMeanColumnOnlyBesideScheduled(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name  string
		level document.Level
		want  bool
	}{
		{"pool", document.Level{Concurrency: 4, Requests: 8, E2EMeanMs: f(700.5)}, false},
		{"rate", document.Level{Concurrency: 4, Requests: 8, E2EMeanMs: f(700.5), E2ESchedMeanMs: f(900.5)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab := sweepTable(&document.Run{Levels: []document.Level{c.level}})
			got := false
			for _, col := range tab.Columns {
				got = got || col.Header == "E2E mean ms"
			}
			if got != c.want {
				t.Errorf("E2E mean ms column shown %v, want %v (columns %v)", got, c.want, tab.Columns)
			}
		})
	}
}

// TestCollidingLabelsKeptApart: two runs of one default label from two
// commands (another start, the same loads) stay two runs, the second
// named after its file, with one warning; no level is dropped.
func TestCollidingLabelsKeptApart(t *testing.T) {
	doc, err := document.ReadFile(filepath.Join(seedDir, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	first, second := *doc, *doc
	first.Runs = []document.Run{doc.Runs[7]}
	second.Runs = []document.Run{doc.Runs[7]}
	second.Runs[0].StartedAt = "2026-12-01T10:00:00Z"
	s := NewSet([]Source{{File: "a.json", Doc: &first}, {File: "b.json", Doc: &second}}, Options{})
	label := doc.Runs[7].Label
	if got := s.Labels(); len(got) != 2 || got[0] != label || got[1] != label+" (b.json)" {
		t.Fatalf("runs %q, want %q and %q", got, label, label+" (b.json)")
	}
	for _, r := range s.Runs {
		if len(r.Points) != len(doc.Runs[7].Levels) {
			t.Errorf("%s: %d levels, want %d", r.Label, len(r.Points), len(doc.Runs[7].Levels))
		}
	}
	n := 0
	for _, w := range s.Warnings {
		if strings.Contains(w, "has the label of a run of a.json") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q, want one about the shared label", s.Warnings)
	}
}

// TestNoUnboundedIntervalPrinted: a level summarized from 72 requests (the
// default) has a two-sided 95% interval for its p95s and none for its
// p99s. The text and Markdown tables show each p99 without an interval,
// never "±∞", and say so in one note per table naming the requests a p99
// needs (stats.QuantileSampleSize: 368).
func TestNoUnboundedIntervalPrinted(t *testing.T) {
	const n = 72
	if need := stats.QuantileSampleSize(0.95, 0.95); need > n {
		t.Fatalf("a p95 needs %d requests for its interval, more than the %d here", need, n)
	}
	need99 := stats.QuantileSampleSize(0.99, 0.95)
	var rs []record.Result
	for i := range n {
		ttft := int64((20 + (i*37)%n) * 1e6)
		out := 32
		rs = append(rs, record.Result{Level: 4, StartNS: int64(i) * 5e6, TTFTNS: &ttft, E2ENS: ttft + int64(300+i)*1e6,
			OutputTokens: &out, ExpectedOutputTokens: out, Status: 200})
	}
	l := stats.SummarizeLevel(rs)
	l.Concurrency = 4
	if l.TTFTP99MsCIHigh != nil || l.TTFTP95MsCIHigh == nil {
		t.Fatalf("72 requests: p95 interval %v–%v, p99 %v–%v", l.TTFTP95MsCILow, l.TTFTP95MsCIHigh, l.TTFTP99MsCILow, l.TTFTP99MsCIHigh)
	}
	doc := &document.Document{Runs: []document.Run{{Run: record.Run{Label: "r"}, Levels: []document.Level{l, l}}}}
	doc.Runs[0].Levels[1].Concurrency = 8
	note := fmt.Sprintf("72 requests give no 95%% interval; %d would", need99)
	for name, write := range map[string]func(*bytes.Buffer, *Layout) error{
		"text":     func(b *bytes.Buffer, l *Layout) error { return WriteText(b, l) },
		"markdown": func(b *bytes.Buffer, l *Layout) error { return WriteMarkdown(b, l) },
	} {
		var b bytes.Buffer
		if err := write(&b, Build(NewSet([]Source{{File: "x.json", Doc: doc}}, Options{}))); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, bad := range []string{"∞", "Inf", "NaN"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s prints %q:\n%s", name, bad, out)
			}
		}
		if c := strings.Count(out, note); c != 1 {
			t.Errorf("%s: note %q %d times, want once:\n%s", name, note, c, out)
		}
		if !strings.Contains(out, "p99 (TTFT") || strings.Contains(out, "p95 (TTFT") {
			t.Errorf("%s: the note names the wrong percentile:\n%s", name, out)
		}
		if !strings.Contains(out, " ±") {
			t.Errorf("%s shows no interval at all:\n%s", name, out)
		}
	}
}
