package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/report/sloreport"
)

// seedFile is a reference document of the repository's examples/.
func seedFile(t testing.TB, name string) string {
	t.Helper()
	return testenv.RepoFile(t, "examples/"+name)
}

func TestReportUsage(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.json")
	os.WriteFile(notJSON, []byte("gpu: RTX 5070 Ti\n"), 0o644)
	badValue := filepath.Join(dir, "sweep.json")
	os.WriteFile(badValue, []byte(`{"runs":[{"label":"a","levels":[{"concurrency":1},{"concurrency":2,"ttft_p50_ms":"fast"}]}]}`), 0o644)
	other := filepath.Join(dir, "package.json")
	os.WriteFile(other, []byte(`{"name":"x","version":"1.0.0"}`), 0o644)
	sweep := seedFile(t, "multi-backend-sweep.json")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no files", []string{"report"}, 2, "report: no input files"},
		{"bad format", []string{"report", sweep, "--format", "xml"}, 2, `--format "xml": want one of table, markdown, csv, json, html, gobench`},
		{"bad slo", []string{"report", sweep, "--slo", "ttft_p95=1.5"}, 2, `--slo: SLO term "ttft_p95=1.5": want a duration with a unit`},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, 2, "nope.json: cannot read: no such file or directory"},
		{"not json", []string{"report", notJSON}, 2, "notes.json: not JSON: invalid character 'g' looking for beginning of value at line 1, column 2"},
		{"bad value", []string{"report", sweep, badValue}, 2, "sweep.json: runs[0].levels[1].ttft_p50_ms: want number, got string"},
		{"other shape", []string{"report", other}, 2, `package.json: not a servebench result document: no "runs" or "records" (top-level keys: "name", "version")`},
		{"compare one arg", []string{"compare", sweep}, 2, "compare: want two arguments A B"},
		{"compare bad by", []string{"compare", sweep, sweep, "--by", "model"}, 2, `--by: want label, backend or workload, got "model"`},
		{"compare unknown run", []string{"compare", sweep + "#nope", sweep}, 2, `has no run "nope" (runs: llamacpp-f16kv-chat,`},
		{"compare ambiguous", []string{"compare", sweep, sweep, "--by", "workload"}, 2, `both have workload "chat"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Errorf("error spans %d lines: %q", n+1, stderr)
			}
		})
	}
}

// TestReportSLO is the acceptance answer through the command line.
func TestReportSLO(t *testing.T) {
	t.Setenv("COLUMNS", "200") // the best-run line on one line
	code, out, stderr := run(t, "report", seedFile(t, "multi-backend-sweep.json"), "--slo", "ttft_p95=1.5s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// c=16 is the sweep's top and held: a lower bound, and the line says so.
	if !strings.Contains(out, "\nbest chat run: vllm-fp8kv-chat at concurrency 16, 1209.9 tok/s"+sloreport.LowerBoundNote+"\n") {
		t.Errorf("no best-run line:\n%s", out)
	}
	found := false
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[0] == "ollama-q4km" && f[2] == "chat" {
			found = true
			if f[3] != "1" || f[4] != "118.4" || f[5] != "4" {
				t.Errorf("ollama-q4km line %q: want holds 1 at 118.4 tok/s, breaks at 4", l)
			}
		}
	}
	if !found {
		t.Errorf("no SLO row for ollama-q4km:\n%s", out)
	}
}

// TestReportFormatsAndFiles runs every format on both references, writes
// with --out and --charts, and merges both files in one report.
func TestReportFormatsAndFiles(t *testing.T) {
	dir := t.TempDir()
	both := []string{seedFile(t, "multi-backend-sweep.json"), seedFile(t, "vllm-text-image-example.json")}
	for _, format := range reportFormats {
		out := filepath.Join(dir, "report."+format)
		args := append([]string{"report", "--format", format, "--out", out}, both...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) < 500 {
			t.Fatalf("%s: %v (%d bytes)", format, err, len(data))
		}
		if format == "json" {
			// The merged document is a document report reads again.
			code, text, stderr := run(t, "report", out)
			if code != 0 || !strings.Contains(text, "vllm-fp8kv-chat") || !strings.Contains(text, "one_image_per_request") {
				t.Errorf("re-reading merged JSON: exit %d %s", code, stderr)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil || m["runs"] == nil || m["records"] == nil {
				t.Errorf("merged JSON lacks runs or records: %v", err)
			}
		}
	}
	charts := filepath.Join(dir, "charts")
	code, _, stderr := run(t, "report", both[0], "--charts", charts, "--format", "csv")
	if code != 0 || !strings.Contains(stderr, "wrote 12 charts") {
		t.Fatalf("charts: exit %d %s", code, stderr)
	}
	for _, n := range []string{"throughput.svg", "throughput.png", "ttft.png", "tpot.png", "per_request.png", "kv_cache.png", "vram.png"} {
		if _, err := os.Stat(filepath.Join(charts, n)); err != nil {
			t.Error(err)
		}
	}
}

// TestCompareTextImage is the first compare test: the text and image runs
// of the reference example.
func TestCompareTextImage(t *testing.T) {
	t.Setenv("COLUMNS", "200") // each row on one line
	ex := seedFile(t, "vllm-text-image-example.json")
	code, out, stderr := run(t, "compare", ex+"#text", ex+"#one_image_per_request")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"A = text", "B = one_image_per_request", "throughput tok/s", "486.9", "262.6", "0.539×", "significant (Welch t-test p=0.001 n=3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "compare", seedFile(t, "multi-backend-sweep.json"), seedFile(t, "multi-backend-sweep.json"), "--format", "markdown")
	if code != 0 || strings.Count(out, "## A = ") != 9 || !strings.Contains(out, "| 16 | throughput tok/s | 1209.9 | 1209.9 | 1.000× |") {
		t.Errorf("self-compare by label: exit %d\n%s", code, out)
	}
}

// TestCompareHashInFileName: a file whose name holds "#" is read whole,
// and FILE#LABEL still picks a run of such a file (the label follows the
// last "#").
func TestCompareHashInFileName(t *testing.T) {
	b, err := os.ReadFile(seedFile(t, "vllm-text-image-example.json"))
	if err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join(t.TempDir(), "run#2.json")
	if err := os.WriteFile(ex, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "compare", ex+"#text", ex+"#one_image_per_request")
	if code != 0 || !strings.Contains(out, "0.539×") {
		t.Errorf("labels of a file named run#2.json: exit %d %s\n%s", code, stderr, out)
	}
	code, out, stderr = run(t, "compare", ex, ex)
	if code != 0 || !strings.Contains(out, "A = text") {
		t.Errorf("whole file named run#2.json: exit %d %s\n%s", code, stderr, out)
	}
	code, _, stderr = run(t, "compare", ex+"#nosuch", ex)
	if code != 2 || !strings.Contains(stderr, `no run "nosuch"`) {
		t.Errorf("unknown label: exit %d %s", code, stderr)
	}
}

// TestReportRecordsFromOllama measures the real Ollama testbed with
// `servebench run`, then rebuilds the report from the saved records file
// alone and checks it agrees with the run's own document.
func TestReportRecordsFromOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	doc, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--concurrency", "1,2", "--method", "pool", "--requests", "4", "--warmup", "1",
		"--max-tokens", "8", "--out", doc, "--records", recs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	code, fromRecords, stderr := run(t, "report", recs, "--format", "csv")
	if code != 0 {
		t.Fatalf("report records: exit %d %s", code, stderr)
	}
	code, fromDoc, stderr := run(t, "report", doc, "--format", "csv")
	if code != 0 {
		t.Fatalf("report document: exit %d %s", code, stderr)
	}
	strip := func(s string) string {
		// Drop the file column, which names different files.
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			_, rest, _ := strings.Cut(l, ",")
			out = append(out, rest)
		}
		return strings.Join(out, "\n")
	}
	if strip(fromRecords) != strip(fromDoc) {
		t.Errorf("report from records differs from the run's document:\n%s\nvs\n%s", fromRecords, fromDoc)
	}
	t.Logf("report from records:\n%s", fromRecords)
	if strings.Count(fromRecords, "\n") != 3 {
		t.Errorf("want a header and 2 levels:\n%s", fromRecords)
	}
}
