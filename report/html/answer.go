package html

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/report/sloreport"
	"github.com/servebench/servebench/slo"
)

// card is one answer at the top of the page: what was asked (Head), the
// answer (Value) and how it was reached (Detail). None marks an answer
// that is "no run does"; LowerBound one whose load is the highest
// measured with the SLO still held; Simulated one from a simulated run.
type card struct {
	Head, Value, Detail string
	None, LowerBound    bool
	Simulated           bool
}

// answerCards are the page's first cards: with an SLO, its best run per
// workload (the capacity answer); without, the best throughput per
// workload and the load it was measured at. Counts of runs and levels are
// not answers and are left to the line under the cards.
func answerCards(runs []*report.Run, a *sloreport.Answer) []card {
	if a != nil {
		return sloCards(a)
	}
	return throughputCards(runs)
}

// sloCards are the SLO answer's best runs, one card per workload.
func sloCards(a *sloreport.Answer) []card {
	var out []card
	for _, b := range a.Best {
		head := "best " + workloadName(b.Workload) + " run under " + a.Title()
		if b.Label == "" {
			out = append(out, card{Head: head, Value: "none", Detail: "no run meets the SLO at any measured load", None: true})
			continue
		}
		load := "c=" + strconv.Itoa(b.Concurrency)
		switch b.By {
		case slo.ByRate:
			load = slo.ByRate.Format(b.Load)
		case slo.ByUsers:
			load = strconv.Itoa(b.Concurrency) + " users"
		}
		c := card{Head: head, Value: b.Label, LowerBound: b.LowerBound, Simulated: b.Simulated,
			Detail: "holds up to " + load + ", " + report.FormatFloat(b.ThroughputTokS, 1) + " tok/s there"}
		if b.LowerBound {
			c.Detail = "holds up to " + load + " or more: " + load + " is the highest load measured and none broke the SLO (a lower bound) · " +
				report.FormatFloat(b.ThroughputTokS, 1) + " tok/s there"
		}
		out = append(out, c)
	}
	return out
}

// throughputCards name, per workload, the run and load with the highest
// output throughput (throughputs of different workloads do not compare);
// ties go to the lower load, then the earlier run.
func throughputCards(runs []*report.Run) []card {
	type best struct {
		run *report.Run
		p   report.Point
	}
	var order []string
	bests := map[string]*best{}
	for _, r := range runs {
		w := r.Workload
		if _, ok := bests[w]; !ok {
			bests[w] = &best{}
			order = append(order, w)
		}
		b := bests[w]
		for _, p := range r.Points {
			v := p.ThroughputTokS
			if v == nil || !report.InRange(*v) {
				continue
			}
			if b.run == nil || *v > *b.p.ThroughputTokS || (*v == *b.p.ThroughputTokS && p.Load() < b.p.Load()) {
				b.run, b.p = r, p
			}
		}
	}
	var out []card
	for _, w := range order {
		b := bests[w]
		if b.run == nil {
			continue
		}
		out = append(out, card{
			Head:      "best " + workloadName(w) + " throughput",
			Value:     report.FormatFloat(b.p.ThroughputTokS, 1) + " tok/s",
			Detail:    b.run.Label + " at " + pointLoad(b.p),
			Simulated: b.run.Simulated(),
		})
	}
	return out
}

func workloadName(w string) string {
	if w == "" {
		return "unnamed-workload"
	}
	return w
}

// pointLoad is a point's load in words: "c=16", or "4 req/s" for a
// rate-method level.
func pointLoad(p report.Point) string {
	if p.Rate != nil {
		return slo.ByRate.Format(*p.Rate)
	}
	return "c=" + strconv.Itoa(p.Concurrency)
}

// equalLoadFigures are the figures the cross-run table shows per run.
var equalLoadFigures = []document.Figure{document.FigThroughput, document.FigTTFTP50, document.FigTTFTP95, document.FigTPOTP50, document.FigE2EP95}

// equalLoadTable puts runs side by side at the same load: for every
// workload and load (concurrency, or request rate) that two or more runs
// measured, one row per run with its throughput, latencies and errors,
// and, with an SLO, whether the level meets it. It is what a person
// choosing between servers compares; runs of different workloads are
// not compared. A figure no row has is left out. nil when no load is
// shared.
func equalLoadTable(runs []*report.Run, bounds []slo.Bound) *report.Table {
	type entry struct {
		run *report.Run
		p   report.Point
	}
	type group struct {
		workload, load string
		wi             int     // the workload's first-seen order
		at             float64 // the load, rates after concurrencies
		es             []entry
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	wOrder := map[string]int{}
	for _, r := range runs {
		if _, ok := wOrder[r.Workload]; !ok {
			wOrder[r.Workload] = len(wOrder)
		}
		for _, p := range r.Points {
			k := [2]string{r.Workload, pointLoad(p)}
			g, ok := byKey[k]
			if !ok {
				g = &group{workload: r.Workload, load: k[1], wi: wOrder[r.Workload], at: p.Load()}
				if p.Rate != nil {
					g.at += 1e12
				}
				byKey[k] = g
				groups = append(groups, g)
			}
			g.es = append(g.es, entry{r, p})
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].wi != groups[j].wi {
			return groups[i].wi < groups[j].wi
		}
		return groups[i].at < groups[j].at
	})
	var specs []*document.FigureSpec
	for _, f := range figureSpecs(equalLoadFigures) {
		for _, g := range groups {
			if len(g.es) > 1 && slices.ContainsFunc(g.es, func(e entry) bool { return e.p.Figure(f) != nil }) {
				specs = append(specs, f)
				break
			}
		}
	}
	t := report.Table{Columns: []report.Column{{Header: "workload", Align: report.Left}, {Header: "load", Align: report.Left}, {Header: "run", Align: report.Left}}}
	for _, f := range specs {
		t.Columns = append(t.Columns, report.Column{Header: f.TableHeader(), Align: report.Right})
	}
	t.Columns = append(t.Columns, report.Column{Header: "errors", Align: report.Right})
	if bounds != nil {
		t.Columns = append(t.Columns, report.Column{Header: "meets SLO", Align: report.Left})
	}
	for _, g := range groups {
		if len(g.es) < 2 {
			continue
		}
		for _, e := range g.es {
			row := []string{workloadName(g.workload), g.load, e.run.SimulatedLabel()}
			for _, f := range specs {
				row = append(row, formatFigure(f, e.p.Figure(f)))
			}
			row = append(row, intCell(e.p.Errors))
			if bounds != nil {
				row = append(row, verdict(slo.Judge(e.p.Subject(), bounds)))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &t
}

// verdict is a judgement in a word, with the broken bounds.
func verdict(j slo.Judgement) string {
	if j.Pass() {
		if len(j.Uncertain) > 0 {
			return "yes (undecided: an interval straddles a bound)"
		}
		return "yes"
	}
	parts := make([]string, len(j.Broken))
	for i, b := range j.Broken {
		parts[i] = b.String()
	}
	return "no: " + strings.Join(parts, "; ")
}

func figureSpecs(keys []document.Figure) []*document.FigureSpec {
	figs := document.Figures()
	var out []*document.FigureSpec
	for _, k := range keys {
		for i := range figs {
			if figs[i].Key == k {
				out = append(out, &figs[i])
				break
			}
		}
	}
	return out
}

func formatFigure(f *document.FigureSpec, v *float64) string {
	if v == nil || !report.InRange(*v) {
		return report.Null
	}
	return f.Format(*v)
}

func intCell(v *int) string {
	if v == nil {
		return report.Null
	}
	return fmt.Sprint(*v)
}
