package report

import (
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/servebench/servebench/internal/safetext"
)

// gobenchUnits declares, in benchfmt "Unit" lines, which direction is
// better for each metric so benchstat marks improvements correctly.
var gobenchUnits = []string{
	"Unit tok/s better=higher",
	"Unit ttft-p50-ms better=lower",
	"Unit ttft-p95-ms better=lower",
	"Unit tpot-p50-ms better=lower",
	"Unit batch-tpot-ms better=lower",
}

// WriteGoBench writes the set in the Go benchmark format so that benchstat
// can compare two sweeps: one line per level named
// BenchmarkServe/label=L/c=C with throughput in tok/s and, where present,
// TTFT p50/p95 and TPOT p50 in ms. A batch level writes one line per
// repeat, so benchstat sees the repeats as samples.
func WriteGoBench(w io.Writer, s *Set) error {
	ew := &errWriter{w: w}
	for _, u := range gobenchUnits {
		ew.printf("%s\n", u)
	}
	for _, r := range s.Runs {
		name := "BenchmarkServe/label=" + benchName(r.Label)
		for _, p := range r.Points {
			bn := name + "/c=" + strconv.Itoa(p.Concurrency)
			if len(p.Samples) > 0 {
				for _, v := range p.Samples {
					ew.printf("%s\t1\t%s tok/s\n", bn, fnum(v))
				}
				continue
			}
			var metrics []string
			add := func(v *float64, unit string) {
				if v != nil {
					metrics = append(metrics, fnum(*v)+" "+unit)
				}
			}
			add(p.ThroughputTokS, "tok/s")
			add(p.TTFTP50Ms, "ttft-p50-ms")
			add(p.TTFTP95Ms, "ttft-p95-ms")
			add(p.TPOTP50Ms, "tpot-p50-ms")
			add(p.BatchTPOTMs, "batch-tpot-ms")
			if len(metrics) == 0 {
				continue
			}
			ew.printf("%s\t1\t%s\n", bn, strings.Join(metrics, "\t"))
		}
	}
	return ew.err
}

// benchName makes a label safe inside a benchmark name: no white space
// (which ends the name), no "/" or "=" (which split it into keys), and no
// control character or bidirectional override (safetext.Hazard).
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '=' || unicode.IsSpace(r) || unicode.IsControl(r) || safetext.Hazard(r):
			return '_'
		}
		return r
	}, s)
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
