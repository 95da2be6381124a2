package stats

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

func TestPercentile(t *testing.T) {
	// Expected values are NumPy's np.percentile (linear, type 7).
	cases := []struct {
		name string
		xs   []float64
		p    float64
		want float64
		ok   bool
	}{
		{"empty", nil, 50, 0, false},
		{"single", []float64{7}, 95, 7, true},
		{"median even", []float64{4, 1, 3, 2}, 50, 2.5, true},
		{"median odd", []float64{5, 1, 3}, 50, 3, true},
		{"p95 of 1..4", []float64{1, 2, 3, 4}, 95, 3.85, true},
		{"p0 is min", []float64{3, 9, 1}, 0, 1, true},
		{"p100 is max", []float64{3, 9, 1}, 100, 9, true},
		{"p99 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 9.91, true},
		{"clamped above", []float64{1, 2}, 150, 2, true},
		{"NaN p", []float64{1, 2}, math.NaN(), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := append([]float64(nil), c.xs...)
			got, ok := Percentile(c.xs, c.p)
			if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("Percentile(%v, %v) = %v, %v; want %v, %v", c.xs, c.p, got, ok, c.want, c.ok)
			}
			if !reflect.DeepEqual(orig, c.xs) {
				t.Fatalf("input modified: %v", c.xs)
			}
		})
	}
}

func TestMeanStdDev(t *testing.T) {
	if _, ok := Mean(nil); ok {
		t.Fatal("Mean(nil) ok")
	}
	if _, ok := StdDev([]float64{1}); ok {
		t.Fatal("StdDev of one value ok")
	}
	m, _ := Mean([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	sd, _ := StdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || math.Abs(sd-2.138089935299395) > 1e-12 { // sample SD
		t.Fatalf("mean %v sd %v", m, sd)
	}
}

func ip(v int) *int         { return &v }
func i64(v int64) *int64    { return &v }
func ms(v float64) int64    { return int64(v * 1e6) }
func fp(v float64) *float64 { return &v }

// ok builds a successful request: start and e2e in ms, ttft in ms.
func ok(level int, startMs, ttftMs, e2eMs float64, out, prompt int) record.Result {
	return record.Result{
		Level: level, StartNS: ms(startMs), TTFTNS: i64(ms(ttftMs)), E2ENS: ms(e2eMs),
		OutputTokens: ip(out), PromptTokens: ip(prompt), ExpectedOutputTokens: out, Status: 200,
	}
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = null, want %v", name, want)
	}
	if math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Fatalf("%s = %v, want %v", name, *got, want)
	}
}

func TestSummarizeLevel(t *testing.T) {
	rs := []record.Result{
		ok(4, 0, 100, 1100, 11, 500),  // TPOT (1100-100)/10 = 100 ms
		ok(4, 10, 200, 2210, 21, 510), // TPOT 2010/20 = 100.5 ms
		ok(4, 20, 300, 1280, 9, 520),  // TPOT 980/8 = 122.5 ms
		{Level: 4, StartNS: ms(30), E2ENS: ms(50), Status: 500, Reason: record.ReasonHTTP5xx, Error: "500"},
		{Level: 4, StartNS: ms(40), E2ENS: ms(3000), Status: 200, Reason: record.ReasonTruncated, Error: "truncated stream"},
		{Level: 4, Warmup: true, StartNS: 0, E2ENS: ms(99999), OutputTokens: ip(1000)},
	}
	l := SummarizeLevel(rs)
	if l.Concurrency != 4 || l.Requests != 5 || l.Errors != 2 {
		t.Fatalf("concurrency/requests/errors = %d/%d/%d", l.Concurrency, l.Requests, l.Errors)
	}
	if !reflect.DeepEqual(l.ErrorsByReason, map[string]int{"http_5xx": 1, "truncated_stream": 1}) {
		t.Fatalf("errors_by_reason %v", l.ErrorsByReason)
	}
	// Wall: first send 0 → last finish 40+3000 ms (failed requests count).
	near(t, "wall", l.WallSeconds, 3.04)
	if *l.OutputTokens != 41 {
		t.Fatalf("output tokens %d", *l.OutputTokens)
	}
	near(t, "throughput", l.ThroughputTokS, 41/3.04)
	near(t, "ttft p50", l.TTFTP50Ms, 200)
	near(t, "ttft p95", l.TTFTP95Ms, 290)
	near(t, "tpot p50", l.TPOTP50Ms, 100.5)
	near(t, "e2e p50", l.E2EP50Ms, 1280)
	near(t, "mean prompt", l.MeanPromptTokens, 510)
	near(t, "prompt sd", l.PromptTokensSD, 10)
	for _, f := range []*float64{l.PeakVRAMGiB, l.PeakKVCacheUsage, l.Preemptions} {
		if f != nil {
			t.Fatal("telemetry field set from requests")
		}
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "truncated_stream") {
		t.Fatalf("warnings %q", l.Warnings)
	}
}

func TestLevelWarnings(t *testing.T) {
	short := ok(1, 0, 10, 100, 100, 480)
	short.ExpectedOutputTokens = 128
	short.ExpectedPromptTokens = 512
	good := ok(1, 0, 10, 100, 128, 482)
	good.ExpectedPromptTokens = 512
	noCount := ok(1, 0, 10, 100, 0, 500)
	noCount.OutputTokens = nil
	l := SummarizeLevel([]record.Result{short, good, noCount})
	joined := strings.Join(l.Warnings, "\n")
	for _, want := range []string{"1 of 3 successful requests generated a number of output tokens other than the 128", "min 100, max 100", "1 successful requests had no server-reported output token count", "off the 512-token target"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	// Within 2% of target: no prompt warning.
	a, b := ok(1, 0, 10, 100, 8, 505), ok(1, 0, 10, 100, 8, 507)
	a.ExpectedPromptTokens, b.ExpectedPromptTokens = 512, 512
	if w := SummarizeLevel([]record.Result{a, b}).Warnings; len(w) != 0 {
		t.Fatalf("unexpected warnings %q", w)
	}
}

func TestITLUsesChunkTokens(t *testing.T) {
	r := ok(1, 0, 10, 100, 5, 10)
	r.ChunkOffsetsNS = []int64{ms(10), ms(20), ms(60)}
	r.ChunkTokens = []int{1, 1, 4} // last chunk carried 4 tokens over 40 ms
	l := SummarizeLevel([]record.Result{r})
	near(t, "itl p50", l.ITLP50Ms, 10) // gaps: 10, 10, 10, 10, 10
	near(t, "itl p99", l.ITLP99Ms, 10)
	r.ChunkTokens = nil // unknown: one token per chunk
	l = SummarizeLevel([]record.Result{r})
	near(t, "itl p99 without counts", l.ITLP99Ms, 39.7)
}

func TestTPOTNS(t *testing.T) {
	r := ok(1, 0, 100, 1100, 11, 1)
	if v, ok := TPOTNS(&r); !ok || v != 1e8 {
		t.Fatalf("TPOT %v %v", v, ok)
	}
	one := ok(1, 0, 100, 1100, 1, 1)
	if _, ok := TPOTNS(&one); ok {
		t.Fatal("TPOT defined for one output token")
	}
}

func TestRateFields(t *testing.T) {
	var rs []record.Result
	for i := range 5 {
		r := ok(0, float64(i)*100+5, 10, 50, 4, 10) // sent 5 ms late, every 100 ms
		r.ScheduledNS = i64(ms(float64(i) * 100))
		rs = append(rs, r)
	}
	rs[4].StartNS = ms(420) // last one 20 ms late
	l := SummarizeLevel(rs)
	near(t, "achieved rate", l.AchievedRate, 4/0.415)
	near(t, "lag p99", l.ScheduleLagP99Ms, 5+0.96*15)
}

func TestMergeLevel(t *testing.T) {
	dst := document.Level{Requests: 3, ThroughputTokS: fp(10)}
	MergeLevel(&dst, &record.Observations{PeakVRAMGiB: fp(9.3), Preemptions: fp(0), Warnings: []string{"w"}})
	if dst.Requests != 3 || *dst.ThroughputTokS != 10 || *dst.PeakVRAMGiB != 9.3 || *dst.Preemptions != 0 || dst.PeakKVCacheUsage != nil || len(dst.Warnings) != 1 {
		t.Fatalf("merged %+v", dst)
	}
}

// TestDeriveBatchRecordReproducesSeed derives every record of the
// reference document vllm-text-image-example.json from its runs alone and
// compares each derived field with the published one.
func TestDeriveBatchRecordReproducesSeed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "examples", "vllm-text-image-example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc document.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Records) == 0 {
		t.Fatal("seed has no records")
	}
	for _, want := range doc.Records {
		got := DeriveBatchRecord(want.Workload, want.Concurrency, want.OutputTokensPerRequest, want.Runs)
		if len(got.Warnings) != 0 {
			t.Errorf("%s c=%d: warnings %q", want.Workload, want.Concurrency, got.Warnings)
		}
		if got.Repeats != want.Repeats || got.TotalVerifiedOutputTokens != want.TotalVerifiedOutputTokens {
			t.Errorf("%s: repeats/total %d/%d, want %d/%d", want.Workload, got.Repeats, got.TotalVerifiedOutputTokens, want.Repeats, want.TotalVerifiedOutputTokens)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"aggregate_output_tok_s", got.AggregateOutputTokS, want.AggregateOutputTokS},
			{"per_request_output_tok_s", got.PerRequestOutputTokS, want.PerRequestOutputTokS},
			{"mean_completion_seconds", got.MeanCompletionSeconds, want.MeanCompletionSeconds},
			{"mean_tpot_ms", got.MeanTPOTMs, want.MeanTPOTMs},
			{"peak_observed_gpu_memory_mib", *got.PeakObservedGPUMemoryMiB, *want.PeakObservedGPUMemoryMiB},
		} {
			if math.Abs(f.got-f.want) > 1e-9*math.Abs(f.want) {
				t.Errorf("%s c=%d %s = %v, seed %v", want.Workload, want.Concurrency, f.name, f.got, f.want)
			}
		}
		for i, r := range want.Runs {
			if tps := float64(r.GeneratedTokens) / r.WallSeconds; math.Abs(tps-r.OutputTokS) > 1e-9*tps {
				t.Errorf("%s run %d output_tok_s %v, seed %v", want.Workload, i, tps, r.OutputTokS)
			}
		}
	}
}

func TestBatchRecordFromResults(t *testing.T) {
	var rs []record.Result
	// Two repeats of a batch of 2 requests of 4 tokens; repeat 1 is slower.
	for rep, wallMs := range []float64{1000, 2000} {
		base := float64(rep) * 5000
		for j := range 2 {
			r := ok(2, base+float64(j), 10, wallMs-float64(j), 4, 8)
			r.Repeat = rep
			rs = append(rs, r)
		}
	}
	rs = append(rs, record.Result{Level: 2, Warmup: true, StartNS: 0, E2ENS: ms(1e6), OutputTokens: ip(4)})
	rec := BatchRecord("text", 2, 4, rs, []*float64{fp(100), fp(120)})
	if rec.TotalVerifiedOutputTokens != 16 || rec.Repeats != 2 || len(rec.Runs) != 2 {
		t.Fatalf("record %+v", rec)
	}
	if rec.Runs[0].GeneratedTokens != 8 || rec.Runs[0].WallSeconds != 1 || rec.Runs[1].WallSeconds != 2 || rec.Runs[1].OutputTokS != 4 {
		t.Fatalf("runs %+v", rec.Runs)
	}
	if rec.AggregateOutputTokS != 16.0/3 || rec.PerRequestOutputTokS != 16.0/6 || rec.MeanCompletionSeconds != 1.5 || rec.MeanTPOTMs != 375 || *rec.PeakObservedGPUMemoryMiB != 120 {
		t.Fatalf("derived %+v", rec)
	}
	// The level's throughput counts each batch's own wall time, not the
	// 3 s pause between them: it equals the batch record's aggregate.
	l := SummarizeLevel(rs)
	near(t, "batch level wall", l.WallSeconds, 3)
	near(t, "batch level throughput", l.ThroughputTokS, rec.AggregateOutputTokS)
	// A short batch is a warning, not silently averaged in.
	*rs[0].OutputTokens = 3
	if rec := BatchRecord("text", 2, 4, rs, nil); len(rec.Warnings) != 1 || rec.PeakObservedGPUMemoryMiB != nil {
		t.Fatalf("short batch: %+v", rec)
	}
}

// TestThroughputNullVersusZero: a level whose requests all failed
// generated nothing (0 tok/s, measured); successes without a reported
// token count leave throughput unknown (null).
func TestThroughputNullVersusZero(t *testing.T) {
	failed := record.Result{Level: 1, StartNS: 0, E2ENS: ms(500), Status: 503, Reason: record.ReasonHTTP5xx, Error: "503"}
	l := SummarizeLevel([]record.Result{failed, failed})
	near(t, "all failed: throughput", l.ThroughputTokS, 0)
	if l.OutputTokens == nil || *l.OutputTokens != 0 || l.TTFTP50Ms != nil || l.TPOTP50Ms != nil {
		t.Fatalf("all failed: output tokens %v, ttft %v, tpot %v; want 0 and nulls", l.OutputTokens, l.TTFTP50Ms, l.TPOTP50Ms)
	}
	noCount := ok(1, 0, 10, 100, 0, 5)
	noCount.OutputTokens = nil
	if l := SummarizeLevel([]record.Result{noCount, failed}); l.ThroughputTokS != nil || l.OutputTokens != nil {
		t.Fatalf("no reported counts: throughput %v output %v, want null", l.ThroughputTokS, l.OutputTokens)
	}
	if l := SummarizeLevel(nil); l.ThroughputTokS != nil || l.WallSeconds != nil {
		t.Fatal("empty level has a throughput")
	}
}

// TestLiveMatchesLevel: the live line's figures are the report's.
func TestLiveMatchesLevel(t *testing.T) {
	var a Accumulator
	for _, r := range []record.Result{ok(2, 0, 100, 1100, 11, 500), ok(2, 10, 200, 2210, 21, 510), ok(2, 20, 300, 1280, 9, 520),
		{Level: 2, StartNS: ms(30), E2ENS: ms(50), Status: 500, Reason: record.ReasonHTTP5xx, Error: "500"}} {
		a.Add(&r)
	}
	full, live := a.Level(), a.Live()
	if live.Requests != full.Requests || live.Errors != full.Errors || live.Concurrency != full.Concurrency || *live.OutputTokens != *full.OutputTokens {
		t.Fatalf("live %+v, level %+v", live, full)
	}
	near(t, "live throughput", live.ThroughputTokS, *full.ThroughputTokS)
	near(t, "live ttft p50", live.TTFTP50Ms, *full.TTFTP50Ms)
	near(t, "live wall", live.WallSeconds, *full.WallSeconds)
}

// TestMeansAndTails: every latency has its mean and its p50, p90, p95 and
// p99 over the same samples (users compare means with vLLM's
// benchmark output).
func TestMeansAndTails(t *testing.T) {
	var rs []record.Result
	for i := 1; i <= 10; i++ { // TTFT i×10 ms, E2E 1000+i×100 ms, 11 tokens
		r := ok(2, float64(i), float64(i*10), float64(1000+i*100), 11, 32)
		r.ChunkOffsetsNS = []int64{ms(float64(i * 10)), ms(float64(i*10 + i))} // one gap of i ms
		rs = append(rs, r)
	}
	l := SummarizeLevel(rs)
	want := map[string]struct {
		got  *float64
		want float64
	}{
		"ttft mean": {l.TTFTMeanMs, 55}, "ttft p90": {l.TTFTP90Ms, 91}, "ttft p99": {l.TTFTP99Ms, 99.1},
		"e2e mean": {l.E2EMeanMs, 1550}, "e2e p90": {l.E2EP90Ms, 1910}, "e2e p99": {l.E2EP99Ms, 1991},
		// TPOT (E2E−TTFT)/10 = (1000+90i)/10 = 100+9i ms
		"tpot mean": {l.TPOTMeanMs, 149.5}, "tpot p90": {l.TPOTP90Ms, 181.9}, "tpot p99": {l.TPOTP99Ms, 189.19},
		// ITL: gaps 1..10 ms
		"itl mean": {l.ITLMeanMs, 5.5}, "itl p90": {l.ITLP90Ms, 9.1}, "itl p95": {l.ITLP95Ms, 9.55},
	}
	for name, w := range want {
		near(t, name, w.got, w.want)
	}
	empty := SummarizeLevel([]record.Result{{Level: 1, Status: 500, Reason: record.ReasonHTTP5xx, Error: "x"}})
	for _, f := range []*float64{empty.TTFTMeanMs, empty.TPOTMeanMs, empty.ITLMeanMs, empty.E2EMeanMs, empty.TPOTP99Ms, empty.E2EP90Ms} {
		if f != nil {
			t.Fatal("a mean or tail of no successful request is not null")
		}
	}
}

// TestCountsThatCannotBeTrue: records holding token counts that cannot be
// true (an older servebench stored what a hostile server sent) neither
// wrap the level's sums nor enter TPOT; a warning names them.
func TestCountsThatCannotBeTrue(t *testing.T) {
	var rs []record.Result
	for i := range 4 {
		r := ok(1, float64(i*10), 10, 100, 128, 32)
		r.OutputTokens = ip(math.MaxInt64)
		rs = append(rs, r)
	}
	rs = append(rs, ok(1, 50, 10, 100, 128, 32))
	big := ok(1, 60, 10, 100, 129, 1<<40) // prompt above 2^31−1; output max_tokens+1 is fine
	rs = append(rs, big)
	l := SummarizeLevel(rs)
	if *l.OutputTokens != 128+129 || *l.ThroughputTokS < 0 {
		t.Errorf("output tokens %d, throughput %v; want 257 and positive", *l.OutputTokens, *l.ThroughputTokS)
	}
	near(t, "mean prompt", l.MeanPromptTokens, 32)
	if l.TPOTP50Ms == nil || *l.TPOTP50Ms < 0.5 {
		t.Errorf("TPOT p50 %v: a huge count entered TPOT", l.TPOTP50Ms)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "5 successful requests hold token counts that cannot be true (request 0: output_tokens 9223372036854775807") {
		t.Errorf("warnings %q", w)
	}
	// Batch documents: a run's generated_tokens that cannot be a count is
	// left out of the total, which cannot wrap.
	rec := DeriveBatchRecord("text", 2, 4, []document.BatchRun{
		{GeneratedTokens: 8, WallSeconds: 1}, {GeneratedTokens: math.MaxInt64, WallSeconds: 1}, {GeneratedTokens: math.MaxInt64, WallSeconds: 1},
	})
	if rec.TotalVerifiedOutputTokens != 8 || rec.AggregateOutputTokS < 0 || !strings.Contains(strings.Join(rec.Warnings, "\n"), "run 2: generated_tokens 9223372036854775807 cannot be a token count") {
		t.Errorf("total %d aggregate %v warnings %q", rec.TotalVerifiedOutputTokens, rec.AggregateOutputTokS, rec.Warnings)
	}
	huge := DeriveBatchRecord("text", math.MaxInt64/2, math.MaxInt64/2, []document.BatchRun{{GeneratedTokens: 8, WallSeconds: 1}})
	if !strings.Contains(strings.Join(huge.Warnings, "\n"), "differ from") {
		t.Errorf("an overflowing expected total went unnoticed: %q", huge.Warnings)
	}
}

// TestRequestWarningsReachTheLevel: the warnings the client put on a
// request's record (a count left null) are counted in the level.
func TestRequestWarningsReachTheLevel(t *testing.T) {
	r := ok(1, 0, 10, 100, 8, 32)
	r.OutputTokens = nil
	r.Warnings = []string{"server sent completion_tokens 2.7: not a token count; left null"}
	l := SummarizeLevel([]record.Result{r, ok(1, 0, 10, 100, 8, 32)})
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "1 successful requests carry warnings (first: server sent completion_tokens 2.7") {
		t.Errorf("warnings %q", w)
	}
}

// TestITLIgnoresChunkTokensThatCannotBeTrue: a record whose chunk_tokens
// are [0 … 0 N] (Ollama's constant "completion_tokens": 0 taken for a
// running count by an older servebench) counts every chunk as one token:
// ITL p50 is the median gap, not the last gap ÷ N.
func TestITLIgnoresChunkTokensThatCannotBeTrue(t *testing.T) {
	r := ok(1, 0, 10, 1000, 8, 32)
	r.ChunkOffsetsNS = []int64{ms(10), ms(20), ms(30), ms(40), ms(50), ms(60), ms(70), ms(80)}
	r.ChunkTokens = []int{0, 0, 0, 0, 0, 0, 0, 8}
	l := SummarizeLevel([]record.Result{r})
	near(t, "itl p50", l.ITLP50Ms, 10)
	near(t, "itl mean", l.ITLMeanMs, 10)
	r.ChunkTokens = []int{1, 1, 1, 1, 1, 1, 1, 1 << 40} // more than the request could have
	l = SummarizeLevel([]record.Result{r})
	near(t, "itl p50", l.ITLP50Ms, 10)
}

// TestOutputMismatchWithVaryingAsks: when the requests that generated
// another number of output tokens asked for different lengths (people's
// drawn answers), the warning names no single length as asked for.
func TestOutputMismatchWithVaryingAsks(t *testing.T) {
	req := func(i, want, got int) record.Result {
		r := ok(1, float64(i*10), 10, 1000, got, 64)
		r.ExpectedOutputTokens = want
		return r
	}
	w := strings.Join(SummarizeLevel([]record.Result{req(0, 100, 90), req(1, 300, 250), req(2, 50, 50)}).Warnings, "\n")
	if !strings.Contains(w, "2 of 3 successful requests generated a number of output tokens other than each asked for (min 90, max 250)") {
		t.Errorf("warnings %q", w)
	}
	w = strings.Join(SummarizeLevel([]record.Result{req(0, 100, 90), req(1, 100, 95)}).Warnings, "\n")
	if !strings.Contains(w, "other than the 100 asked for (min 90, max 95)") {
		t.Errorf("warnings %q", w)
	}
}
