package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/chart"
	"github.com/servebench/servebench/report/html"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/summary"
)

// reportFormats are the values of report --format.
var reportFormats = []string{"table", "markdown", "csv", "json", "html", "gobench"}

// reportArgs are report's parsed and checked arguments.
type reportArgs struct {
	files        []string
	format       string
	chartsDir    string
	outPath      string
	bounds       []slo.Bound
	failOnBreach bool
	choice       tableChoice
}

// parseReportArgs parses and checks report's flags and files.
func parseReportArgs(args []string, stdout io.Writer) (reportArgs, error) {
	fs := newFlagSet("report", "report FILE... [--format table|markdown|csv|json|html|gobench] [--columns LIST | --wide] [--charts DIR] [--out FILE] [--slo ttft_p95=1.5s,...]", stdout)
	format := fs.String("format", "table", "output format: "+strings.Join(reportFormats, ", "))
	chartsDir := fs.String("charts", "", "write SVG and PNG charts into `DIR`")
	outPath := fs.String("out", "", "write the report to `FILE` instead of standard output")
	sloFlag := fs.String("slo", "", "capacity answer for a latency budget, e.g. ttft_p95=1.5s,tpot_p50=50ms (ttft_p50, ttft_p95, tpot_p50, throughput_min, error_rate)")
	failOnBreach := fs.Bool("fail-on-breach", false, "CI gate (with --slo): exit 1 when a run breaks the SLO at a load it measured, one line per broken figure on stderr")
	tf := defineTableFlags(fs)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return reportArgs{}, err
	}
	a := reportArgs{files: files, format: *format, chartsDir: *chartsDir, outPath: *outPath, failOnBreach: *failOnBreach}
	if a.choice, err = tf.choice("report"); err != nil {
		return a, err
	}
	if len(files) == 0 {
		return a, usagef("report: no input files (want one or more result documents)")
	}
	if !slices.Contains(reportFormats, a.format) {
		return a, usagef("report: --format %q: want one of %s", a.format, strings.Join(reportFormats, ", "))
	}
	a.bounds, err = reportBounds(*sloFlag, *failOnBreach)
	return a, err
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseReportArgs(args, stdout)
	if err != nil {
		return err
	}
	// Records files are summarized anew with the SLO's goodput budget;
	// documents keep the goodput they were written with.
	var opts summary.Options
	if b, ok := slo.GoodputBudget(a.bounds); ok {
		opts.SLO = &summary.SLO{Text: slo.Text(a.bounds), Budget: b}
	}
	set, err := loadSetWith(a.files, opts)
	if err != nil {
		return err
	}
	// The text and Markdown a person reads show the columns chosen
	// (compact by default); the HTML page leads each run with that table
	// and keeps every column below it.
	view := a.choice.view(a.bounds)
	var compact *report.Layout
	if a.format == "html" {
		if !a.choice.Wide {
			compact = report.BuildView(set, view)
		}
		view = report.View{Wide: true}
	}
	layout, answer := reportLayout(set, a.bounds, view)
	charts, err := reportCharts(set, a, stderr)
	if err != nil {
		return err
	}
	err = writeOut(a.outPath, stdout, func(out io.Writer) error {
		layout.Width = a.choice.width(out)
		return writeReport(out, a.format, set, layout, compact, charts, answer)
	})
	if err != nil {
		return err
	}
	if a.outPath != "" {
		// The page or file is all the output: say where it went.
		fmt.Fprintf(stderr, "servebench: wrote the %s report to %s\n", a.format, a.outPath)
	}
	if a.format != "table" && a.format != "markdown" && a.format != "html" {
		// Formats for machines carry no warnings lines; say them on stderr.
		writeWarnings(stderr, layout)
	}
	if a.failOnBreach {
		return sloGate(answer, stderr)
	}
	return nil
}

// reportCharts are the charts the report needs (--charts, or the HTML
// page's), written into --charts' folder when given; nil when none is
// needed.
func reportCharts(set *report.Set, a reportArgs, stderr io.Writer) ([]chart.Chart, error) {
	if a.chartsDir == "" && a.format != "html" {
		return nil, nil
	}
	charts := chart.WithSLO(chart.ForSet(set), a.bounds)
	if a.chartsDir != "" {
		written, err := chart.WriteDir(a.chartsDir, charts)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "servebench: wrote %d charts to %s\n", len(written), a.chartsDir)
	}
	return charts, nil
}

// writeOut calls write with standard output, or with the file --out
// names (outPath), which it then commits: a failed write leaves what was
// at the path as it was.
func writeOut(outPath string, stdout io.Writer, write func(io.Writer) error) error {
	if outPath == "" {
		return write(stdout)
	}
	f, err := filecap.Create(outPath)
	if err != nil {
		return usagef("report: --out: %v", err)
	}
	if err = write(f); err == nil {
		err = f.Commit()
	} else {
		f.Abort()
	}
	if err != nil {
		return fmt.Errorf("report: --out %s: %w", outPath, err)
	}
	return nil
}

// writeWarnings writes the layout's warnings on stderr, one a line.
func writeWarnings(stderr io.Writer, layout *report.Layout) {
	for _, b := range layout.Blocks {
		for _, w := range b.Warnings {
			warn(stderr, report.Clean(b.Run.Label)+": "+report.Clean(w))
		}
	}
	for _, w := range layout.Warnings {
		warn(stderr, report.Clean(w))
	}
}

// reportBounds reads report's --slo; --fail-on-breach needs one.
func reportBounds(sloFlag string, failOnBreach bool) ([]slo.Bound, error) {
	if sloFlag == "" {
		if failOnBreach {
			return nil, usagef("report: --fail-on-breach needs --slo (the budget to hold)")
		}
		return nil, nil
	}
	bounds, err := slo.Parse(sloFlag)
	if err != nil {
		return nil, usagef("report: --slo: %v", err)
	}
	return bounds, nil
}

// reportLayout lays out set as report does, its level tables as view
// chooses, with the capacity answer for bounds as its last section when
// bounds are given; run's table on a terminal is the same.
func reportLayout(set *report.Set, bounds []slo.Bound, view report.View) (*report.Layout, *sloreport.Answer) {
	layout := report.BuildView(set, view)
	if bounds == nil {
		return layout, nil
	}
	answer := sloreport.Evaluate(set, bounds)
	lines := answer.BestLines()
	for _, w := range answer.Warnings {
		lines = append(lines, "warning: "+w)
	}
	layout.Sections = append(layout.Sections, report.Section{Title: answer.Title(), Table: answer.Table(), Lines: lines})
	return layout, answer
}

// writeReport writes the report in format; compact is the HTML page's
// leading tables (nil: every column only).
func writeReport(w io.Writer, format string, set *report.Set, layout, compact *report.Layout, charts []chart.Chart, answer *sloreport.Answer) error {
	switch format {
	case "markdown":
		return report.WriteMarkdown(w, layout)
	case "csv":
		return report.WriteCSV(w, set)
	case "json":
		return sloreport.WriteJSON(w, set, answer)
	case "html":
		// Each run leads with the table a terminal shows (the compact
		// columns, or --columns'), every column one click below.
		return html.WriteCompact(w, layout, compact, charts, answer)
	case "gobench":
		return report.WriteGoBench(w, set)
	default:
		return report.WriteText(w, layout)
	}
}

// loadSet reads and merges the input files; a file that is not a result
// document is a usage error naming it and the JSON path.
func loadSet(files []string) (*report.Set, error) { return loadSetWith(files, summary.Options{}) }

// loadSetWith is loadSet with the options records files are summarized
// with.
func loadSetWith(files []string, opts summary.Options) (*report.Set, error) {
	srcs, err := report.ReadSourcesWith(files, opts)
	if err != nil {
		var de *document.DecodeError
		if errors.As(err, &de) {
			return nil, &UsageError{Msg: err.Error()}
		}
		return nil, err
	}
	return report.NewSet(srcs, report.Options{}), nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, and returns the positionals. "--" ends flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
