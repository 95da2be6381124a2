package report

import (
	"slices"

	"github.com/servebench/servebench/document"
)

// Means and tails: every latency of a sweep level as its mean and its
// p50, p90, p95 and p99, in every format; the latencies and their
// statistics are the figure table's (document.Figures, Latency and Stat).

// latencyMetric is one latency of a level and its statistics, in ms.
type latencyMetric struct {
	// label names it in tables ("TTFT").
	label string
	// figs are its statistics, in the table's order.
	figs []*document.FigureSpec
}

// latencyMetrics groups the figure table's latency statistics by latency,
// in the table's order.
func latencyMetrics() []latencyMetric {
	var out []latencyMetric
	for _, f := range latencyFields() {
		if n := len(out); n == 0 || out[n-1].label != f.Latency {
			out = append(out, latencyMetric{label: f.Latency})
		}
		out[len(out)-1].figs = append(out[len(out)-1].figs, f)
	}
	return out
}

// latencyFields lists every latency statistic of the figure table,
// metric by metric.
func latencyFields() []*document.FigureSpec {
	var out []*document.FigureSpec
	figs := document.Figures()
	for i := range figs {
		if figs[i].Latency != "" && figs[i].Key != "" {
			out = append(out, &figs[i])
		}
	}
	return out
}

// hasMeans reports whether some level has a latency mean: documents
// written before means were measured have none, and their tables stay as
// they were.
func hasMeans(levels []document.Level) bool {
	for i := range levels {
		for _, f := range latencyFields() {
			if f.Stat == "mean" && f.Value(&levels[i]) != nil {
				return true
			}
		}
	}
	return false
}

// latencySection is the latency table of a sweep run: one row per level
// and latency, with its mean and percentiles in ms; nil when no level has
// a mean.
func latencySection(r *document.Run) *Section {
	levels := r.Levels
	if !hasMeans(levels) {
		return nil
	}
	metrics := latencyMetrics()
	load := loadColumn(r)
	t := Table{Columns: []Column{load.Column, {"latency", Left}}, Keys: 2}
	var stats []string
	for _, m := range metrics {
		for _, f := range m.figs {
			if !slices.Contains(stats, f.Stat) {
				stats = append(stats, f.Stat)
			}
		}
	}
	for _, st := range stats {
		t.Columns = append(t.Columns, Column{st + " " + metrics[0].figs[0].Unit, Right})
	}
	for i := range levels {
		for _, m := range metrics {
			row := []string{load.cell(levels[i]), m.label}
			empty := true
			for _, st := range stats {
				cell := Null
				for _, f := range m.figs {
					if f.Stat == st {
						v := f.Value(&levels[i])
						cell, empty = floatOrNull(v, f.Prec), empty && v == nil
					}
				}
				row = append(row, cell)
			}
			if !empty {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return &Section{Title: "latency per level: mean and percentiles", Table: t}
}
