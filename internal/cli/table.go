package cli

import (
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/slo"
)

// tableFlags choose the level table a person reads (report's table and
// Markdown, and the table run and find end with on a terminal): the
// compact default, --columns or --wide.
type tableFlags struct {
	columns *string
	wide    *bool
}

// defineTableFlags defines --columns and --wide on fs.
func defineTableFlags(fs *flag.FlagSet) tableFlags {
	return tableFlags{
		columns: fs.String("columns", "", "level-table figures after the load, by JSON name, e.g. ttft_p99_ms,e2e_p50_ms,errors (default: requests, errors, throughput, TTFT p50 and p95, TPOT p50, E2E p95 and the figures the SLO names; docs/metrics.md lists the names)"),
		wide:    fs.Bool("wide", false, "every column of the level table, and every line whole, however wide (for a wide window or less -S)"),
	}
}

// tableChoice is what tableFlags chose.
type tableChoice struct {
	// Columns is --columns's figures; nil for the compact table.
	Columns []document.Figure
	Wide    bool
}

// view is the report.View of the choice, with the capacity answer's
// bounds (their figures join the compact table).
func (c tableChoice) view(bounds []slo.Bound) report.View {
	return report.View{Wide: c.Wide, Columns: c.Columns, SLO: bounds}
}

// choice validates the flags; cmd names the command in errors. An
// unknown figure gets one line with the nearest name.
func (f tableFlags) choice(cmd string) (tableChoice, error) {
	c := tableChoice{Wide: *f.wide}
	if strings.TrimSpace(*f.columns) == "" {
		return c, nil
	}
	if c.Wide {
		return c, usageOf(cmd, "--columns and --wide: give one (--wide shows every column)")
	}
	figs, err := report.ParseColumns(*f.columns)
	if err != nil {
		return c, usageOf(cmd, "--columns: %v", err)
	}
	c.Columns = figs
	return c, nil
}

// width is the width text for w is fitted to: none with --wide (every
// line whole), else outputWidth's.
func (c tableChoice) width(w io.Writer) int {
	if c.Wide {
		return 0
	}
	return outputWidth(w)
}

// outputWidth is the width text for w is fitted to: the terminal's when
// w is one, else $COLUMNS when it is a positive number, else 80.
func outputWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 80
}

// warn writes one "servebench: warning: " line on stderr. On a terminal it
// wraps at the terminal's width, continuation lines indented, as the
// report's own text is; piped or redirected (a log), it stays one line
// per warning, so that grep finds it whole.
func warn(stderr io.Writer, msg string) {
	const prefix = "servebench: warning: "
	width := 0
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		width = outputWidth(stderr)
	}
	io.WriteString(stderr, report.WrapLine(msg, width, prefix, "  "))
}
