package compare

import (
	"fmt"
	"github.com/servebench/servebench/document"
	"strconv"
	"strings"
)

// The regression gate of `compare A B --max-regression P` (a CI step):
// A is the baseline, and a figure of B breaks the gate when, at a load
// both runs measured, B's throughput is more than P below A's, or a
// latency figure compare prints is more than P above A's. With
// significant-only, only rows compare marks significant count: a row
// with a t-test that fails α, or a ratio interval that holds 1 ("~"),
// does not break the gate.

// ParseRegression reads a --max-regression value: a percentage ("5%")
// or a fraction ("0.05"), from 0 to 1000%; it returns the fraction.
func ParseRegression(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want a percentage such as 5%%", s)
	}
	if pct {
		v /= 100
	}
	if !(v >= 0 && v <= 10) {
		return 0, fmt.Errorf("%q: want 0%% to 1000%%", s)
	}
	return v, nil
}

// higherIsBetter says whether a larger value of m is better (throughput)
// rather than worse (latency), as the figure table declares it.
func higherIsBetter(m Metric) bool { return m.better == document.HigherIsBetter }

// Breach is one figure of B beyond the gate.
type Breach struct {
	Key         string
	Concurrency int
	Metric      string
	A, B        float64
	// Change is B/A − 1: negative for a throughput drop, positive for a
	// latency rise.
	Change float64
}

// String is the one line the gate prints for the breach.
func (b Breach) String() string {
	return fmt.Sprintf("regression: %s c=%d %s: %.4g → %.4g (%+.1f%%)", b.Key, b.Concurrency, b.Metric, b.A, b.B, b.Change*100)
}

// Gate lists the rows of pair p whose B is more than maxRegression worse
// than A; with significantOnly, rows compare does not mark significant
// (Row.Significant false, or Row.Similar) are left out.
func Gate(p Pair, rows []Row, maxRegression float64, significantOnly bool) []Breach {
	var out []Breach
	for _, r := range rows {
		if r.Ratio == nil || r.A == nil || r.B == nil {
			continue // a load only one side measured
		}
		if significantOnly && (!r.Significant() || r.Similar() || r.Test == nil && r.RatioLow == nil) {
			continue
		}
		change := *r.Ratio - 1
		worse := change > maxRegression
		if higherIsBetter(r.Metric) {
			worse = -change > maxRegression
		}
		if worse {
			out = append(out, Breach{Key: p.Key, Concurrency: r.Concurrency, Metric: r.Metric.Name, A: *r.A, B: *r.B, Change: change})
		}
	}
	return out
}
