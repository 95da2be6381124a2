package cli

import (
	"fmt"
	"io"

	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/compare"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
)

// The CI gates: `report --slo … --fail-on-breach` and `compare A B
// --max-regression P [--significant-only]` end with exit status 1 when
// a figure breaks them, after one line per broken figure on standard
// error; a file that cannot be read stays a usage error (exit 2).

// sloGate writes one line per bound that a run of answer breaks at a
// load it measured, and returns an error (exit 1) when there is one.
func sloGate(answer *sloreport.Answer, stderr io.Writer) error {
	n := 0
	for _, r := range answer.Runs {
		if r.FirstBreak == 0 {
			continue
		}
		for _, b := range r.BrokenBy {
			fmt.Fprintf(stderr, "servebench: slo breach: %s at %s: %s\n", report.Clean(r.Label), r.By.Format(r.FirstBreak), b)
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("report: --fail-on-breach: %d figures break the SLO %s", n, slo.Text(answer.Bounds))
	}
	return nil
}

// regressionGate writes one line per figure of B beyond maxRegression of
// A (compare.Gate) over the pairs, and returns an error (exit 1) when
// there is one.
func regressionGate(pairs []compare.Pair, maxRegression float64, significantOnly bool, stderr io.Writer) error {
	n := 0
	for _, p := range pairs {
		for _, b := range compare.Gate(p, compare.Rows(p), maxRegression, significantOnly) {
			fmt.Fprintf(stderr, "servebench: %s\n", report.Clean(b.String()))
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("compare: --max-regression %g%%: %d figures regressed", maxRegression*100, n)
	}
	return nil
}
