package report

import (
	"strconv"

	"github.com/servebench/servebench/document"
)

// Means and tails (issue 13): every latency of a sweep level as its mean
// and its p50, p90, p95 and p99, in every format.

// latencyStats are the statistics of each latency, in the order tables,
// CSV columns and gobench metrics show them.
var latencyStats = []string{"mean", "p50", "p90", "p95", "p99"}

// latencyMetric is one latency of a level and its statistics, in ms.
type latencyMetric struct {
	// name is the metric in field names ("ttft"); label in tables ("TTFT").
	name, label string
	// prec is the decimals a table shows.
	prec int
	// get returns the statistics of a level, in latencyStats order.
	get func(l *document.Level) [5]*float64
}

var latencyMetrics = []latencyMetric{
	{"ttft", "TTFT", 1, func(l *document.Level) [5]*float64 {
		return [5]*float64{l.TTFTMeanMs, l.TTFTP50Ms, l.TTFTP90Ms, l.TTFTP95Ms, l.TTFTP99Ms}
	}},
	{"tpot", "TPOT", 2, func(l *document.Level) [5]*float64 {
		return [5]*float64{l.TPOTMeanMs, l.TPOTP50Ms, l.TPOTP90Ms, l.TPOTP95Ms, l.TPOTP99Ms}
	}},
	{"itl", "ITL", 2, func(l *document.Level) [5]*float64 {
		return [5]*float64{l.ITLMeanMs, l.ITLP50Ms, l.ITLP90Ms, l.ITLP95Ms, l.ITLP99Ms}
	}},
	{"e2e", "E2E", 1, func(l *document.Level) [5]*float64 {
		return [5]*float64{l.E2EMeanMs, l.E2EP50Ms, l.E2EP90Ms, l.E2EP95Ms, l.E2EP99Ms}
	}},
}

// latencyField is one latency statistic of a level, named as in the JSON
// document ("ttft_mean_ms").
type latencyField struct {
	name string
	get  func(l *document.Level) *float64
}

// latencyFields lists every latency statistic, metric by metric.
func latencyFields() []latencyField {
	var out []latencyField
	for _, m := range latencyMetrics {
		for i, st := range latencyStats {
			get := m.get
			out = append(out, latencyField{m.name + "_" + st + "_ms", func(l *document.Level) *float64 { return get(l)[i] }})
		}
	}
	return out
}

// hasMeans reports whether some level has a latency mean: documents
// written before means were measured have none, and their tables stay as
// they were.
func hasMeans(levels []document.Level) bool {
	for i := range levels {
		for _, m := range latencyMetrics {
			if m.get(&levels[i])[0] != nil {
				return true
			}
		}
	}
	return false
}

// latencySection is the latency table of a sweep run: one row per level
// and latency, with its mean and percentiles in ms; nil when no level has
// a mean.
func latencySection(levels []document.Level) *Section {
	if !hasMeans(levels) {
		return nil
	}
	t := Table{Columns: []Column{{"c", Right}, {"latency", Left}}}
	for _, st := range latencyStats {
		t.Columns = append(t.Columns, Column{st + " ms", Right})
	}
	for i := range levels {
		for _, m := range latencyMetrics {
			vals := m.get(&levels[i])
			row := []string{strconv.Itoa(levels[i].Concurrency), m.label}
			empty := true
			for _, v := range vals {
				row = append(row, floatOrNull(v, m.prec))
				empty = empty && v == nil
			}
			if !empty {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return &Section{Title: "latency per level: mean and percentiles", Table: t}
}
