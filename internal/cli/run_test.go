package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/summary"
)

func TestRunFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "ollama", "--url", "http://127.0.0.1:1", "--model", "m"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown backend", []string{"run", "--backend", "foo", "--url", "http://x", "--model", "m"}, `--backend: unknown backend "foo"`},
		{"bad url", []string{"run", "--backend", "vllm", "--url", "localhost:8000", "--model", "m"}, "--url:"},
		{"url with credentials", []string{"run", "--backend", "vllm", "--url", "http://u:secret@h", "--model", "m"}, "--url:"},
		{"ollama completions", append(slices.Clone(base), "--api", "completions"), "--api"},
		{"vllm generate", []string{"run", "--backend", "vllm", "--url", "http://x", "--model", "m", "--api", "generate"}, "--api"},
		{"unknown api", append(slices.Clone(base), "--api", "embed"), "--api"},
		{"scenario", append(slices.Clone(base), "--scenario", "video"), "--scenario"},
		{"image over completions", []string{"run", "--backend", "vllm", "--url", "http://x", "--model", "m", "--api", "completions", "--scenario", "image"}, "--api completions cannot carry images"},
		{"method", append(slices.Clone(base), "--method", "burst"), "--method"},
		{"concurrency zero", append(slices.Clone(base), "--concurrency", "1,0"), "--concurrency"},
		{"concurrency dup", append(slices.Clone(base), "--concurrency", "4,4"), "given twice"},
		{"concurrency text", append(slices.Clone(base), "--concurrency", "a"), "--concurrency"},
		{"requests", append(slices.Clone(base), "--requests", "0"), "--requests"},
		{"repeats", append(slices.Clone(base), "--repeats", "0"), "--repeats"},
		{"warmup", append(slices.Clone(base), "--warmup", "-1"), "--warmup"},
		{"max tokens", append(slices.Clone(base), "--max-tokens", "0"), "--max-tokens"},
		{"prompt tokens", append(slices.Clone(base), "--prompt-tokens", "-5"), "--prompt-tokens"},
		{"image size", append(slices.Clone(base), "--image-size", "12"), "--image-size"},
		{"image format", append(slices.Clone(base), "--image-format", "gif"), "--image-format"},
		{"rate without rate method", append(slices.Clone(base), "--rate", "2"), "--rate, --arrival and --max-concurrency apply only"},
		{"rate missing", append(slices.Clone(base), "--method", "rate"), "--rate is required"},
		{"rate bad", append(slices.Clone(base), "--method", "rate", "--rate", "-1"), "--rate"},
		{"rate with concurrency", append(slices.Clone(base), "--method", "rate", "--rate", "1", "--concurrency", "2"), "--concurrency does not apply"},
		{"arrival", append(slices.Clone(base), "--method", "rate", "--rate", "1", "--arrival", "uniform"), "--arrival"},
		{"max concurrency", append(slices.Clone(base), "--method", "rate", "--rate", "1", "--max-concurrency", "0"), "--max-concurrency"},
		{"timeout", append(slices.Clone(base), "--timeout", "-1s"), "--timeout"},
		{"connection", append(slices.Clone(base), "--connection", "pooled"), `--connection: unknown connection mode "pooled"`},
		{"unknown flag", append(slices.Clone(base), "--bogus"), "-bogus"},
		{"argument", append(slices.Clone(base), "extra"), `unexpected argument "extra"`},
		{"out not writable", append(slices.Clone(base), "--out", "/nonexistent-dir/report.json"), "--out"},
		{"records not writable", append(slices.Clone(base), "--records", "/nonexistent-dir/records.jsonl"), "--records"},
		{"api with backend auto", []string{"run", "--api", "embed"}, `--api "embed": want chat, completions or generate`},
		{"generate on a backend found to be vllm", []string{"run", "--backend", "vllm", "--api", "generate"}, "backend vllm takes chat or completions"},
		{"slo", append(slices.Clone(base), "--slo", "ttft_p95=fast"), "--slo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantUsageLine(t, c.args, c.want) })
	}
}

// wantUsageLine runs args and requires a usage error (exit 2) whose one
// line names want.
func wantUsageLine(t *testing.T, args []string, want string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, &out, &errb)
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("err %v, want a *UsageError", err)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q does not name %q on one line", err, want)
	}
	if ExitCode(err, &errb) != 2 {
		t.Fatal("exit code not 2")
	}
}

func TestRunHelpExplainsEveryFlag(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"run", "--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-backend", "-url", "-model", "-scenario", "-concurrency", "(default \"1,4,16\")", "-method", "(default \"pool\")",
		"-requests", "(default 72)", "-repeats", "(default 3)", "-warmup", "-prompt-tokens", "-max-tokens", "-rate", "-arrival",
		"-max-concurrency", "-api", "-timeout", "(default 5m0s)", "-seed", "-label", "-image-size", "-image-format", "-api-key",
		"-out", "-records", "-quiet", "-slo", "-connection", "(default \"keep-alive\")", "per-request"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// cliRun runs servebench in-process with a cancellable context.
func cliRun(ctx context.Context, args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := Run(ctx, args, &out, &errb)
	return out.String(), errb.String(), err
}

func readDoc(t testing.TB, path string) document.Document {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d document.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("report %s: %v", path, err)
	}
	return d
}

func readRecords(t testing.TB, path string) *record.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := record.DecodeFile(fh)
	if err != nil {
		t.Fatalf("records %s: %v", path, err)
	}
	return f
}

// checkRebuild proves that re-summarizing the saved records gives the
// levels (and batch records) of the report run wrote.
func checkRebuild(t *testing.T, report string, f *record.File) {
	t.Helper()
	got := summary.Document(f)
	got.Tool = readDoc(t, report).Tool
	want, _ := os.ReadFile(report)
	b, _ := json.MarshalIndent(&got, "", "  ")
	if string(b)+"\n" != string(want) {
		t.Fatalf("report rebuilt from records differs from the report run wrote:\n--- rebuilt\n%s\n--- written\n%s", b, want)
	}
}

const integrationMaxTokens = 128

// ollamaTargets are the two paths to the testbed: its native API and its
// OpenAI-compatible /v1.
func ollamaTargets(t *testing.T) []struct{ name, backend, url string } {
	url, _ := testenv.Ollama(t)
	return []struct{ name, backend, url string }{
		{"ollama", "ollama", url},
		{"openai", "openai", strings.TrimRight(url, "/") + "/v1"},
	}
}

// sweepOllama runs levels 1,2,4 against target tg of the testbed with the
// method flags given, then checks what every method must give: a complete
// report (perLevel requests per level, 0 for any), every request verified at
// the requested output tokens and, on the native path, the client's clock
// against Ollama's own timings (checkAgainstServerTimings). It returns the
// report path, the report, the records and stderr.
func sweepOllama(t *testing.T, tg struct{ name, backend, url string }, model string, perLevel int, method ...string) (string, document.Document, *record.File, string) {
	t.Helper()
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	args := append([]string{"run", "--backend", tg.backend, "--url", tg.url, "--model", model,
		"--concurrency", "1,2,4", "--warmup", "1", "--max-tokens", itoa(integrationMaxTokens),
		"--out", report, "--records", recs}, method...)
	_, stderr, err := cliRun(context.Background(), args...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	doc := readDoc(t, report)
	f := readRecords(t, recs)
	checkComplete(t, doc, []int{1, 2, 4}, perLevel)
	checkVerified(t, f, integrationMaxTokens)
	if tg.backend == "ollama" {
		checkAgainstServerTimings(t, doc, f)
	}
	return report, doc, f, stderr
}

func TestRunPoolOnOllama(t *testing.T) {
	_, model := testenv.Ollama(t)
	for _, tg := range ollamaTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			report, doc, f, stderr := sweepOllama(t, tg, model, 12, "--method", "pool", "--requests", "12")
			lv := doc.Runs[0].Levels
			// Throughput per level depends on how busy the machine is
			// while each level runs; BenchmarkOllamaSweep measures it.
			t.Logf("%s: tok/s c1 %.1f c2 %.1f c4 %.1f; TPOT p50 c1 %.3f ms; mean prompt tokens %.1f (sd %.2f, target %d)", tg.name,
				*lv[0].ThroughputTokS, *lv[1].ThroughputTokS, *lv[2].ThroughputTokS, *lv[0].TPOTP50Ms,
				*lv[0].MeanPromptTokens, deref(lv[0].PromptTokensSD), doc.Runs[0].PromptTokens)
			// Ollama has no tokenizer endpoint: the prompt length is
			// calibrated from probe requests, and must land within 2%.
			for i, l := range lv {
				if m := *l.MeanPromptTokens; math.Abs(m-32)/32 > 0.02 || len(l.Warnings) != 0 {
					t.Errorf("level %d: mean prompt tokens %.1f for a 32-token target; warnings %q", i, m, l.Warnings)
				}
			}
			if !strings.Contains(stderr, "c=4") {
				t.Errorf("no progress lines on stderr: %q", stderr)
			}
			checkRebuild(t, report, f)
		})
	}
}

func TestRunBatchOnOllama(t *testing.T) {
	_, model := testenv.Ollama(t)
	for _, tg := range ollamaTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			report, doc, f, stderr := sweepOllama(t, tg, model, 0, "--method", "batch", "--repeats", "3", "--quiet")
			if stderr != "" {
				t.Errorf("--quiet wrote to stderr: %q", stderr)
			}
			if len(doc.Records) != 3 {
				t.Fatalf("%d batch records, want 3", len(doc.Records))
			}
			for i, c := range []int{1, 2, 4} {
				r := doc.Records[i]
				if r.Concurrency != c || r.Repeats != 3 || len(r.Runs) != 3 || r.TotalVerifiedOutputTokens != 3*c*integrationMaxTokens || len(r.Warnings) != 0 {
					t.Errorf("record %d: %+v", i, r)
				}
			}
			lv := doc.Runs[0].Levels
			if lv[0].Requests != 3 || lv[2].Requests != 12 {
				t.Errorf("batch level requests %d, %d; want 3, 12", lv[0].Requests, lv[2].Requests)
			}
			t.Logf("%s: aggregate tok/s c1 %.1f c4 %.1f", tg.name, doc.Records[0].AggregateOutputTokS, doc.Records[2].AggregateOutputTokS)
			checkRebuild(t, report, f)
		})
	}
}

// TestRunInterrupted cancels the run's context (as Ctrl-C does) in the
// middle of the second level and expects a partial report marked
// incomplete and an intact records file.
func TestRunInterrupted(t *testing.T) {
	url, model := testenv.Ollama(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int64
	deps := Deps{NewClient: func(c backend.Config) (backend.Client, error) {
		cl, err := backend.New(c)
		// 3 calibration probes, level 1's 2 warm-ups (its start burst)
		// and 12 requests, level 2's 4 warm-ups and 5 requests.
		return &cancelAfter{Client: cl, n: 3 + 2 + 12 + 4 + 5, done: &done, cancel: cancel}, err
	}}
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	var errb bytes.Buffer
	err := deps.Run(ctx, []string{"run", "--backend", "ollama", "--url", url, "--model", model,
		"--concurrency", "2,4", "--requests", "12", "--warmup", "0", "--max-tokens", "8", "--out", report, "--records", recs, "--quiet"}, io.Discard, &errb)
	stderr := errb.String()
	if err != nil {
		t.Fatalf("interrupted run with successes should exit 0: %v\n%s", err, stderr)
	}
	doc := readDoc(t, report)
	if doc.Complete == nil || *doc.Complete || *doc.Runs[0].Complete {
		t.Fatalf("complete = %v, want false", doc.Complete)
	}
	f := readRecords(t, recs)
	if len(f.RunEnds) != 1 || f.RunEnds[0].Complete {
		t.Fatalf("run_end %+v", f.RunEnds)
	}
	lv := doc.Runs[0].Levels
	if len(lv) != 2 || lv[0].Requests != 12 || lv[1].Requests >= 12 || lv[1].Requests < 5 {
		t.Fatalf("levels %+v", lv)
	}
	checkRebuild(t, report, f)
}

// cancelAfter is the real client that cancels the run after n requests
// (counting the calibration probes), to interrupt it at a known point.
type cancelAfter struct {
	backend.Client
	n      int64
	done   *atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Do(ctx context.Context, req *backend.Request, res *record.Result) {
	c.Client.Do(ctx, req, res)
	if c.done.Add(1) == c.n {
		c.cancel()
	}
}

func checkComplete(t *testing.T, doc document.Document, levels []int, requests int) {
	t.Helper()
	if doc.Complete == nil || !*doc.Complete || len(doc.Runs) != 1 {
		t.Fatalf("report not complete: %+v", doc)
	}
	run := doc.Runs[0]
	if len(run.Levels) != len(levels) {
		t.Fatalf("%d levels", len(run.Levels))
	}
	for i, l := range run.Levels {
		if l.Concurrency != levels[i] || l.Errors != 0 || (requests > 0 && l.Requests != requests) {
			t.Errorf("level %d: concurrency %d requests %d errors %d %v", i, l.Concurrency, l.Requests, l.Errors, l.ErrorsByReason)
		}
		if l.ThroughputTokS == nil || l.TTFTP50Ms == nil || l.TTFTP95Ms == nil || l.TPOTP50Ms == nil || l.MeanPromptTokens == nil {
			t.Errorf("level %d has null request metrics: %+v", i, l)
		}
		if l.PeakVRAMGiB != nil && run.GPU == nil {
			t.Errorf("level %d: telemetry without a GPU", i)
		}
	}
}

// checkVerified: every counted request succeeded with exactly the
// requested output tokens, as the server reported them.
func checkVerified(t *testing.T, f *record.File, want int) {
	t.Helper()
	n := 0
	for _, r := range f.Results {
		if r.Warmup {
			continue
		}
		n++
		if !r.OK() || r.OutputTokens == nil || *r.OutputTokens != want || r.ExpectedOutputTokens != want {
			t.Fatalf("request %d: ok %v output %v (want %d) error %q", r.Seq, r.OK(), r.OutputTokens, want, r.Error)
		}
	}
	if n == 0 {
		t.Fatal("no counted requests recorded")
	}
}

// causalitySlack is how much later than the server's own timings allow
// the client may seem to start a request: it stamps the write after the
// write returned, and on a busy machine its goroutine may run late.
const causalitySlack = 50 * time.Millisecond

// checkAgainstServerTimings holds the client's measurements against
// Ollama's own timings of each request by what stays true however busy
// the machine is (a starved Ollama may forward a whole stream in one
// burst, so client TPOT against eval_duration / eval_count is a benchmark,
// BenchmarkOllamaSweep, not a test):
//
//   - causality, per request: the server's whole handling of a request
//     (total_duration) lies between the client's write and its receipt of
//     the done line, so E2E ≥ total_duration; and the first token exists
//     only after the model was ready (load_duration) and the prompt
//     evaluated (prompt_eval_duration), so TTFT ≥ their sum (both less
//     causalitySlack);
//   - no queue at the server, per level: the testbed decodes four
//     requests at once, so at levels up to 4 a request waits for no other
//     one (serverWait, on the server's own clock, stays below the
//     request's own decode time).
func checkAgainstServerTimings(t *testing.T, doc document.Document, f *record.File) {
	t.Helper()
	slack := int64(causalitySlack)
	for i := range f.Results {
		r := &f.Results[i]
		if r.Warmup {
			continue
		}
		s := r.Server
		if s == nil || s.EvalNS == nil || s.PromptEvalNS == nil || s.TotalNS == nil || s.LoadNS == nil || r.TTFTNS == nil {
			t.Fatalf("request %d lacks server timings or TTFT", r.Seq)
		}
		if r.E2ENS+slack < *s.TotalNS {
			t.Errorf("request %d: E2E %v is shorter than the server's total_duration %v", r.Seq, time.Duration(r.E2ENS), time.Duration(*s.TotalNS))
		}
		if *r.TTFTNS+slack < *s.LoadNS+*s.PromptEvalNS {
			t.Errorf("request %d: TTFT %v is shorter than the server's load %v + prefill %v", r.Seq,
				time.Duration(*r.TTFTNS), time.Duration(*s.LoadNS), time.Duration(*s.PromptEvalNS))
		}
	}
	for _, l := range doc.Runs[0].Levels {
		wait, eval := serverWait(f, doc.Runs[0].Label, l.Concurrency)
		t.Logf("level %d: median server-side wait %.1f ms, median decode %.1f ms", l.Concurrency, wait*1e3, eval*1e3)
		if wait >= eval {
			t.Errorf("level %d: requests waited %.1f ms (median) at the server, no less than their decode %.1f ms: the testbed's four slots should serve up to four at once", l.Concurrency, wait*1e3, eval*1e3)
		}
	}
}

// serverWait returns, over the counted requests of run at level, the
// median time a request spent at the server beyond loading, prefill and
// decode (total − load − prompt_eval − eval, in seconds: the wait for a
// free slot, and the server's own overhead), and the median decode time
// (eval_duration). Both are on the server's clock, so a busy client does
// not change them.
func serverWait(f *record.File, run string, level int) (wait, eval float64) {
	var waits, evals []float64
	for i := range f.Results {
		r := &f.Results[i]
		s := r.Server
		if r.Warmup || r.Run != run || r.Level != level || s == nil || s.TotalNS == nil || s.LoadNS == nil || s.PromptEvalNS == nil || s.EvalNS == nil {
			continue
		}
		waits = append(waits, float64(*s.TotalNS-*s.LoadNS-*s.PromptEvalNS-*s.EvalNS)/1e9)
		evals = append(evals, float64(*s.EvalNS)/1e9)
	}
	return median(waits), median(evals)
}

// TestRunConnectionOnOllama: --connection is recorded in the report (run
// and records header) and said in its table, for both modes, on the real
// server; the default is keep-alive.
func TestRunConnectionOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	for _, mode := range []string{"", "keep-alive", "per-request"} {
		t.Run("mode="+mode, func(t *testing.T) {
			dir := t.TempDir()
			report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
			args := []string{"run", "--backend", "ollama", "--url", url, "--model", model, "--concurrency", "2",
				"--requests", "4", "--warmup", "0", "--max-tokens", "8", "--out", report, "--records", recs, "--quiet"}
			if mode != "" {
				args = append(args, "--connection", mode)
			}
			if _, stderr, err := cliRun(context.Background(), args...); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			want := mode
			if want == "" {
				want = "keep-alive"
			}
			doc := readDoc(t, report)
			if got := doc.Runs[0].Connection; got != want || doc.Runs[0].Levels[0].Errors != 0 {
				t.Errorf("connection %q errors %d, want %q and none", got, doc.Runs[0].Levels[0].Errors, want)
			}
			table, _, err := cliRun(context.Background(), "report", report)
			if err != nil || !strings.Contains(table, "connection "+want+":") {
				t.Errorf("report table does not say the connection mode (%v):\n%s", err, table)
			}
			checkRebuild(t, report, readRecords(t, recs))
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestRunRateOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--method", "rate", "--rate", "20,40", "--arrival", "constant", "--max-concurrency", "4", "--requests", "10",
		"--warmup", "0", "--max-tokens", "8", "--out", report, "--records", recs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	doc := readDoc(t, report)
	lv := doc.Runs[0].Levels
	if len(lv) != 2 || !*doc.Complete {
		t.Fatalf("levels %+v", lv)
	}
	for i, want := range []float64{20, 40} {
		l := lv[i]
		if l.Concurrency != 4 || l.Requests != 10 || l.Errors != 0 || l.RequestedRate == nil || *l.RequestedRate != want {
			t.Fatalf("level %d: %+v", i, l)
		}
		if l.AchievedRate == nil || l.ScheduleLagP99Ms == nil {
			t.Fatalf("level %d lacks achieved rate or schedule lag", i)
		}
		t.Logf("rate %.0f/s: achieved %.1f/s, schedule lag p99 %.2f ms", want, *l.AchievedRate, *l.ScheduleLagP99Ms)
		// Constant arrivals of 10 requests span 9 gaps: the achieved rate
		// can only fall short of the requested one by the sending lag.
		if *l.AchievedRate > want*1.05 || *l.AchievedRate < want*0.5 {
			t.Errorf("level %d: achieved %.1f/s for %.0f/s requested", i, *l.AchievedRate, want)
		}
	}
	if !strings.Contains(stderr, "rate=40/s") {
		t.Errorf("progress lacks the rate level: %q", stderr)
	}
	checkRebuild(t, report, readRecords(t, recs))
}

// TestProgressOnTerminal drives the live mpb lines as they run on a
// terminal (forced: the test's stderr is a buffer) and the plain lines
// otherwise, from the same accumulator, over two levels with a render in
// between (a second level once deadlocked against mpb's render goroutine).
func TestProgressOnTerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var buf bytes.Buffer
		p := newProgress(&buf, false, tty)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, c := range []int{2, 4} {
				p.levelStart(load.Level{Level: c, Concurrency: c, Requests: 3}, 3)
				for i := range 3 {
					out, ttft := 10, int64(20e6)
					p.add(&record.Result{Level: c, Seq: i, StartNS: int64(i) * 1e6, TTFTNS: &ttft, E2ENS: 100e6, OutputTokens: &out, Status: 200})
				}
				time.Sleep(300 * time.Millisecond) // let mpb render
				p.levelEnd()
			}
			p.close()
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("tty=%v: progress deadlocked", tty)
		}
		s := buf.String()
		want := []string{"c=2", "c=4", "3/3", "tok/s", "TTFT p50 20.0 ms", "errors 0"}
		if tty {
			want = append(want, "ETA 0s") // the bar's last render, level done
		}
		for _, want := range want {
			if !strings.Contains(s, want) {
				t.Errorf("tty=%v: progress %q lacks %q", tty, s, want)
			}
		}
	}
	var quiet bytes.Buffer
	p := newProgress(&quiet, true, false)
	p.levelStart(load.Level{Concurrency: 1}, 1)
	p.add(&record.Result{})
	p.levelEnd()
	p.close()
	if quiet.Len() != 0 {
		t.Fatalf("--quiet printed %q", quiet.String())
	}
}

func TestETA(t *testing.T) {
	cases := []struct {
		name        string
		elapsed     time.Duration
		done, total int
		want        string
	}{
		{"nothing done yet", 3 * time.Second, 0, 48, "ETA -"},
		{"a quarter in 10s", 10 * time.Second, 12, 48, "ETA 30s"},
		{"rounded to the second", 1500 * time.Millisecond, 2, 3, "ETA 1s"},
		{"minutes", 90 * time.Second, 1, 3, "ETA 3m0s"},
		{"done", 10 * time.Second, 48, 48, "ETA 0s"},
		{"unknown total", time.Second, 1, 0, "ETA -"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := eta(c.elapsed, c.done, c.total); got != c.want {
				t.Errorf("eta(%v, %d, %d) = %q, want %q", c.elapsed, c.done, c.total, got, c.want)
			}
		})
	}
}

// TestProgressLevelOfRun: with the run planned, each line says which
// level of how many it is and the ETA covers the whole run; a level
// stopped short on a terminal ends in one clean plain line, not a
// half-redrawn bar.
func TestProgressLevelOfRun(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, false)
	p.plan(2, 6)
	for _, c := range []int{2, 4} {
		p.levelStart(load.Level{Level: c, Concurrency: c, Requests: 3}, 3)
		for i := range 3 {
			out, ttft := 10, int64(20e6)
			p.add(&record.Result{Level: c, Seq: i, TTFTNS: &ttft, E2ENS: 100e6, OutputTokens: &out, Status: 200})
		}
		p.levelEnd()
	}
	p.close()
	for _, want := range []string{"servebench: level 1 of 2 c=2 done 3/3", "servebench: level 2 of 2 c=4 done 3/3"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("progress %q lacks %q", buf.String(), want)
		}
	}

	t0 := time.Unix(1000, 0)
	// Level 2 of 2: 3 requests before it, 1 of its 3 done, 6 s into the
	// run: 4 of 6 in 6 s leaves 3 s; the level alone would say 6 s.
	plan := etaPlan{levels: 2, requests: 6, index: 2, doneBefore: 3, runStarted: t0}
	if got := plan.eta(t0.Add(6*time.Second), t0.Add(3*time.Second), 1, 3); got != "run ETA 3s" {
		t.Errorf("run ETA %q, want run ETA 3s", got)
	}
	if got := (etaPlan{index: 2}).eta(t0.Add(6*time.Second), t0.Add(3*time.Second), 1, 3); got != "ETA 6s" {
		t.Errorf("unplanned ETA %q, want the level's, ETA 6s", got)
	}

	var tty bytes.Buffer
	p = newProgress(&tty, false, true)
	p.plan(2, 6)
	p.levelStart(load.Level{Level: 1, Concurrency: 1, Requests: 3}, 3)
	out := 10
	p.add(&record.Result{Level: 1, E2ENS: 100e6, OutputTokens: &out, Status: 200})
	time.Sleep(300 * time.Millisecond) // let mpb render the live line
	p.levelEnd()                       // stopped at 1 of 3 (Ctrl-C)
	p.close()
	s := tty.String()
	last := s[strings.LastIndex(s, "\r\x1b[K"):]
	if !strings.HasPrefix(last, "\r\x1b[Kservebench: level 1 of 2 c=1 stopped 1/3 ") || strings.Count(last, "c=") != 1 || !strings.HasSuffix(last, "\n") {
		t.Errorf("last progress line %q, want one clean stopped line", last)
	}
}
