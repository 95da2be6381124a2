package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/suggest"
	"github.com/servebench/servebench/slo"
)

// View chooses the columns of a layout's level tables, for the text and
// Markdown a person reads (BuildView). Build lays out every column: the
// wide view, which the HTML page, CSV-like readers and --wide take.
type View struct {
	// Wide shows every column of the figure table that some level has
	// (document.InTable), as Build does; Columns and SLO are then unused.
	Wide bool
	// Columns are the figures shown after the load, in this order; nil
	// shows the compact table: the figures marked document.InCompact,
	// and those SLO or a run's own SLO names, in the figure table's order.
	Columns []document.Figure
	// SLO are the bounds of a capacity answer (report --slo): the
	// figures they bound join the compact table.
	SLO []slo.Bound
}

// BuildView lays out the report of s with the level tables v chooses.
func BuildView(s *Set, v View) *Layout {
	l := Build(s)
	if v.Wide {
		return l
	}
	for i := range l.Blocks {
		b := &l.Blocks[i]
		if b.Run.Kind != KindSweep {
			continue
		}
		b.Table = sweepTableOf(b.Run.Sweep, v.figures(b.Run.Sweep), v.Columns != nil)
	}
	return l
}

// figures are the level-table figures of run r in view v.
func (v View) figures(r *document.Run) []*document.FigureSpec {
	if v.Columns != nil {
		out := make([]*document.FigureSpec, 0, len(v.Columns))
		for _, k := range v.Columns {
			if f := document.LookupFigure(k); f != nil {
				out = append(out, f)
			}
		}
		return out
	}
	named := sloFigures(v.SLO)
	if r.SLO != "" {
		if own, err := slo.Parse(r.SLO); err == nil {
			named = append(named, sloFigures(own)...)
		}
	}
	var out []*document.FigureSpec
	figs := document.Figures()
	for i := range figs {
		f := &figs[i]
		if f.Key != "" && (f.Is(document.InCompact) || slices.Contains(named, f.Key)) {
			out = append(out, f)
		}
	}
	return out
}

// sloFigures are the figures bounds name: each bound's figure, the good
// fraction for a goodput bound; an error-rate bound names the errors,
// which the compact table always has.
func sloFigures(bounds []slo.Bound) []document.Figure {
	var out []document.Figure
	figs := document.Figures()
	for _, b := range bounds {
		if b.Metric == slo.Goodput {
			out = append(out, "goodput_fraction")
			continue
		}
		for i := range figs {
			if figs[i].SLO != "" && figs[i].SLO == string(b.Metric) {
				out = append(out, figs[i].Key)
			}
		}
	}
	return out
}

// ColumnNames are the names --columns takes: the JSON names of every
// figure of the figure table, in its order (those the wide table leaves
// to the latency section, such as ttft_mean_ms, too).
func ColumnNames() []string {
	var out []string
	for _, f := range document.Figures() {
		if f.Key != "" && (f.Value != nil || f.Text != nil) {
			out = append(out, string(f.Key))
		}
	}
	return out
}

// ParseColumns reads a --columns list ("ttft_p99_ms,errors"): figure JSON
// names, comma-separated. An unknown name is an error naming the nearest
// valid one.
func ParseColumns(s string) ([]document.Figure, error) {
	names := ColumnNames()
	var out []document.Figure
	for _, part := range strings.Split(s, ",") {
		name := strings.TrimSpace(part)
		if name == "" {
			continue
		}
		if !slices.Contains(names, name) {
			near, ok := suggest.Near(name, names)
			if !ok {
				near = suggest.Closest(name, names, 1)[0]
			}
			return nil, fmt.Errorf("unknown figure %q; nearest: %s (the figures' JSON names, docs/metrics.md)", name, near)
		}
		if !slices.Contains(out, document.Figure(name)) {
			out = append(out, document.Figure(name))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no figure named (want JSON names such as ttft_p95_ms,errors)")
	}
	return out, nil
}

// loadColumn is the first figure column of a run's level table: what
// loaded the server, as the run's method counts it. A users run counts
// people, a rate run requests/s (where every level says its rate),
// others concurrent requests ("c").
func loadColumn(r *document.Run) sweepColumn {
	switch {
	case r != nil && r.Method == "users":
		return sweepColumn{Column{"users", Right}, true, func(l document.Level) string { return strconv.Itoa(l.Concurrency) }}
	case isRateRun(r):
		return sweepColumn{Column{"req/s", Right}, true, func(l document.Level) string {
			if l.RequestedRate == nil {
				return Null // a class row of a mixed level
			}
			return num(*l.RequestedRate, -1)
		}}
	}
	return sweepColumn{Column{"c", Right}, true, func(l document.Level) string { return strconv.Itoa(l.Concurrency) }}
}

// everyRate reports whether every level has its requested rate.
func everyRate(levels []document.Level) bool {
	for _, l := range levels {
		if l.RequestedRate == nil {
			return false
		}
	}
	return len(levels) > 0
}
