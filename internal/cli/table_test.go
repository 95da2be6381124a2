package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReportTableFlags: report's table is compact by default, --columns
// chooses its figures, --wide shows every column unfolded; a mistyped
// figure gets one line naming the nearest and exit 2.
func TestReportTableFlags(t *testing.T) {
	sweep := filepath.Join(repoRoot, "examples", "multi-backend-sweep.json")
	cases := []struct {
		name       string
		args       []string
		columns    string // the environment's $COLUMNS
		code       int
		has, lacks []string
		maxWidth   int
	}{
		{"compact", []string{sweep}, "", 0, []string{"TTFT p95 ms", "throughput tok/s", "4771.7"}, []string{"peak VRAM GiB", "per-request tok/s"}, 80},
		{"COLUMNS", []string{sweep}, "60", 0, []string{"4771.7"}, nil, 60},
		{"columns", []string{sweep, "--columns", "peak_vram_gib,ttft_p95_ms"}, "", 0, []string{"peak VRAM GiB", "9.28"}, []string{"throughput tok/s", "TPOT p50 ms"}, 80},
		{"wide", []string{sweep, "--wide"}, "", 0, []string{"peak VRAM GiB  peak KV cache %  preemptions  mean prompt tok"}, nil, 0},
		{"markdown compact", []string{sweep, "--format", "markdown"}, "", 0, []string{"| TTFT p95 ms |"}, []string{"peak VRAM GiB"}, 0},
		{"markdown wide", []string{sweep, "--format", "markdown", "--wide"}, "", 0, []string{"| peak VRAM GiB |"}, nil, 0},
		{"unknown figure", []string{sweep, "--columns", "ttft_p59_ms"}, "", 2, []string{`unknown figure "ttft_p59_ms"; nearest: ttft_p50_ms`}, nil, 0},
		{"columns and wide", []string{sweep, "--columns", "errors", "--wide"}, "", 2, []string{"--columns and --wide"}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("COLUMNS", c.columns)
			var stdout, stderr bytes.Buffer
			code := ExitCode(Run(context.Background(), append([]string{"report"}, c.args...), &stdout, &stderr), &stderr)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr.String())
			}
			out := stdout.String() + stderr.String()
			if c.code != 0 && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Errorf("want one line on stderr, got:\n%s", stderr.String())
			}
			for _, s := range c.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range c.lacks {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
			for _, ln := range strings.Split(stdout.String(), "\n") {
				if n := utf8.RuneCountInString(ln); c.maxWidth > 0 && n > c.maxWidth {
					t.Errorf("line %d wide, want at most %d: %q", n, c.maxWidth, ln)
				}
			}
		})
	}
}

// TestRunColumnsFlag: run and find refuse a mistyped --columns figure
// before sending anything, in one line naming the nearest, exit 2.
func TestRunColumnsFlag(t *testing.T) {
	sim := []string{"--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--columns", "ttft_p95_mss"}
	for _, cmd := range []string{"run", "find"} {
		t.Run(cmd, func(t *testing.T) {
			args := append([]string{cmd}, sim...)
			if cmd == "find" {
				args = append(args, "--slo", "ttft_p95=1s")
			}
			var stdout, stderr bytes.Buffer
			code := ExitCode(Run(context.Background(), args, &stdout, &stderr), &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, cmd+`: --columns: unknown figure "ttft_p95_mss"; nearest: ttft_p95_ms`) {
				t.Errorf("exit %d, stderr:\n%s", code, msg)
			}
		})
	}
}

// TestCompareFitsWidth: compare's text, titles included, fits $COLUMNS
// (as on a terminal of that width), and keeps every figure's row.
func TestCompareFitsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	sweep := seedFile(t, "multi-backend-sweep.json")
	code, out, stderr := run(t, "compare", sweep, sweep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns at COLUMNS=80: %q", n, l)
		}
	}
	if !strings.Contains(out, "throughput tok/s   527.4   527.4  1.000×") {
		t.Errorf("the c=16 throughput row is missing or cut:\n%s", out)
	}
}

// TestHTMLLeadsWithCompactTable: each run of the HTML page leads with the
// compact table a terminal shows; every column follows, folded away.
func TestHTMLLeadsWithCompactTable(t *testing.T) {
	code, out, stderr := run(t, "report", seedFile(t, "multi-backend-sweep.json"), "--format", "html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	runs := out[strings.Index(out, "<h2>Runs</h2>"):]
	first := runs[strings.Index(runs, "<section>"):strings.Index(runs, "</section>")]
	lead, rest, ok := strings.Cut(first, "<details><summary>every column</summary>")
	if !ok {
		t.Fatalf("a run's section has no folded table of every column:\n%s", first)
	}
	if !strings.Contains(lead, "<th>TTFT p95 ms</th>") || strings.Contains(lead, "<th>peak VRAM GiB</th>") {
		t.Errorf("the leading table is not the compact one:\n%s", lead)
	}
	if !strings.Contains(rest, "<th>peak VRAM GiB</th>") {
		t.Errorf("the folded table lacks a column the compact one leaves out:\n%s", rest)
	}
}
