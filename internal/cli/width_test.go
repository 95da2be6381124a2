package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/slo"
)

// onTerminal runs servebench in-process with standard output on a
// pseudo-terminal of cols columns and returns what the terminal showed.
func onTerminal(t *testing.T, cols int, args ...string) string {
	t.Helper()
	master, tty := testenv.PTYSize(t, cols, 50)
	var shown bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&shown, master)
		done <- err
	}()
	var stderr bytes.Buffer
	err := Run(context.Background(), args, tty, &stderr)
	tty.Close()
	// Reading the master end ends with EIO once the terminal is closed.
	if cerr := <-done; cerr != nil && !errors.Is(cerr, syscall.EIO) {
		t.Fatalf("read pty: %v", cerr)
	}
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	// The terminal turns each "\n" into "\r\n".
	return strings.ReplaceAll(shown.String(), "\r\n", "\n")
}

// TestTerminalWidthTables runs `run --backend sim` and `report` with
// standard output on pseudo-terminals of 80 and 120 columns: no line is
// wider than the terminal, and every value `report --format json` has for
// the compact table's columns (and the SLO's figure) is shown whole.
func TestTerminalWidthTables(t *testing.T) {
	dir := t.TempDir()
	const sloText = "ttft_p95=2s,e2e_p99=20s"
	for _, cols := range []int{80, 120} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Setenv("COLUMNS", "") // the terminal's width, not the shell's
			out := filepath.Join(dir, fmt.Sprintf("run-%d.json", cols))
			ran := onTerminal(t, cols, "run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b",
				"--concurrency", "1,8", "--requests", "40", "--slo", sloText, "--out", out, "--quiet")
			reported := onTerminal(t, cols, "report", out)
			for name, text := range map[string]string{"run": ran, "report": reported} {
				checkWidth(t, name, text, cols)
				checkValues(t, name, text, out)
			}
		})
	}
}

// checkWidth fails for every line of text wider than cols columns.
func checkWidth(t *testing.T, name, text string, cols int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 10 {
		t.Fatalf("%s showed %d lines:\n%s", name, len(lines), text)
	}
	for i, ln := range lines {
		if n := utf8.RuneCountInString(ln); n > cols {
			t.Errorf("%s line %d is %d columns wide, terminal %d: %q", name, i+1, n, cols, ln)
		}
	}
}

// checkValues fails for every compact-table figure of the document at
// path (as report --format json has it) that text does not show as a
// whole word, at the precision the table shows it.
func checkValues(t *testing.T, name, text, path string) {
	t.Helper()
	var js bytes.Buffer
	if err := Run(context.Background(), []string{"report", path, "--format", "json"}, &js, io.Discard); err != nil {
		t.Fatal(err)
	}
	var doc document.Document
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range doc.Runs {
		own, err := slo.Parse(r.SLO)
		if err != nil {
			t.Fatalf("run %s: SLO %q: %v", r.Label, r.SLO, err)
		}
		for _, l := range r.Levels {
			for _, f := range compactFigures(own) {
				v := f.Value(&l)
				if v == nil {
					continue
				}
				s := f.Format(*v)
				if !regexp.MustCompile(`(^|[\s≈])` + regexp.QuoteMeta(s) + `($|\s)`).MatchString(text) {
					t.Errorf("%s does not show %s = %s (c=%d)", name, f.Key, s, l.Concurrency)
				}
				checked++
			}
		}
	}
	if checked < 16 {
		t.Errorf("%s: checked %d values, want the compact figures of two levels at least", name, checked)
	}
}

// compactFigures are the compact table's figures and those bounds name.
func compactFigures(bounds []slo.Bound) []*document.FigureSpec {
	var out []*document.FigureSpec
	figs := document.Figures()
	for i := range figs {
		f := &figs[i]
		named := false
		for _, b := range bounds {
			named = named || (f.SLO != "" && f.SLO == string(b.Metric))
		}
		if f.Key != "" && f.Value != nil && (f.Is(document.InCompact) || named) {
			out = append(out, f)
		}
	}
	return out
}
