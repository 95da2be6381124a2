package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/compare"
)

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", "compare A B [--by label|backend|workload] [--format table|markdown]\n\nA and B are result files, or FILE#LABEL for one run of a file.", stdout)
	byFlag := fs.String("by", "label", "pair runs by `KEY`: label, backend or workload")
	format := fs.String("format", "table", "output format: table or markdown")
	maxReg := fs.String("max-regression", "", "CI gate: exit 1 when, at a load both runs measured, B's throughput is more than `P` (e.g. 5%) below A's or a latency figure more than P above, one line per figure on stderr")
	sigOnly := fs.Bool("significant-only", false, "with --max-regression: count only differences compare marks significant")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("compare: want two arguments A B (files, or FILE#LABEL), got %d", len(pos))
	}
	by, err := compare.ParseBy(*byFlag)
	if err != nil {
		return usagef("compare: --by: %v", err)
	}
	if *format != "table" && *format != "markdown" {
		return usagef("compare: --format %q: want table or markdown", *format)
	}
	gate := -1.0
	if *maxReg != "" {
		if gate, err = compare.ParseRegression(*maxReg); err != nil {
			return usagef("compare: --max-regression %v", err)
		}
	} else if *sigOnly {
		return usagef("compare: --significant-only applies only with --max-regression")
	}
	a, err := loadSide(pos[0])
	if err != nil {
		return err
	}
	b, err := loadSide(pos[1])
	if err != nil {
		return err
	}
	pairs, unpaired, err := compare.Pairs(a, b, by)
	if err != nil {
		return usagef("compare: %v", err)
	}
	if len(pairs) == 0 {
		return usagef("compare: no run of %s has a partner in %s by %s", a.Name, b.Name, by)
	}
	var sb strings.Builder
	md := *format == "markdown"
	width := outputWidth(stdout)
	for i, p := range pairs {
		title, table := compare.Title(p), compare.Table(compare.Rows(p))
		if md {
			fmt.Fprintf(&sb, "## %s\n\n%s\n", report.MarkdownEscape(title), report.MarkdownTable(table))
			continue
		}
		if i > 0 {
			sb.WriteString("\n")
		}
		// Labels and file names come from documents: Clean keeps them
		// inert. Fitted to the terminal's width, as report's text is.
		table.Keys = 2 // the load and the metric name a row
		sb.WriteString(report.WrapLine(report.Clean(title), width, "", "  "))
		sb.WriteString(report.FoldTable(table, "   ", width))
	}
	for _, u := range unpaired {
		fmt.Fprintf(stderr, "servebench: note: %s\n", report.Clean(u))
	}
	if _, err = io.WriteString(stdout, sb.String()); err != nil || gate < 0 {
		return err
	}
	return regressionGate(pairs, gate, *sigOnly, stderr)
}

// loadSide reads one side of a comparison: FILE, or FILE#LABEL for one
// run of it. An existing file whose name holds a "#" is taken whole;
// otherwise the label follows the last "#".
func loadSide(arg string) (compare.Side, error) {
	file, label, hasLabel := arg, "", false
	if _, err := os.Stat(arg); err != nil {
		if i := strings.LastIndex(arg, "#"); i >= 0 {
			file, label, hasLabel = arg[:i], arg[i+1:], true
		}
	}
	set, err := loadSet([]string{file})
	if err != nil {
		return compare.Side{}, err
	}
	side := compare.Side{Name: arg, Runs: set.Runs}
	if hasLabel {
		r := set.Find(label)
		if r == nil {
			return side, usagef("compare: %s has no run %q (runs: %s)", file, label, strings.Join(set.Labels(), ", "))
		}
		side.Runs = []*report.Run{r}
	}
	return side, nil
}
