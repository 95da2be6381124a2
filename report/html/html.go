// Package html writes a servebench report as one self-contained HTML page:
// summary, charts as inline SVG, per-level tables, warnings and the
// server, GPU, profile and runtime details. The page has no scripts, loads
// nothing from the network (its Content-Security-Policy forbids it) and
// escapes every string that came from a document through html/template.
package html

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/chart"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
)

//go:embed page.html.tmpl
var pageSource string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"right": func(a report.Align) bool { return a == report.Right },
	"null":  func(s string) bool { return s == report.Null },
	// warning tells a section's warning lines from its answers, so the
	// page styles them apart.
	"warning": func(s string) bool { return strings.HasPrefix(s, "warning: ") },
}).Parse(pageSource))

// figure is one chart on the page.
type figure struct {
	Name, Title string
	// SVG is the chart's markup: produced by package chart, which escapes
	// every text it draws, so it is trusted here.
	SVG template.HTML
}

type pageData struct {
	*report.Layout
	Title   string
	Figures []figure
	Runs    int
	Levels  int
	// Answers lead the page: the SLO answer, or the best throughputs.
	Answers []card
	// EqualLoad is the runs side by side at each load two or more share;
	// nil when none is shared.
	EqualLoad *report.Table
	// Simulated says some run was predicted by the simulator.
	Simulated bool
	// Compact are the blocks' compact tables (the columns a terminal
	// shows), in the blocks' order: each run's section leads with its
	// compact table, every column one click below. Nil: every column.
	Compact []report.Table
}

// Write writes the page for l with the given charts, without an SLO: its
// top cards are the best throughput of each workload.
func Write(w io.Writer, l *report.Layout, charts []chart.Chart) error {
	return WriteAnswer(w, l, charts, nil)
}

// WriteAnswer writes the page for l with the given charts and, when a is
// not nil, the SLO answer a at its top. Strings from documents are
// neutralised once, here (report.Layout.Cleaned: control characters and
// bidirectional overrides become visible escapes), and escaped for HTML
// by the template.
func WriteAnswer(w io.Writer, l *report.Layout, charts []chart.Chart, a *sloreport.Answer) error {
	return WriteCompact(w, l, nil, charts, a)
}

// WriteCompact is WriteAnswer whose run sections lead with the tables of
// compact, a layout of the same runs in the compact view
// (report.BuildView), each run's every column below it, folded; nil
// compact, or one of other blocks, shows every column only.
func WriteCompact(w io.Writer, l, compact *report.Layout, charts []chart.Chart, a *sloreport.Answer) error {
	var runs []*report.Run
	for _, b := range l.Blocks {
		if b.Run != nil {
			runs = append(runs, b.Run)
		}
	}
	l = l.Cleaned()
	d := pageData{Layout: l, Title: "servebench report: " + strings.Join(l.Files, ", ")}
	d.Answers = cleanCards(answerCards(runs, a))
	var bounds []slo.Bound
	if a != nil {
		bounds = a.Bounds
	}
	if t := equalLoadTable(runs, bounds); t != nil {
		ct := t.Cleaned()
		d.EqualLoad = &ct
	}
	for _, r := range runs {
		d.Simulated = d.Simulated || r.Simulated()
	}
	for _, c := range charts {
		svg := string(c.SVG())
		d.Figures = append(d.Figures, figure{Name: c.Name, Title: c.Title, SVG: template.HTML(svg)})
	}
	if compact != nil && len(compact.Blocks) == len(l.Blocks) {
		for _, b := range compact.Cleaned().Blocks {
			d.Compact = append(d.Compact, b.Table)
		}
	}
	d.Runs = len(l.Blocks)
	for _, b := range l.Blocks {
		d.Levels += len(b.Table.Rows)
	}
	return page.Execute(w, d)
}

// cleanCards neutralises the document strings of the cards (run labels,
// workloads) as Layout.Cleaned does the layout's.
func cleanCards(cs []card) []card {
	for i := range cs {
		cs[i].Head, cs[i].Value, cs[i].Detail = report.Clean(cs[i].Head), report.Clean(cs[i].Value), report.Clean(cs[i].Detail)
	}
	return cs
}
