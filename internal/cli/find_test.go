package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/internal/liblog"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/summary"
)

func TestFindFlagErrors(t *testing.T) {
	base := []string{"find", "--backend", "ollama", "--url", "http://127.0.0.1:1", "--model", "m"}
	with := func(args ...string) []string { return append(slices.Clone(base), args...) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no slo", base, "find: --slo is required"},
		{"bad slo", with("--slo", "ttft_p95=fast"), "find: --slo:"},
		{"by", with("--slo", "ttft_p95=1s", "--by", "tokens"), `find: --by "tokens"`},
		{"fractional start", with("--slo", "ttft_p95=1s", "--start", "1.5"), "whole concurrency"},
		{"max below start", with("--slo", "ttft_p95=1s", "--start", "8", "--max-load", "4"), "at least the start"},
		{"too few requests for a p95", with("--slo", "ttft_p95=1s", "--requests", "100"), "--requests 100: the SLO's percentiles need at least 400"},
		{"max repeats", with("--slo", "ttft_p95=1s", "--max-repeats", "4"), "--max-repeats 4"},
		{"sessions are run's", with("--slo", "ttft_p95=1s", "--scenario", "multiturn"), "find: sessions"},
		{"max time", with("--slo", "ttft_p95=1s", "--max-time", "-1s"), "--max-time"},
		{"rate flags by concurrency", with("--slo", "ttft_p95=1s", "--arrival", "constant"), "apply only to --by rate"},
		{"confidence", with("--slo", "ttft_p95=1s", "--confidence", "1.5"), "find: --confidence 1.5"},
		{"run's levels are not find's", with("--slo", "ttft_p95=1s", "--concurrency", "1,2"), "-concurrency"},
		{"shared checks name find", []string{"find", "--slo", "ttft_p95=1s", "--backend", "nope"}, "find: --backend"},
		{"argument", with("--slo", "ttft_p95=1s", "extra"), `unexpected argument "extra"`},
		{"a trace is run's", with("--slo", "ttft_p95=1s", "--trace", "t.jsonl"), "find: --trace does not apply to find"},
		{"a ramp is run's", with("--slo", "ttft_p95=1s", "--by", "rate", "--arrival", "ramp", "--ramp", "10s"), "find: --ramp does not apply to find"},
		{"ramp arrival alone", with("--slo", "ttft_p95=1s", "--by", "rate", "--arrival", "ramp"), "find: --arrival ramp does not apply to find"},
		{"bursts are run's", with("--slo", "ttft_p95=1s", "--by", "rate", "--burstiness", "0.25"), "find: --burstiness does not apply to find"},
		{"a duration is run's", with("--slo", "ttft_p95=1s", "--duration", "10s"), "find: --duration does not apply to find"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := cliRun(context.Background(), c.args...)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want a one-line usage error naming %q", err, c.want)
			}
		})
	}
}

func TestFindHelp(t *testing.T) {
	out, _, err := cliRun(context.Background(), "find", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-slo", "-by", "-max-time", "-confidence", "-start", "-max-load", "-max-repeats",
		"-backend", "-url", "-model", "-profile", "-max-tokens", "-requests", "-out", "-records", "400 for a p95"} {
		if !strings.Contains(out, want) {
			t.Errorf("find --help lacks %q", want)
		}
	}
	if strings.Contains(out, "\n  -concurrency") || strings.Contains(out, "-stop-when-saturated") {
		t.Error("find --help lists run's sweep flags")
	}
}

// findDoc is find's --out document: the probes as a servebench document
// and the answers.
type findDoc struct {
	Find []find.Answer `json:"find"`
}

// twoProfiles writes two launch profiles of the 4-slot testbed server on
// two distinct free ports, picked together (with port 0 each launch picks
// its own, and two launches at once can pick the same one).
func twoProfiles(t *testing.T, dir string) (string, string) {
	t.Helper()
	var paths []string
	var ls []net.Listener
	for _, label := range []string{"np4a", "np4b"} {
		path, _ := ollamaProfile(t, dir, label, 4)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		port := fmt.Sprintf("port: %d\n", l.Addr().(*net.TCPAddr).Port)
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), "port: 0\n", port, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	for _, l := range ls {
		l.Close()
	}
	return paths[0], paths[1]
}

// findOnce runs find against a launched 4-slot Ollama (the profile) with
// the test's budget and returns its answer and the document's path. It
// may run on a goroutine of its own: it reports through its error.
func findOnce(dir, profile, name string, extra ...string) (find.Answer, string, error) {
	out := filepath.Join(dir, name+".json")
	args := append([]string{"find", "--profile", profile, "--slo", "ttft_p95=" + findBudget,
		"--max-tokens", "128", "--start", "4", "--max-load", "8", "--max-repeats", "1", "--confidence", "0.99", "--warmup", "1",
		"--quiet", "--out", out, "--records", filepath.Join(dir, name+".jsonl")}, extra...)
	stdout, stderr, err := cliRun(context.Background(), args...)
	if err != nil {
		return find.Answer{}, out, fmt.Errorf("find %s: %v\n%s", name, err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return find.Answer{}, out, err
	}
	var d findDoc
	if err := json.Unmarshal(b, &d); err != nil || len(d.Find) != 1 {
		return find.Answer{}, out, fmt.Errorf("find %s document: %v (%d answers)", name, err, len(d.Find))
	}
	a := d.Find[0]
	if !strings.Contains(stdout, a.Line()) {
		return a, out, fmt.Errorf("find %s: stdout %q lacks the answer line %q", name, stdout, a.Line())
	}
	return a, out, nil
}

// oneStep is the gap two searches' intervals may leave between them and
// still agree: the search's resolution at the lower answer (at least one
// whole load), the precision a search claims for its answer. The edge of
// each interval is a bisection point, and on a shared 2-core machine the
// between-run spread moves it by about one step: two capacity searches on
// the testbed answered 80 (80–95) and 112 (≥ 112), one step of 16 apart.
func oneStep(a, b find.Answer) float64 {
	lo := math.Min(*a.Load, *b.Load)
	return math.Max(1, math.Floor(find.DefaultResolution*lo))
}

// intervalsOverlap reports whether two answers' intervals overlap, or lie
// within gap of each other (a nil end is unbounded).
func intervalsOverlap(a, b find.Answer, gap float64) bool {
	lo := func(x find.Answer) float64 {
		if x.LoadCILow == nil {
			return math.Inf(-1)
		}
		return *x.LoadCILow
	}
	hi := func(x find.Answer) float64 {
		if x.LoadCIHigh == nil {
			return math.Inf(1)
		}
		return *x.LoadCIHigh
	}
	return lo(a) <= hi(b)+gap && lo(b) <= hi(a)+gap
}

// findBudget is the reproducibility test's TTFT budget. On the 4-slot
// testbed with 128-token outputs, TTFT p95 is 60–175 ms at concurrency 4
// (hardly a request waits for a slot; the spread is the shared machine's)
// and 150–460 ms at 8, where half the requests wait for a whole
// generation (measured under a load average of 16–27 on 2 cores); with
// two servers side by side the searches' edges fell at 4–6.
const findBudget = "150ms"

// TestFindReproducible is the acceptance test of `servebench find`: two
// identical searches, each on a launched 4-slot Ollama of its own (launch
// profiles: no other test's requests share their slots); their
// intervals overlap. The two run side by side, so that
// both see the same machine: on the shared 2-core machine the TTFT p95 at
// one concurrency moves by up to 60% from one minute to the next (load
// average 16–27), more than any interval of one search can know, and two
// searches run one after the other disagreed for that reason alone. It also checks that the probes are a normal
// servebench document that report and compare read, and that the answer
// is where the slots put it (the search stays within 4–8). (That the
// search spends fewer requests than a sweep is find's unit test and the
// docs/running.md's measurement: over 4–8 the two cost the same.) 99% intervals,
// --max-repeats 1 and --max-load 8 keep it under a minute. With no
// repeats it failed once on an idle machine, where the edge falls at 8:
// one search passed 8 once and stopped, the other failed it (p95 194 ms)
// and answered 7. The confirmation pass that one repeat allows measures
// the loads that bound each answer again, as find does by default (two
// runs after the change: 26 s each, both answers 8).
func TestFindReproducible(t *testing.T) {
	dir := t.TempDir()
	pa, pb := twoProfiles(t, dir)
	var first, second find.Answer
	var doc string
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() { first, doc, errA = findOnce(dir, pa, "first") })
	wg.Go(func() { second, _, errB = findOnce(dir, pb, "second") })
	wg.Wait()
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	t.Logf("first: %s", first.Line())
	t.Logf("second: %s", second.Line())
	if first.Load == nil || second.Load == nil {
		t.Fatalf("no answer: %s / %s", first.Line(), second.Line())
	}
	// Each interval is a 99% confidence set for the same largest load;
	// two more than one step apart (oneStep) disagree. (The first's interval holding the
	// second's point answer is too strict at the edge: on a fresh CI
	// machine one search passed 8 twice and stopped saturated, "≥ 8", the
	// other failed 8 at 162 ms against 150 and answered 7, "≥ 7"; the
	// intervals overlap and the answers are one step apart.)
	if !intervalsOverlap(first, second, oneStep(first, second)) {
		t.Errorf("the two searches' intervals are more than one step apart:\n%s\n%s", first.Line(), second.Line())
	}
	for _, a := range []find.Answer{first, second} {
		// Concurrency 4 fits the slots and passes; the search stays
		// within 4–8 (--max-load).
		if *a.Load < 4 || *a.Load > 8 || a.LoadCILow != nil && *a.LoadCILow < 4 {
			t.Errorf("answer %v (interval from %v): want 4–8", *a.Load, a.LoadCILow)
		}
		if a.By != slo.ByConcurrency || a.Stop == find.Interrupted || a.Stop == find.FirstLoadFails || a.SLO != "ttft_p95="+findBudget {
			t.Errorf("answer %+v", a)
		}
		// Every passing probe has 400 requests a pass, 20 beyond the
		// p95; a failing one may have fewer, from a pass that stopped
		// once it broke decisively (at least 59 requests, the first
		// look).
		for _, p := range a.Probes {
			if p.Verdict == find.Pass && p.Requests != 400*p.Passes || p.Verdict == find.Fail && (p.Requests > 400*p.Passes || p.Requests < 59) {
				t.Errorf("probe %v (%s): %d requests in %d passes", p.Load, p.Verdict, p.Requests, p.Passes)
			}
		}
	}
	// The probes are a servebench document: report reads it, judges it
	// with the same Judge, and compare pairs it with itself. (At 200
	// columns the SLO table's headers stay on one line.)
	t.Setenv("COLUMNS", "200")
	stdout, stderr, err := cliRun(context.Background(), "report", doc, "--slo", "ttft_p95="+findBudget)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	for _, want := range []string{"holds up to c", "goodput req/s", "± is the 99% confidence interval"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if _, stderr, err := cliRun(context.Background(), "compare", doc, doc); err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
}

// TestFindRecordsRebuild: find's records file rebuilds its document
// (levels planned in their level_end lines), as report FILE.jsonl does.
func TestFindRecordsRebuild(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	out, recs := filepath.Join(dir, "find.json"), filepath.Join(dir, "find.jsonl")
	_, stderr, err := cliRun(context.Background(), "find", "--backend", "ollama", "--url", url, "--model", model,
		"--slo", "ttft_p50=1s", "--max-tokens", "8", "--start", "2", "--max-load", "4", "--warmup", "0", "--quiet",
		"--out", out, "--records", recs)
	if err != nil {
		t.Fatalf("find: %v\n%s", err, stderr)
	}
	f := readRecords(t, recs)
	d := readDoc(t, out)
	if len(f.Headers) != 1 || len(f.Headers[0].Levels) != 0 || f.Headers[0].Run.SLO != "ttft_p50=1000ms" {
		t.Fatalf("header %+v", f.Headers)
	}
	got := summary.Document(f)
	if len(got.Runs) != 1 || len(got.Runs[0].Levels) != len(d.Runs[0].Levels) {
		t.Fatalf("rebuilt %d levels, find wrote %d", len(got.Runs[0].Levels), len(d.Runs[0].Levels))
	}
	for i, l := range d.Runs[0].Levels {
		// 40 requests a pass (20 beyond a p50); 4, where the search ended,
		// was confirmed with a second pass.
		passes := max(l.Repeats, 1)
		g := got.Runs[0].Levels[i]
		if l.Concurrency != g.Concurrency || l.Requests != 40*passes || *l.TTFTP50Ms != *g.TTFTP50Ms || *l.TTFTP50MsCIHigh != *g.TTFTP50MsCIHigh {
			t.Fatalf("level %d: find wrote %d requests at c=%d, records rebuild %d at c=%d", i, l.Requests, l.Concurrency, g.Requests, g.Concurrency)
		}
	}
	if last := d.Runs[0].Levels[len(d.Runs[0].Levels)-1]; last.Concurrency != 4 || last.Repeats != 2 {
		t.Fatalf("the answer's load 4 was not confirmed: %d passes at c=%d", last.Repeats, last.Concurrency)
	}
}

// TestRunStopWhenSaturated: an open-loop sweep whose rates go past what
// the testbed's 4 slots serve ends at the first level that could not be
// sent on schedule, says so, and runs no later level.
func TestRunStopWhenSaturated(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	rates := []float64{20, 160, 640, 2560}
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--method", "rate", "--arrival", "constant", "--rate", "20,160,640,2560", "--max-concurrency", "8",
		"--requests", "64", "--max-tokens", "64", "--warmup", "0", "--stop-when-saturated", "--quiet", "--out", out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	r := readDoc(t, out).Runs[0]
	n := len(r.Levels)
	if n < 2 || n == len(rates) {
		t.Fatalf("%d of %d levels run: want a stop after the first and before the last", n, len(rates))
	}
	for i, l := range r.Levels[:n-1] {
		if l.Saturated != "" {
			t.Fatalf("level %d (%v req/s) saturated before the last run: %q", i, *l.RequestedRate, l.Saturated)
		}
	}
	last := r.Levels[n-1]
	// Beyond the slots: by Little's law the level held achieved rate ×
	// E2E requests in flight on average, more than the 4 slots serve.
	inFlight := *last.AchievedRate * *last.E2EP50Ms / 1000
	if inFlight <= 4 {
		t.Errorf("stopped at %v req/s with %.1f requests in flight on average: not beyond the 4 slots", *last.RequestedRate, inFlight)
	}
	if !strings.HasPrefix(last.Saturated, "rate_shortfall: ") || !strings.Contains(stderr, "the sweep stopped at the first saturated level") {
		t.Errorf("last level saturated %q; stderr %q", last.Saturated, stderr)
	}
	if !*r.Complete || !strings.Contains(strings.Join(r.Warnings, "\n"), "later level") {
		t.Errorf("complete %v, warnings %q", *r.Complete, r.Warnings)
	}
	t.Logf("stopped at %v req/s: %s", *last.RequestedRate, last.Saturated)
}

// TestRunGoodput: run --slo puts goodput in every level; the records
// rebuild the same document; report --slo recounts goodput from records
// against its own budget and says a document cannot be recounted.
func TestRunGoodput(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	out, recs := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--concurrency", "1,4", "--requests", "40", "--max-tokens", "16", "--warmup", "1", "--quiet",
		"--slo", "ttft_p95=10s,tpot_p50=1s", "--out", out, "--records", recs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	d := readDoc(t, out)
	r := d.Runs[0]
	if r.SLO != "ttft_p95=10000ms,tpot_p50=1000ms" || r.GoodputBudget == nil || *r.GoodputBudget.TTFTMs != 10000 {
		t.Fatalf("run SLO %q budget %+v", r.SLO, r.GoodputBudget)
	}
	for _, l := range r.Levels {
		// A generous budget: every request is good.
		if l.GoodputFraction == nil || *l.GoodputFraction != 1 || l.GoodputReqS == nil || *l.GoodputReqS != float64(l.Requests)/(*l.WallSeconds) {
			t.Fatalf("level %d goodput %v req/s, fraction %v", l.Concurrency, l.GoodputReqS, l.GoodputFraction)
		}
		if l.TTFTP95MsCILow == nil || l.ThroughputTokSCILow == nil || *l.CIConfidence != 0.95 {
			t.Fatalf("level %d lacks intervals", l.Concurrency)
		}
	}
	checkRebuild(t, out, readRecords(t, recs))
	// Recounted from the records against a budget no request meets.
	stdout, _, err := cliRun(context.Background(), "report", recs, "--slo", "ttft_p95=1us", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var again struct {
		Runs []struct {
			SLO    string `json:"slo"`
			Levels []struct {
				GoodputFraction *float64 `json:"goodput_fraction"`
			} `json:"levels"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &again); err != nil || again.Runs[0].SLO != "ttft_p95=0.001ms" || *again.Runs[0].Levels[0].GoodputFraction != 0 {
		t.Fatalf("recounted: %v %+v", err, again)
	}
	// A document keeps the goodput it was written with, and says so.
	stdout, _, err = cliRun(context.Background(), "report", out, "--slo", "ttft_p95=1us")
	if err != nil || !strings.Contains(stdout, "no goodput for") {
		t.Fatalf("report of the document against another SLO: %v\n%s", err, stdout)
	}
}

// TestFindMixFlags checks that find, which has no --method, reads --mix
// (it once dereferenced run's missing --method flag and panicked).
func TestFindMixFlags(t *testing.T) {
	cfg, _, err := parseFindFlags([]string{"--backend", "ollama", "--url", "http://127.0.0.1:1", "--model", "m",
		"--slo", "ttft_p95=1s", "--mix", "text:0.7,long:0.3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Mix) != 2 || cfg.Method != load.Pool {
		t.Fatalf("mix %v method %q, want two classes on the pool method", cfg.Mix, cfg.Method)
	}
}

// TestFindLibraryLogFromDiscovery: what the HTTP library logs while find
// identifies the server goes into find's warnings with the API key
// redacted, not to standard error as it was (find subscribed only after
// finding the server; run subscribes before).
func TestFindLibraryLogFromDiscovery(t *testing.T) {
	const key = "sk-review-secret-0123456789"
	var fallback bytes.Buffer
	router := liblog.New(&fallback)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(router, "library saw Authorization: Bearer %s\n", key)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := Deps{LibraryLog: router}.Run(context.Background(), []string{"find", "--url", srv.URL, "--api-key", key,
		"--slo", "ttft_p95=1s", "--out", filepath.Join(t.TempDir(), "find.json"), "--quiet"}, &stdout, &stderr)
	if err == nil {
		t.Fatal("find against a server that answers 500 succeeded")
	}
	if fallback.Len() > 0 {
		t.Errorf("the library's log went past find, unredacted:\n%s", fallback.String())
	}
	if !strings.Contains(stderr.String(), "library log: library saw Authorization") || strings.Contains(stderr.String(), key) {
		t.Errorf("stderr lacks the redacted library line, or holds the key:\n%s", stderr.String())
	}
}
