package report

import (
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/safetext"
)

// gobenchUnits declares, in benchfmt "Unit" lines, which direction is
// better for each metric so benchstat marks improvements correctly.
// The units of gobenchLatency follow where some level has latency means.
var gobenchUnits = []string{
	"Unit tok/s better=higher",
	"Unit ttft-p50-ms better=lower",
	"Unit ttft-p95-ms better=lower",
	"Unit tpot-p50-ms better=lower",
	"Unit batch-tpot-ms better=lower",
}

// gobenchMetric is a latency statistic as a benchmark unit.
type gobenchMetric struct {
	unit string // "ttft-mean-ms"
	get  func(*document.Level) *float64
}

// gobenchLatency are the latency statistics written after the seed's
// metrics (means and tails, issue 13): every one of latencyFields not
// already written, its name with dashes as the unit.
var gobenchLatency = func() []gobenchMetric {
	var out []gobenchMetric
	for _, f := range latencyFields() {
		unit := strings.ReplaceAll(f.name, "_", "-")
		switch unit {
		case "ttft-p50-ms", "ttft-p95-ms", "tpot-p50-ms":
			continue
		}
		out = append(out, gobenchMetric{unit, f.get})
	}
	return out
}()

// WriteGoBench writes the set in the Go benchmark format so that benchstat
// can compare two sweeps: one line per level named
// BenchmarkServe/label=L/c=C with throughput in tok/s and, where present,
// TTFT p50/p95 and TPOT p50 in ms, then every other latency mean and
// percentile (ttft-mean-ms … e2e-p99-ms). A batch level writes one line per
// repeat, so benchstat sees the repeats as samples.
func WriteGoBench(w io.Writer, s *Set) error {
	ew := &errWriter{w: w}
	for _, u := range gobenchUnits {
		ew.printf("%s\n", u)
	}
	if setHasMeans(s) {
		for _, f := range gobenchLatency {
			ew.printf("Unit %s better=lower\n", f.unit)
		}
	}
	if setHasEnergy(s) {
		for _, f := range energyFields {
			better := "lower"
			if f.higher {
				better = "higher"
			}
			ew.printf("Unit %s better=%s\n", f.unit, better)
		}
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
			if p.Level != nil {
				for _, f := range gobenchLatency {
					add(f.get(p.Level), f.unit)
				}
				for _, f := range energyFields {
					add(f.get(p.Level), f.unit)
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
