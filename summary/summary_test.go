package summary

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/servebench/servebench/record"
)

func ip(v int) *int         { return &v }
func i64(v int64) *int64    { return &v }
func fp(v float64) *float64 { return &v }

func res(run string, level, repeat int, startMs, e2eMs int64, out int) record.Result {
	return record.Result{Run: run, Level: level, Repeat: repeat, StartNS: startMs * 1e6, E2ENS: e2eMs * 1e6,
		TTFTNS: i64(e2eMs * 1e6 / 4), OutputTokens: ip(out), ExpectedOutputTokens: out, Status: 200}
}

func TestRunsAppliesPlanTelemetryAndCompleteness(t *testing.T) {
	gpu := "GPU X"
	f := &record.File{
		Headers: []record.Header{
			{Run: record.Run{Label: "rate-run", Backend: "vllm", Method: "rate", StartedAt: "2026-11-29 18:00 UTC", GPU: &gpu, Warnings: []string{"h"}},
				Levels: []record.LevelPlan{{Level: 0, Concurrency: 64, Requests: 2, Rate: 2.5, Arrival: "poisson"}}},
			{Run: record.Run{Label: "batch-run", Backend: "ollama", Scenario: "image", Method: "batch", MaxTokens: 4, StartedAt: "2026-11-29 18:05 UTC", GPU: &gpu},
				Levels: []record.LevelPlan{{Level: 2, Concurrency: 2, Repeats: 2}}},
		},
		Results: []record.Result{
			res("rate-run", 0, 0, 0, 100, 4), res("rate-run", 0, 0, 400, 100, 4),
			res("batch-run", 2, 0, 0, 1000, 4), res("batch-run", 2, 0, 0, 1000, 4),
			res("batch-run", 2, 1, 2000, 1000, 4), res("batch-run", 2, 1, 2000, 500, 4),
		},
		LevelEnds: []record.LevelEnd{
			{Run: "rate-run", Level: 0, Fields: &record.Observations{PeakVRAMGiB: fp(7.5)}},
			{Run: "batch-run", Level: 2, RepeatGPUMemoryMiB: []*float64{fp(100), fp(150)}},
		},
		RunEnds: []record.RunEnd{{Run: "rate-run", Complete: true, Warnings: []string{"e"}}},
	}
	runs := Runs(f)
	if len(runs) != 2 || runs[0].Label != "rate-run" || runs[1].Label != "batch-run" {
		t.Fatalf("runs %+v", runs)
	}
	rl := runs[0].Levels[0]
	if rl.Concurrency != 64 || *rl.RequestedRate != 2.5 || *rl.PeakVRAMGiB != 7.5 || rl.Requests != 2 {
		t.Fatalf("rate level %+v", rl)
	}
	if !*runs[0].Complete || *runs[1].Complete {
		t.Fatal("completeness: a run without run_end must be incomplete")
	}
	if !reflect.DeepEqual(runs[0].Warnings, []string{"h", "e"}) {
		t.Fatalf("warnings %q", runs[0].Warnings)
	}
	recs := BatchRecords(f)
	if len(recs) != 1 || recs[0].Workload != "one_image_per_request" || recs[0].Label != "batch-run" || recs[0].TotalVerifiedOutputTokens != 16 || *recs[0].PeakObservedGPUMemoryMiB != 150 {
		t.Fatalf("batch records %+v", recs)
	}
	doc := Document(f)
	if *doc.Complete || len(doc.RunDates) != 2 || doc.GPU == nil || *doc.GPU != gpu || len(doc.Records) != 1 {
		t.Fatalf("document %+v", doc)
	}
	if Succeeded(f) != 6 {
		t.Fatalf("succeeded %d", Succeeded(f))
	}
}

func TestRunWithoutHeader(t *testing.T) {
	f := &record.File{Results: []record.Result{res("x", 1, 0, 0, 10, 2), {Run: "x", Level: 1, Warmup: true}}}
	runs := Runs(f)
	if len(runs) != 1 || runs[0].Label != "x" || runs[0].Levels[0].Concurrency != 1 || *runs[0].Complete {
		t.Fatalf("runs %+v", runs)
	}
}

// TestDocumentBatchRuntime: the batch shape's top-level runtime and profile
// come from the runs, where they all agree.
func TestDocumentBatchRuntime(t *testing.T) {
	batch := func(label, runtime string, seqs int) (record.Header, record.Result) {
		rt := runtime
		return record.Header{Run: record.Run{Label: label, Method: "batch", Scenario: "text", MaxTokens: 4, Runtime: &rt,
				Profile: &record.Profile{MaxNumSeqs: ip(seqs)}},
				Levels: []record.LevelPlan{{Level: 1, Concurrency: 1, Repeats: 1}}},
			res(label, 1, 0, 0, 10, 4)
	}
	h1, r1 := batch("a", "vLLM 0.11.0", 32)
	h2, r2 := batch("b", "vLLM 0.11.0", 32)
	doc := Document(&record.File{Headers: []record.Header{h1, h2}, Results: []record.Result{r1, r2}})
	if doc.Runtime == nil || *doc.Runtime != "vLLM 0.11.0" || doc.Profile == nil || *doc.Profile.MaxNumSeqs != 32 {
		t.Fatalf("runtime %v profile %+v, want the runs' shared ones", doc.Runtime, doc.Profile)
	}
	h3, r3 := batch("c", "vLLM 0.10.2", 64)
	doc = Document(&record.File{Headers: []record.Header{h1, h3}, Results: []record.Result{r1, r3}})
	if doc.Runtime != nil || doc.Profile != nil {
		t.Fatalf("runtime %v profile %+v, want null where the runs differ", doc.Runtime, doc.Profile)
	}
}

// TestRunDocumentCopiesEveryField fills every field of a header's run and
// checks that the report's run has each under the same name and value
// (document.Run embeds record.Run; its warnings and mix are copies).
func TestRunDocumentCopiesEveryField(t *testing.T) {
	var h record.Run
	hv := reflect.ValueOf(&h).Elem()
	for i := range hv.NumField() {
		fillValue(t, hv.Field(i), i+1)
	}
	d := reflect.ValueOf(runDocument(&h))
	for i := range hv.NumField() {
		name := hv.Type().Field(i).Name
		got := d.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("document.Run has no field %s", name)
			continue
		}
		if !reflect.DeepEqual(got.Interface(), hv.Field(i).Interface()) {
			t.Errorf("%s: got %v, want %v", name, got.Interface(), hv.Field(i).Interface())
		}
	}
}

// fillValue sets v to a non-zero value derived from k.
func fillValue(t *testing.T, v reflect.Value, k int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("s", k))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(k))
	case reflect.Uint8:
		v.SetUint(uint64(k % 256))
	case reflect.Float64:
		v.SetFloat(float64(k) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(t, v.Elem(), k)
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(t, v.Field(i), k*100+i)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillValue(t, v.Index(0), k)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillValue(t, key, k)
		fillValue(t, val, k)
		v.SetMapIndex(key, val)
	default:
		t.Fatalf("fillValue: kind %s", v.Kind())
	}
}

// TestLevelsPlannedAsTheyWent: a run whose header lists no levels (find)
// takes each level's plan from its level_end line; a level run in two
// passes has two level_end lines, combined (peaks the larger, preemptions
// summed) and a saturation verdict from a further line; LevelOf reads one
// level as RunsWith does.
func TestLevelsPlannedAsTheyWent(t *testing.T) {
	budget := record.GoodputBudget{TTFTMs: fp(1000)}
	rate := func(level, pass int, startMs int64) record.Result {
		r := res("find", level, pass, startMs, 100, 4)
		r.ScheduledNS = i64(startMs * 1e6)
		return r
	}
	f := &record.File{
		Headers: []record.Header{{Run: record.Run{Label: "find", Method: "rate", SLO: "ttft_p95=1000ms", GoodputBudget: &budget}}},
		Results: []record.Result{rate(0, 0, 0), rate(0, 0, 100), rate(1, 0, 1000), rate(1, 0, 1050), rate(1, 1, 5000), rate(1, 1, 5050)},
		LevelEnds: []record.LevelEnd{
			{Run: "find", Level: 0, Plan: &record.LevelPlan{Level: 0, Concurrency: 64, Requests: 2, Rate: 10}},
			{Run: "find", Level: 1, Plan: &record.LevelPlan{Level: 1, Concurrency: 64, Requests: 2, Rate: 20},
				Fields: &record.Observations{PeakKVCacheUsage: fp(0.5), Preemptions: fp(1)}},
			{Run: "find", Level: 1, Plan: &record.LevelPlan{Level: 1, Concurrency: 64, Requests: 2, Rate: 20, Pass: 1},
				Fields: &record.Observations{PeakKVCacheUsage: fp(0.7), Preemptions: fp(2)}},
			{Run: "find", Level: 1, Saturated: "rate_shortfall: sent 9 req/s of 20"},
		},
	}
	runs := Runs(f)
	ls := runs[0].Levels
	if len(ls) != 2 || *ls[0].RequestedRate != 10 || *ls[1].RequestedRate != 20 || ls[1].Concurrency != 64 {
		t.Fatalf("levels %+v", ls)
	}
	l := ls[1]
	if l.Requests != 4 || l.Repeats != 2 || *l.PeakKVCacheUsage != 0.7 || *l.Preemptions != 3 || l.Saturated != "rate_shortfall: sent 9 req/s of 20" {
		t.Fatalf("level 1 %+v", l)
	}
	if *l.GoodputFraction != 1 || runs[0].SLO != "ttft_p95=1000ms" {
		t.Fatalf("goodput %v against %q", *l.GoodputFraction, runs[0].SLO)
	}
	one, ok := LevelOf(f, "find", 1, Options{})
	if !ok || !reflect.DeepEqual(one, l) {
		t.Fatalf("LevelOf = %+v, %v; want %+v", one, ok, l)
	}
	if _, ok := LevelOf(f, "find", 7, Options{}); ok {
		t.Fatal("LevelOf found a level without results")
	}
	// Options override the header's SLO: no request (TTFT 25 ms) meets 10 ms.
	strict := RunsWith(f, Options{SLO: &SLO{Text: "ttft_p95=10ms", Budget: record.GoodputBudget{TTFTMs: fp(10)}}})
	if got := strict[0].Levels[1]; *got.GoodputFraction != 0 || strict[0].SLO != "ttft_p95=10ms" {
		t.Fatalf("with another SLO: %v against %q", *got.GoodputFraction, strict[0].SLO)
	}
	if f.LevelEnds[1].Fields.Preemptions == nil || *f.LevelEnds[1].Fields.Preemptions != 1 {
		t.Fatal("combining level_end lines changed the file's lines")
	}
}

// TestLevelsInFirstAppearanceOrder: a run's levels are listed in the order
// their first counted Result appears; warm-ups count nowhere.
func TestLevelsInFirstAppearanceOrder(t *testing.T) {
	w16, w4 := res("r", 16, 0, 0, 2, 1), res("r", 4, 0, 0, 2, 1)
	w16.Warmup, w4.Warmup = true, true
	f := &record.File{Results: []record.Result{w16, res("r", 16, 0, 0, 2, 1), res("r", 1, 0, 5, 2, 1), res("r", 16, 0, 1, 2, 1), w4}}
	ls := Runs(f)[0].Levels
	if len(ls) != 2 || ls[0].Concurrency != 16 || ls[0].Requests != 2 || ls[1].Concurrency != 1 {
		t.Fatalf("levels %+v", ls)
	}
}

// TestClasses: a mixed level is summarized overall and per class, each
// class over its own requests alone and at the level's concurrency; a
// level without a mix has no classes.
func TestClasses(t *testing.T) {
	var rs []record.Result
	for k := range 12 {
		r := res("mix", 4, 0, int64(k)*100, 100, 8)
		r.Class = "text"
		if k%3 == 0 {
			r.Class, r.E2ENS = "image", 400*1e6
		}
		rs = append(rs, r)
	}
	warm := res("mix", 4, 0, 0, 1, 8)
	warm.Warmup, warm.Class = true, "long"
	rs = append(rs, warm, res("plain", 1, 0, 0, 100, 8))
	runs := Runs(&record.File{Results: rs})
	l := runs[0].Levels[0]
	if l.Requests != 12 || len(l.Classes) != 2 {
		t.Fatalf("level: %d requests, classes %+v", l.Requests, l.Classes)
	}
	img, txt := l.Classes[0], l.Classes[1]
	if img.Class != "image" || img.Requests != 4 || txt.Class != "text" || txt.Requests != 8 || img.Concurrency != 4 {
		t.Fatalf("classes %s %d (c=%d), %s %d", img.Class, img.Requests, img.Concurrency, txt.Class, txt.Requests)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"image e2e p50", *img.E2EP50Ms, 400}, {"text e2e p50", *txt.E2EP50Ms, 100}, {"overall e2e p50", *l.E2EP50Ms, 100}} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if img.Classes != nil || runs[1].Levels[0].Classes != nil {
		t.Fatal("classes without a mix")
	}
}

// TestResultsLevelIsThePassAlone: for a level whose Results came in one
// pass, ResultsLevel of the Builder that also saw its level_end lines (and
// other levels) is what a Builder of the header and that pass's Results
// alone says; Counted says which levels have a counted Result.
func TestResultsLevelIsThePassAlone(t *testing.T) {
	budget := record.GoodputBudget{TTFTMs: fp(1000)}
	header := record.Header{Run: record.Run{Label: "find", Method: "pool", SLO: "ttft_p95=1000ms", GoodputBudget: &budget},
		Levels: []record.LevelPlan{{Level: 4, Concurrency: 4, Requests: 3}}}
	pass := []record.Result{res("find", 4, 0, 0, 100, 4), res("find", 4, 0, 50, 300, 4), res("find", 4, 0, 90, 200, 8)}
	warm := res("find", 4, 0, 0, 10, 4)
	warm.Warmup = true
	all := NewBuilder(Options{})
	alone := NewBuilder(Options{})
	all.Add(record.Line{Header: &header})
	alone.Add(record.Line{Header: &header})
	all.Add(record.Line{Result: ptrTo(res("find", 2, 0, 0, 100, 4))})
	all.Add(record.Line{LevelEnd: &record.LevelEnd{Run: "find", Level: 2, Fields: &record.Observations{PeakVRAMGiB: fp(3)}}})
	if all.Counted("find", 4) {
		t.Fatal("level 4 counted before its Results")
	}
	for _, r := range append([]record.Result{warm}, pass...) {
		all.Add(record.Line{Result: ptrTo(r)})
		alone.Add(record.Line{Result: ptrTo(r)})
	}
	all.Add(record.Line{LevelEnd: &record.LevelEnd{Run: "find", Level: 4, Saturated: "queue grew",
		Plan: &record.LevelPlan{Level: 4, Concurrency: 6}, Fields: &record.Observations{PeakKVCacheUsage: fp(0.9)}}})
	got, ok := all.ResultsLevel("find", 4)
	want, wantOK := alone.Level("find", 4)
	if !ok || !wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("ResultsLevel = %+v, %v; want %+v", got, ok, want)
	}
	if full, _ := all.Level("find", 4); full.Saturated == "" || full.PeakKVCacheUsage == nil || reflect.DeepEqual(full, got) {
		t.Fatal("Level left out the level_end line: the test would not tell ResultsLevel from it")
	}
	for _, c := range []struct {
		level int
		want  bool
	}{{2, true}, {4, true}, {7, false}} {
		if got := all.Counted("find", c.level); got != c.want {
			t.Errorf("Counted(%d) = %v, want %v", c.level, got, c.want)
		}
		if _, ok := all.ResultsLevel("find", c.level); ok != c.want {
			t.Errorf("ResultsLevel(%d) found %v, want %v", c.level, ok, c.want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
