package html

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report/reporttest"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/chart"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
)

var (
	update     = flag.Bool("update", false, "rewrite the golden files in testdata/")
	screenshot = flag.String("screenshot", "", "also save the chromium screenshot of the sweep page to this PNG file")
)

// loadSeed reads a reference document of examples/ as a report set.
func loadSeed(t testing.TB, name string) *report.Set { return reporttest.LoadSeed(t, name) }

// render writes the page of s, with the SLO answer when bounds is given.
func render(t testing.TB, s *report.Set, bounds string) []byte {
	t.Helper()
	l := report.Build(s)
	var a *sloreport.Answer
	var b []slo.Bound
	if bounds != "" {
		var err error
		if b, err = slo.Parse(bounds); err != nil {
			t.Fatal(err)
		}
		a = sloreport.Evaluate(s, b)
		lines := a.BestLines()
		for _, w := range a.Warnings {
			lines = append(lines, "warning: "+w)
		}
		l.Sections = append(l.Sections, report.Section{Title: a.Title(), Table: a.Table(), Lines: lines})
	}
	var buf bytes.Buffer
	if err := WriteAnswer(&buf, l, chart.WithSLO(chart.ForSet(s), b), a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, seed := range []string{"multi-backend-sweep.json", "vllm-text-image-example.json"} {
		got := render(t, loadSeed(t, seed), "ttft_p95=1.5s")
		path := filepath.Join("testdata", strings.TrimSuffix(seed, ".json")+".html.golden")
		testenv.Golden(t, path, got, *update, "go test ./report/html -update")
	}
}

// evilSet is the sweep with server-originated strings that are markup.
func evilSet(t testing.TB) *report.Set {
	doc, err := document.ReadFile(reporttest.SeedPath(t, "multi-backend-sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Runs[0].Model = "<script>alert(1)</script>"
	doc.Runs[1].Label = `"><img src=x onerror=alert(2)>`
	rt := "vLLM <b>bold</b>"
	doc.Runs[2].Runtime = &rt
	doc.Runs[2].Levels[0].Warnings = []string{"<iframe src=//example.com>"}
	return report.NewSet([]report.Source{{File: "evil<x>.json", Doc: doc}}, report.Options{})
}

// TestSelfContained checks the page needs nothing from outside and lets
// no document string in as markup.
func TestSelfContained(t *testing.T) {
	page := string(render(t, evilSet(t), "ttft_p95=1.5s"))
	for _, bad := range []string{"<script", "<img", "<iframe", "<b>bold", "@import", "url(", "src=\"http", "href=\"http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;iframe", "<svg", "Content-Security-Policy", "vllm-fp8kv-chat at concurrency 16"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// consoleLine matches what chromium logs for a console message or a page
// error with --enable-logging=stderr.
// Chromium writes them as "[…:INFO:CONSOLE:1] "message", source: …".
var consoleLine = regexp.MustCompile(`(?i)(:CONSOLE[:(]|Uncaught|Content Security Policy|Refused to|ERR_)`)

// TestChromiumSeesConsoleErrors proves the render test can fail: a page
// with a console message, a script error and a blocked load must be
// caught by consoleLine.
func TestChromiumSeesConsoleErrors(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "bad.html")
	bad := `<!DOCTYPE html><html><body>x<script>console.error("boom"); undefinedFn();</script></body></html>`
	if err := os.WriteFile(page, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, logs := runChromium(t, bin, dir, "--dump-dom", "file://"+page)
	n := 0
	for _, l := range strings.Split(logs, "\n") {
		if consoleLine.MatchString(l) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("found %d console lines, want the console.error and the ReferenceError:\n%s", n, logs)
	}
}

// TestChromiumRender loads the pages in headless Chromium (Debian's
// chromium package) and checks it logs no console message, no error and
// no blocked load, and that the DOM has the charts and no script. A page
// with markup in its strings is rendered too: had any string escaped, the
// page's CSP would block it and log it.
func TestChromiumRender(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium not installed (apt-get install chromium)")
	}
	cases := map[string]*report.Set{
		"sweep": loadSeed(t, "multi-backend-sweep.json"),
		"batch": loadSeed(t, "vllm-text-image-example.json"),
		"evil":  evilSet(t),
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			if err := os.WriteFile(page, render(t, s, "ttft_p95=1.5s"), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, logs := runChromium(t, bin, dir, "--dump-dom", "file://"+page)
			for _, l := range strings.Split(logs, "\n") {
				if consoleLine.MatchString(l) {
					t.Errorf("chromium: %s", l)
				}
			}
			if strings.Count(dom, "<svg") != len(chart.ForSet(s)) || strings.Contains(strings.ToLower(dom), "<script") {
				t.Errorf("DOM has %d svg (want %d) or a script", strings.Count(dom, "<svg"), len(chart.ForSet(s)))
			}
			if !strings.Contains(dom, "servebench report") {
				t.Errorf("DOM lacks the heading:\n%.500s", dom)
			}
			if name == "sweep" && *screenshot != "" {
				shot := filepath.Join(dir, "shot.png")
				runChromium(t, bin, dir, "--screenshot="+shot, "--window-size=1280,2400", "file://"+page)
				data, err := os.ReadFile(shot)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(*screenshot, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runChromium runs headless chromium with a throw-away profile and no
// network services, returning stdout and stderr.
func runChromium(t *testing.T, bin, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// TestLatencySection: a run's latency means and percentiles are a table
// of the page under the level table.
func TestLatencySection(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	doc := &document.Document{Runs: []document.Run{{Run: record.Run{Label: "r", Backend: "vllm"}, Levels: []document.Level{{
		Concurrency: 2, Requests: 4, TTFTP50Ms: f(20), TTFTMeanMs: f(21.5), TTFTP90Ms: f(35.25), TPOTMeanMs: f(5.125), E2EP99Ms: f(799.5),
	}}}}}
	page := string(render(t, report.NewSet([]report.Source{{File: "r.json", Doc: doc}}, report.Options{}), ""))
	for _, want := range []string{"<h4>latency per level: mean and percentiles</h4>", "<th>mean ms</th>", ">21.5<", ">35.2<", ">5.12<", ">799.5<"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// measureScript reports, into the DOM that --dump-dom prints, how wide
// the page's content is against the window: the document's scroll width
// (what scrolls sideways; a table scrolling inside its own box does not
// count) and the window's inner width.
const measureScript = `<script>document.body.insertAdjacentHTML("beforeend",
"<pre id=measure>" + document.documentElement.scrollWidth + " " + window.innerWidth + "</pre>");</script>`

var measured = regexp.MustCompile(`<pre id="measure">(\d+) (\d+)</pre>`)

// pageWidth loads page in headless Chromium in a window w pixels wide
// and returns the page's scroll width and the window's inner width. The
// page's Content-Security-Policy, which forbids scripts, is taken out of
// this test copy so the measuring script may run.
func pageWidth(t *testing.T, bin string, page []byte, w int) (scroll, inner int) {
	t.Helper()
	dir := t.TempDir()
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
	src := csp.ReplaceAllString(string(page), "")
	src = strings.Replace(src, "</body>", measureScript+"</body>", 1)
	path := filepath.Join(dir, "page.html")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, logs := runChromium(t, bin, dir, "--window-size="+strconv.Itoa(w)+",900", "--dump-dom", "file://"+path)
	m := measured.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no measurement in the DOM:\n%.300s\n%s", dom, logs)
	}
	scroll, _ = strconv.Atoi(m[1])
	inner, _ = strconv.Atoi(m[2])
	return scroll, inner
}

// TestChromiumNoSidewaysScroll: at 1,280 px the page does not scroll
// sideways: wide tables scroll inside their own boxes, long names and
// details wrap. A page with a 2,000 px block proves the measure sees
// overflow.
func TestChromiumNoSidewaysScroll(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium not installed (apt-get install chromium)")
	}
	wide := []byte(`<!DOCTYPE html><html><body><div style="width:2000px">x</div></body></html>`)
	if scroll, inner := pageWidth(t, bin, wide, 1280); scroll <= inner {
		t.Fatalf("a 2000 px block measured %d px in a %d px window: the measure cannot see overflow", scroll, inner)
	}
	long := evilSet(t)
	long.Runs[0].Label = strings.Repeat("unbroken", 40) // no place to break a line
	cases := map[string][]byte{
		"sweep with SLO":    render(t, loadSeed(t, "multi-backend-sweep.json"), "ttft_p95=1.5s"),
		"sweep without SLO": render(t, loadSeed(t, "multi-backend-sweep.json"), ""),
		"batch":             render(t, loadSeed(t, "vllm-text-image-example.json"), "ttft_p95=1.5s"),
		"long names":        render(t, long, "ttft_p95=1.5s"),
	}
	for name, page := range cases {
		t.Run(name, func(t *testing.T) {
			if scroll, inner := pageWidth(t, bin, page, 1280); scroll > inner {
				t.Errorf("page is %d px wide in a %d px window: it scrolls sideways", scroll, inner)
			}
		})
	}
}

// TestAnswerFirst: the page opens with the answer, not with counts:
// without an SLO each workload's best throughput and where; with one,
// each workload's best run, its held load marked as a lower bound where
// the sweep never broke the SLO. The equal-load table puts runs of one
// workload side by side; a warning of the SLO block is styled as a
// warning, not as an answer.
func TestAnswerFirst(t *testing.T) {
	s := loadSeed(t, "multi-backend-sweep.json")
	plain := string(render(t, s, ""))
	top := plain[:strings.Index(plain, "<main>")]
	for _, want := range []string{`<div class="head">best chat throughput</div><b>1209.9 tok/s</b><div class="detail">vllm-fp8kv-chat at c=16`,
		`<div class="head">best long throughput</div><b>359.0 tok/s</b><div class="detail">vllm-fp8kv-long at c=48`} {
		if !strings.Contains(top, want) {
			t.Errorf("page top lacks %q:\n%s", want, top)
		}
	}
	if strings.Contains(top, `<b>9</b>runs`) {
		t.Errorf("page top still leads with counts")
	}
	page := string(render(t, s, "ttft_p95=1.5s"))
	top = page[:strings.Index(page, "<main>")]
	for _, want := range []string{`<b>vllm-fp8kv-chat</b>`, `holds up to c=16 or more`, `<span class="lower">lower bound</span>`,
		`<div class="answer none"><div class="head">best long run under SLO: ttft_p95 ≤ 1500 ms</div><b>none</b>`} {
		if !strings.Contains(top, want) {
			t.Errorf("page top lacks %q:\n%s", want, top)
		}
	}
	eq := page[strings.Index(page, "<h2>Runs side by side at equal load</h2>"):]
	eq = eq[:strings.Index(eq, "</table>")]
	for _, want := range []string{"<th>meets SLO</th>", `<td class="">chat</td><td class="">c=16</td><td class="">vllm-fp8kv-chat</td><td class="r">1209.9</td>`} {
		if !strings.Contains(eq, want) {
			t.Errorf("equal-load table lacks %q", want)
		}
	}
	// Loads are compared within a workload: c=8 is long runs' only.
	if strings.Contains(eq, `<td class="">c=8</td><td class="">llamacpp-f16kv-chat</td>`) || !strings.Contains(eq, `<td class="">long</td><td class="">c=8</td><td class="">llamacpp-f16kv-long</td>`) {
		t.Errorf("equal-load table mixes workloads at c=8")
	}
	if !strings.Contains(page, `<p class="warn">warning: no goodput for 9 runs`) {
		t.Errorf("the SLO block's warning is not styled as a warning")
	}
}
