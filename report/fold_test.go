package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/slo"
)

// maxLineWidth is the widest line of s, in runes.
func maxLineWidth(s string) int {
	n := 0
	for _, ln := range strings.Split(s, "\n") {
		n = max(n, runeLen(ln))
	}
	return n
}

// TestWrapLine: prose breaks at spaces within the width, under its
// prefixes, keeping every word whole unless one is wider than a line.
func TestWrapLine(t *testing.T) {
	cases := []struct {
		name, s      string
		width        int
		first, rest  string
		want         string
		wantMaxWidth int
	}{
		{"fits", "a short line", 80, "   ", "     ", "   a short line\n", 15},
		{"no limit", strings.Repeat("word ", 40), 0, "", "", strings.Repeat("word ", 40) + "\n", 200},
		{"wraps at spaces", "ttft_p95 8.51 ms ≤ 1500 ms; 4 requests give no 95% upper bound on a p95 (72 would)", 40, "   warning: ", "     ",
			"   warning: ttft_p95 8.51 ms ≤ 1500 ms;\n     4 requests give no 95% upper bound\n     on a p95 (72 would)\n", 40},
		{"long word broken", "file " + strings.Repeat("x", 50) + " end", 40, "", "  ",
			"file\n  " + strings.Repeat("x", 38) + "\n  " + strings.Repeat("x", 12) + " end\n", 40},
		{"narrower than the minimum", strings.Repeat("ab ", 30), 10, "", "", strings.Repeat("ab ", 12) + "ab\n" + strings.Repeat("ab ", 12) + "ab\n" + strings.Repeat("ab ", 3) + "ab\n", MinWidth},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := WrapLine(strings.TrimSpace(c.s), c.width, c.first, c.rest)
			if c.name == "no limit" {
				c.want = strings.TrimSpace(c.want) + "\n"
			}
			if got != c.want {
				t.Errorf("WrapLine:\n%q\nwant\n%q", got, c.want)
			}
			if w := maxLineWidth(got); w > c.wantMaxWidth {
				t.Errorf("widest line %d, want at most %d", w, c.wantMaxWidth)
			}
		})
	}
}

// wideTable is a level table as wide as the wide view's: a load column
// and twelve figure columns, the last of them text.
func wideTable() Table {
	t := Table{Columns: []Column{{"c", Right}}, Keys: 1}
	for i := range 11 {
		t.Columns = append(t.Columns, Column{"figure " + string(rune('a'+i)) + " ms", Right})
	}
	t.Columns = append(t.Columns, Column{"broken by", Left})
	for _, c := range []string{"1", "16"} {
		row := []string{c}
		for i := range 11 {
			row = append(row, strings.Repeat("9", 3+i%4)+".5 ±1"+c)
		}
		row = append(row, "every measured level holds (up to c=16) (at c=1: ttft_p95 31.23 ms ≤ 2000 ms; 40 requests give no 95% upper bound on a p95 (72 would))")
		t.Rows = append(t.Rows, row)
	}
	return t
}

// TestFoldTable: a table wider than the width is folded into tables that
// fit, each starting with the key column, and every cell is shown whole
// (the text cell's words in order); width 0 is AlignTable.
func TestFoldTable(t *testing.T) {
	tab := wideTable()
	if got := FoldTable(tab, "   ", 0); got != AlignTable(tab, "   ") {
		t.Errorf("width 0 folded the table:\n%s", got)
	}
	for _, width := range []int{40, 60, 80, 120, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			got := FoldTable(tab, "   ", width)
			if w := maxLineWidth(got); w > width {
				t.Errorf("width %d: a line is %d wide:\n%s", width, w, got)
			}
			fields := strings.Fields(got)
			for _, row := range tab.Rows {
				for _, cell := range row[:len(row)-1] {
					for _, part := range strings.Fields(cell) {
						if !slices.Contains(fields, part) {
							t.Errorf("width %d: cell %q not shown whole:\n%s", width, cell, got)
						}
					}
				}
			}
			if !strings.Contains(strings.Join(fields, " "), strings.Join(strings.Fields(tab.Rows[1][len(tab.Rows[1])-1]), " ")) {
				t.Errorf("width %d: the text cell's words are not all shown in order:\n%s", width, got)
			}
			folds := strings.Split(got, "\n\n")
			if width < 200 && len(folds) < 2 {
				t.Errorf("width %d: %d folds, want several:\n%s", width, len(folds), got)
			}
			for _, f := range folds {
				lines := strings.Split(strings.TrimRight(f, "\n"), "\n")
				if last := strings.Fields(lines[len(lines)-1]); len(last) == 0 || (last[0] != "16" && !strings.Contains(f, "\n   16  ")) {
					t.Errorf("width %d: a fold lacks the key column:\n%s", width, f)
				}
			}
		})
	}
}

// TestBuildViewColumns: the compact view shows the load and the figures
// marked InCompact that the levels have, plus those the SLO names; a
// --columns choice shows its figures in its order; the wide view is
// Build's.
func TestBuildViewColumns(t *testing.T) {
	s := loadSeeds(t, "multi-backend-sweep.json")
	// The example has no TPOT p95: give the first run's levels one, for
	// the SLO below to name.
	for i := range s.Runs[0].Sweep.Levels {
		v := 20.5
		s.Runs[0].Sweep.Levels[i].TPOTP95Ms = &v
	}
	headers := func(v View) []string {
		var out []string
		for _, c := range BuildView(s, v).Blocks[0].Table.Columns {
			out = append(out, c.Header)
		}
		return out
	}
	bounds, err := slo.Parse("ttft_p95=1s,tpot_p95=40ms")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		view View
		want []string
	}{
		{"compact", View{}, []string{"c", "requests", "errors", "throughput tok/s", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms"}},
		{"compact with the SLO's figures", View{SLO: bounds}, []string{"c", "requests", "errors", "throughput tok/s", "TTFT p50 ms", "TTFT p95 ms", "TPOT p50 ms", "TPOT p95 ms"}},
		{"columns", View{Columns: []document.Figure{"peak_vram_gib", "errors"}}, []string{"c", "peak VRAM GiB", "errors"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := headers(c.view); !slices.Equal(got, c.want) {
				t.Errorf("columns %q, want %q", got, c.want)
			}
		})
	}
	var wide, full bytes.Buffer
	if err := WriteText(&wide, BuildView(s, View{Wide: true})); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&full, Build(s)); err != nil {
		t.Fatal(err)
	}
	if wide.String() != full.String() {
		t.Error("the wide view differs from Build's layout")
	}
}

// TestParseColumns: figure JSON names in the order given, duplicates
// once; an unknown name names the nearest.
func TestParseColumns(t *testing.T) {
	cases := []struct {
		in      string
		want    []document.Figure
		wantErr string
	}{
		{"ttft_p99_ms, errors", []document.Figure{"ttft_p99_ms", "errors"}, ""},
		{"ttft_mean_ms", []document.Figure{"ttft_mean_ms"}, ""},
		{"errors,errors", []document.Figure{"errors"}, ""},
		{"ttft_p59_ms", nil, `unknown figure "ttft_p59_ms"; nearest: ttft_p50_ms`},
		{"throughput", nil, "nearest: throughput_tok_s"},
		{" , ", nil, "no figure named"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseColumns(c.in)
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want %q", err, c.wantErr)
			case c.wantErr == "" && (err != nil || !slices.Equal(got, c.want)):
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
