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
)

//go:embed page.html.tmpl
var pageSource string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"right": func(a report.Align) bool { return a == report.Right },
	"null":  func(s string) bool { return s == report.Null },
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
}

// Write writes the page for l with the given charts. Strings from
// documents are neutralised once, here (report.Layout.Cleaned: control
// characters and bidirectional overrides become visible escapes), and
// escaped for HTML by the template.
func Write(w io.Writer, l *report.Layout, charts []chart.Chart) error {
	l = l.Cleaned()
	d := pageData{Layout: l, Title: "servebench report: " + strings.Join(l.Files, ", ")}
	for _, c := range charts {
		svg := string(c.SVG())
		d.Figures = append(d.Figures, figure{Name: c.Name, Title: c.Title, SVG: template.HTML(svg)})
	}
	d.Runs = len(l.Blocks)
	for _, b := range l.Blocks {
		d.Levels += len(b.Table.Rows)
	}
	return page.Execute(w, d)
}
