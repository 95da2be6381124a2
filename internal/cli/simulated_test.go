package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulatedInEveryFormat: a simulated run says SIMULATED wherever its
// results can be shared: every report format (the text and Markdown SLO
// blocks included), the charts' titles and legends, the HTML answer card
// and compare. CSV and JSON, for machines, carry it as a field.
func TestSimulatedInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, d := range []struct{ path, label string }{{a, "sim-a"}, {b, "sim-b"}} {
		if code, _, stderr := run(t, simArgs("--concurrency", "1,2", "--requests", "8", "--label", d.label, "--out", d.path)...); code != 0 {
			t.Fatalf("run %s: exit %d: %s", d.label, code, stderr)
		}
	}
	for _, format := range reportFormats {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := run(t, "report", a, b, "--format", format, "--slo", "ttft_p95=10s")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkSimulated(t, format, stdout)
		})
	}
	charts := filepath.Join(dir, "charts")
	if code, _, stderr := run(t, "report", a, b, "--charts", charts, "--out", filepath.Join(dir, "r.txt")); code != 0 {
		t.Fatalf("report --charts: exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(filepath.Join(charts, "throughput.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// The title, the subtitle and both legend entries.
	if n := strings.Count(string(svg), mark); n < 4 {
		t.Errorf("throughput.svg says %s %d times, want the title, subtitle and both legend entries", mark, n)
	}
	code, stdout, stderr := run(t, "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "sim-a ("+mark+")") || !strings.Contains(stdout, "sim-b ("+mark+")") {
		t.Errorf("compare: exit %d, stdout %q, stderr %q: want both sides marked %s", code, stdout, stderr, mark)
	}
}

// mark is the word a simulated result carries.
const mark = "SIMULATED"

// checkSimulated checks that the report of simulated runs sim-a and sim-b
// in format says so: as a field for machines (JSON, CSV, gobench), in the
// answer card and SLO table of the HTML page, and in the SLO block's rows
// and best line of the text and Markdown reports.
func checkSimulated(t *testing.T, format, stdout string) {
	t.Helper()
	switch format {
	case "json":
		if !strings.Contains(stdout, `"simulated": true`) {
			t.Errorf("json lacks \"simulated\": true")
		}
	case "csv":
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		hdr := strings.Split(lines[0], ",")
		col := -1
		for i, h := range hdr {
			if h == "simulated" {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("csv header %q lacks a simulated column", lines[0])
		}
		for _, l := range lines[1:] {
			if cells := strings.Split(l, ","); len(cells) <= col || cells[col] != "true" {
				t.Errorf("csv row %q: simulated is not true", l)
			}
		}
	case "gobench":
		if !strings.Contains(stdout, "simulated: true\n") {
			t.Errorf("gobench lacks the simulated: true configuration line:\n%s", stdout)
		}
	case "html":
		i := strings.Index(stdout, `<div class="answers">`)
		if i < 0 {
			t.Fatalf("html has no answer cards")
		}
		card, _, _ := strings.Cut(stdout[i:], "</div>\n</div>")
		if !strings.Contains(card, mark) {
			t.Errorf("html answer card %q lacks %s", card, mark)
		}
		if !strings.Contains(stdout, "sim-a ("+mark+")") {
			t.Errorf("html SLO table lacks %q", "sim-a ("+mark+")")
		}
	default: // table, markdown: the run's heading and the SLO block
		i := strings.LastIndex(stdout, "SLO: ttft") // Markdown escapes the "_"
		if i < 0 {
			t.Fatalf("%s has no SLO block:\n%s", format, stdout)
		}
		slo := stdout[i:]
		if !strings.Contains(slo, "sim-a ("+mark+")") || !strings.Contains(slo, "run: sim-") || strings.Count(slo, mark) < 3 {
			t.Errorf("%s SLO block lacks %s in its rows and best line:\n%s", format, mark, slo)
		}
	}
}
