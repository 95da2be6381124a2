package report

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/safetext"
)

// gobenchUnits declares, in benchfmt "Unit" lines, which direction is
// better for each of the examples' metrics (which batch records have too)
// so benchstat marks improvements correctly; the figure table's other
// gobench figures follow (gobenchFigures).
var gobenchUnits = []string{
	"Unit tok/s better=higher",
	"Unit ttft-p50-ms better=lower",
	"Unit ttft-p95-ms better=lower",
	"Unit tpot-p50-ms better=lower",
	"Unit batch-tpot-ms better=lower",
}

// gobenchMetric is a figure as a benchmark unit.
type gobenchMetric struct {
	unit string // "ttft-mean-ms"
	fig  *document.FigureSpec
}

// gobenchFigures are the figure table's gobench figures written after
// the examples' metrics: every one not already written, its JSON name
// with dashes as the unit.
func gobenchFigures() []gobenchMetric {
	var out []gobenchMetric
	figs := document.Figures()
	for i := range figs {
		f := &figs[i]
		if !f.Is(document.InGoBench) || f.Key == "" || f.Value == nil {
			continue
		}
		unit := strings.ReplaceAll(string(f.Key), "_", "-")
		if unit == "throughput-tok-s" || slices.Contains(gobenchUnits, "Unit "+unit+" better=lower") {
			continue
		}
		out = append(out, gobenchMetric{unit, f})
	}
	return out
}

// better is the benchfmt direction of a figure's unit.
func better(f *document.FigureSpec) string {
	if f.Better == document.HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// WriteGoBench writes the set in the Go benchmark format so that benchstat
// can compare two sweeps: one line per level named
// BenchmarkServe/label=L/c=C with throughput in tok/s and, where present,
// TTFT p50/p95 and TPOT p50 in ms, then every other latency mean and
// percentile (ttft-mean-ms … e2e-p99-ms). A batch level writes one line per
// repeat, so benchstat sees the repeats as samples. The lines of simulated
// runs follow a "simulated: true" configuration line (written only where
// the set has one).
func WriteGoBench(w io.Writer, s *Set) error {
	ew := &errWriter{w: w}
	for _, u := range gobenchUnits {
		ew.printf("%s\n", u)
	}
	extra := gobenchFigures()
	means := setHasMeans(s)
	for _, f := range extra {
		// Latency statistics are declared where some level has means,
		// as documents from before them had none; other figures where
		// some level has them.
		if (f.fig.Latency != "" && means) || (f.fig.Latency == "" && setHas(s, f.fig)) {
			ew.printf("Unit %s better=%s\n", f.unit, better(f.fig))
		}
	}
	simulated := false
	for _, r := range s.Runs {
		if r.Simulated() != simulated {
			// A benchfmt configuration line: it applies to the lines
			// after it, and benchstat shows it with their results.
			simulated = r.Simulated()
			ew.printf("simulated: %t\n", simulated)
		}
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
			if p.Level != nil {
				for _, f := range extra {
					add(f.fig.Value(p.Level), f.unit)
				}
			}
			if len(metrics) == 0 {
				continue
			}
			ew.printf("%s\t1\t%s\n", bn, strings.Join(metrics, "\t"))
		}
	}
	return ew.err
}

// setHas reports whether some sweep level of s has figure f.
func setHas(s *Set, f *document.FigureSpec) bool {
	for _, r := range s.Runs {
		for _, p := range r.Points {
			if p.Level != nil && f.Value(p.Level) != nil {
				return true
			}
		}
	}
	return false
}

// setHasMeans reports whether some sweep level of s has latency means.
func setHasMeans(s *Set) bool {
	for _, r := range s.Runs {
		if r.Sweep != nil && hasMeans(r.Sweep.Levels) {
			return true
		}
	}
	return false
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
