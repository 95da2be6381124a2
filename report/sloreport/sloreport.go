// Package sloreport answers the capacity question for a latency budget:
// for each run, the highest measured load (concurrency, or request rate
// for the rate method) below which every measured load meets every bound
// of a service level objective, its throughput and goodput, and the first
// load that breaks and by which bound; then the best run of each
// workload. Each level is judged by slo.Judge.
package sloreport

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/slo"
)

// RunAnswer is the SLO answer for one run.
type RunAnswer struct {
	Label    string `json:"label"`
	Backend  string `json:"backend,omitempty"`
	Workload string `json:"workload,omitempty"`
	// Simulated is true for a run the simulator predicted: its answer is
	// a prediction, and every output says so (report.SimulatedMark).
	Simulated bool `json:"simulated,omitempty"`
	// By is what the run's levels vary: concurrency, or request rate
	// (requests/s) for a rate-method run.
	By slo.Load `json:"by"`
	// Holds is the highest measured load below which every measured
	// load meets the SLO (itself included); 0 when the lowest does not.
	Holds float64 `json:"holds"`
	// ThroughputTokS is the throughput at Holds; nil when none holds.
	ThroughputTokS *float64 `json:"throughput_tok_s"`
	// GoodputReqS and GoodputFraction are the goodput at Holds, where
	// the level has it.
	GoodputReqS     *float64 `json:"goodput_req_s,omitempty"`
	GoodputFraction *float64 `json:"goodput_fraction,omitempty"`
	// FirstBreak is the lowest measured load at which some bound fails;
	// 0 when every measured level holds.
	FirstBreak float64 `json:"first_break"`
	// BrokenBy are the bounds that fail at FirstBreak.
	BrokenBy []slo.Break `json:"broken_by,omitempty"`
	// Uncertain are the measured loads whose verdict an interval
	// straddled: more requests there could move the answer.
	Uncertain []float64 `json:"uncertain,omitempty"`
	// UncertainNotes say, per load of Uncertain, why its verdict is not
	// decided: what is known where an interval reaches past a bound only
	// for want of requests (slo.Check.Note); loads whose interval simply
	// straddles a bound have none.
	UncertainNotes []string `json:"uncertain_notes,omitempty"`
	// straddled are the loads of Uncertain without a note.
	straddled []float64
	// MaxMeasured is the highest load the run measured.
	MaxMeasured float64 `json:"max_measured"`
}

// Answer is the SLO answer for a set.
type Answer struct {
	Bounds []slo.Bound  `json:"bounds"`
	Runs   []RunAnswer  `json:"runs"`
	Best   []BestAnswer `json:"best"`
	// Warnings are findings about the answer, as data (goodput that
	// cannot be counted against this SLO).
	Warnings []string `json:"warnings,omitempty"`
}

// BestAnswer names the run with the highest throughput at its held
// load among the runs of one workload; Label is "" when no run of the
// workload meets the SLO.
type BestAnswer struct {
	Workload string `json:"workload"`
	Label    string `json:"label"`
	// By and Load are the held load of the run (Concurrency repeats it
	// for concurrency runs, as earlier answers had it).
	By             slo.Load `json:"by,omitempty"`
	Load           float64  `json:"load,omitempty"`
	Concurrency    int      `json:"concurrency"`
	ThroughputTokS *float64 `json:"throughput_tok_s"`
	// LowerBound is true when Load is the highest load the run measured
	// and none broke the SLO: the run may hold more, so "holds up to
	// Load" is a lower bound on its capacity.
	LowerBound bool `json:"lower_bound,omitempty"`
	// Simulated is true when the run is a simulator's prediction.
	Simulated bool `json:"simulated,omitempty"`
}

// WriteJSON writes the merged document of s as report.WriteJSON does, with
// a as its top-level field "slo" (readers of documents ignore it); with a
// nil a it writes the document alone.
func WriteJSON(w io.Writer, s *report.Set, a *Answer) error {
	return report.EncodeJSON(w, struct {
		*document.Document
		SLO *Answer `json:"slo,omitempty"`
	}{s.Merged(), a})
}

// Evaluate answers the SLO for every run of s. The best run is chosen per
// workload, since throughputs of different workloads do not compare; ties
// go to the lower load, then the earlier run.
func Evaluate(s *report.Set, bounds []slo.Bound) *Answer {
	a := &Answer{Bounds: bounds}
	text := slo.Text(bounds)
	_, hasBudget := slo.GoodputBudget(bounds)
	var other []string
	recorded := false // some run of other was written by servebench run, which keeps records
	for _, r := range s.Runs {
		ra := evaluateRun(r, bounds)
		if r.Sweep == nil || r.Sweep.SLO != text {
			// Goodput counted against another budget (or none) is not
			// this SLO's.
			ra.GoodputReqS, ra.GoodputFraction = nil, nil
			if r.Kind == report.KindSweep && hasBudget {
				other = append(other, r.Label)
				recorded = recorded || (r.Doc != nil && r.Doc.Tool != "")
			}
		}
		a.Runs = append(a.Runs, ra)
	}
	if len(other) > 0 {
		a.Warnings = append(a.Warnings, noGoodputWarning(other, recorded))
	}
	var workloads []string
	best := map[string]*BestAnswer{}
	for _, ra := range a.Runs {
		b, ok := best[ra.Workload]
		if !ok {
			b = &BestAnswer{Workload: ra.Workload}
			best[ra.Workload] = b
			workloads = append(workloads, ra.Workload)
		}
		if ra.Holds == 0 || ra.ThroughputTokS == nil {
			continue
		}
		if b.Label == "" || *ra.ThroughputTokS > *b.ThroughputTokS ||
			(*ra.ThroughputTokS == *b.ThroughputTokS && ra.Holds < b.Load) {
			b.Label, b.By, b.Load, b.ThroughputTokS = ra.Label, ra.By, ra.Holds, ra.ThroughputTokS
			b.LowerBound, b.Simulated = ra.LowerBound(), ra.Simulated
			b.Concurrency = 0
			if ra.By != slo.ByRate {
				b.Concurrency = int(ra.Holds)
			}
		}
	}
	for _, w := range workloads {
		a.Best = append(a.Best, *best[w])
	}
	return a
}

// noGoodputWarning says which runs have no goodput against this SLO
// (their documents were summarized without it) and, where servebench run
// wrote one of them and so kept records, to report the records instead;
// a document from elsewhere (the examples) has no records to name.
func noGoodputWarning(other []string, recorded bool) string {
	names := strings.Join(quoteAll(other), ", ")
	if len(other) > 3 {
		names = fmt.Sprintf("%d runs (%s, …)", len(other), strings.Join(quoteAll(other[:2]), ", "))
	}
	advice := ", and have no records to count it from"
	if recorded {
		advice = "; report their records files (.jsonl) with --slo to count it"
	}
	return fmt.Sprintf("no goodput for %s: their documents were summarized without this SLO%s", names, advice)
}

// runLoad is what a run varies: people for a users run (run --users,
// whose levels' concurrency is the number of people), else RunLoad's.
func runLoad(r *report.Run) slo.Load {
	if r.Sweep != nil && load.Method(r.Sweep.Method) == load.Users {
		return slo.ByUsers
	}
	return RunLoad(r.Points)
}

// RunLoad is what a run's points vary: the request rate when every point
// has one (a rate-method run), else concurrency.
func RunLoad(pts []report.Point) slo.Load {
	for _, p := range pts {
		if p.Rate == nil {
			return slo.ByConcurrency
		}
	}
	if len(pts) == 0 {
		return slo.ByConcurrency
	}
	return slo.ByRate
}

func evaluateRun(r *report.Run, bounds []slo.Bound) RunAnswer {
	ra := RunAnswer{Label: r.Label, Backend: r.Backend, Workload: r.Workload, Simulated: r.Simulated(), By: runLoad(r)}
	pts := append([]report.Point(nil), r.Points...)
	load := func(p report.Point) float64 {
		if ra.By == slo.ByRate {
			return *p.Rate
		}
		return float64(p.Concurrency)
	}
	sort.SliceStable(pts, func(i, j int) bool { return load(pts[i]) < load(pts[j]) })
	for _, p := range pts {
		ra.MaxMeasured = load(p)
		j := slo.Judge(p.Subject(), bounds)
		if len(j.Uncertain) > 0 {
			ra.Uncertain = append(ra.Uncertain, load(p))
			ra.UncertainNotes = append(ra.UncertainNotes, uncertainNote(j, prefix(ra.By)+ra.By.Format(load(p))))
			if ra.UncertainNotes[len(ra.UncertainNotes)-1] == "" {
				ra.UncertainNotes = ra.UncertainNotes[:len(ra.UncertainNotes)-1]
				ra.straddled = append(ra.straddled, load(p))
			}
		}
		if !j.Pass() {
			if ra.FirstBreak == 0 {
				ra.FirstBreak, ra.BrokenBy = load(p), j.Broken
			}
			continue
		}
		if ra.FirstBreak == 0 {
			ra.Holds, ra.ThroughputTokS = load(p), p.ThroughputTokS
			if p.Level != nil {
				ra.GoodputReqS, ra.GoodputFraction = p.Level.GoodputReqS, p.Level.GoodputFraction
			}
		}
	}
	return ra
}

// LowerBound reports whether the run's answer is a lower bound: it held
// at every load it measured, so its capacity may lie beyond Holds.
func (r RunAnswer) LowerBound() bool {
	return r.Holds > 0 && r.FirstBreak == 0 && r.Holds == r.MaxMeasured
}

// RunLabel is the label as the answer shows it: with report.SimulatedMark
// after a simulated run's.
func (r RunAnswer) RunLabel() string {
	if r.Simulated {
		return r.Label + " (" + report.SimulatedMark + ")"
	}
	return r.Label
}

// loadHeaders are the headers of the load columns: "c" when every run
// varied concurrency, "users" when every run varied people, else none
// (a rate's values carry their unit).
func loadHeaders(runs []RunAnswer) (holds, brk string) {
	unit := ""
	for i, r := range runs {
		u := map[slo.Load]string{slo.ByConcurrency: " c", slo.ByUsers: " users"}[r.By]
		if i > 0 && u != unit {
			u = ""
		}
		unit = u
		if unit == "" {
			break
		}
	}
	if len(runs) == 0 {
		unit = " c"
	}
	return "holds up to" + unit, "first break" + unit
}

// Table lays the answer out as a report.Table, one row per run; a
// simulated run's label carries report.SimulatedMark.
func (a *Answer) Table() report.Table {
	holdsHdr, brkHdr := loadHeaders(a.Runs)
	t := report.Table{Columns: []report.Column{
		{Header: "run", Align: report.Left}, {Header: "backend", Align: report.Left}, {Header: "workload", Align: report.Left},
		{Header: holdsHdr, Align: report.Right}, {Header: "throughput tok/s", Align: report.Right},
		{Header: brkHdr, Align: report.Right}, {Header: "broken by", Align: report.Left},
	}}
	goodput := false
	for _, r := range a.Runs {
		goodput = goodput || r.GoodputReqS != nil
	}
	if goodput {
		t.Columns = append(t.Columns[:5], append([]report.Column{{Header: "goodput req/s", Align: report.Right}, {Header: "good %", Align: report.Right}}, t.Columns[5:]...)...)
	}
	for _, r := range a.Runs {
		holds, brk, by := "none", report.Null, "every measured level holds (up to "+prefix(r.By)+r.By.Format(r.MaxMeasured)+")"
		if r.Holds > 0 {
			holds = r.By.Format(r.Holds)
		}
		if r.FirstBreak > 0 {
			brk = r.By.Format(r.FirstBreak)
			parts := make([]string, len(r.BrokenBy))
			for i, b := range r.BrokenBy {
				parts[i] = b.String()
			}
			by = strings.Join(parts, "; ")
		}
		if r.MaxMeasured == 0 {
			by = "no levels"
		}
		var why []string
		if len(r.straddled) > 0 {
			us := make([]string, len(r.straddled))
			for i, u := range r.straddled {
				us[i] = r.By.Format(u)
			}
			why = append(why, "an interval straddles the bound at "+strings.Join(us, ", "))
		}
		if why = append(why, r.UncertainNotes...); len(why) > 0 {
			by += " (" + strings.Join(why, "; ") + ")"
		}
		row := []string{r.RunLabel(), orNull(r.Backend), orNull(r.Workload), holds, report.FormatFloat(r.ThroughputTokS, 1)}
		if goodput {
			row = append(row, report.FormatFloat(r.GoodputReqS, 2), pct(r.GoodputFraction))
		}
		t.Rows = append(t.Rows, append(row, brk, by))
	}
	return t
}

// uncertainNote says why a judgement at load at is undecided where every
// undecided check has a note (slo.Check.Note); "" where an interval
// straddles a bound.
func uncertainNote(j slo.Judgement, at string) string {
	var notes []string
	for _, c := range j.Checks {
		if !c.Straddles {
			continue
		}
		if c.Note == "" {
			return ""
		}
		notes = append(notes, c.Note)
	}
	return "at " + at + ": " + strings.Join(notes, ", ")
}

// prefix is how a load is introduced in words: "c=" for concurrency,
// "users " for people.
func prefix(l slo.Load) string {
	switch l {
	case slo.ByRate:
		return ""
	case slo.ByUsers:
		return "users "
	}
	return "c="
}

func pct(v *float64) string {
	if v == nil {
		return report.Null
	}
	return strconv.FormatFloat(math.Round(*v*1000)/10, 'f', 1, 64)
}

// Title is the SLO in words, e.g. "SLO: ttft_p95 ≤ 1500 ms".
func (a *Answer) Title() string {
	parts := make([]string, len(a.Bounds))
	for i, b := range a.Bounds {
		parts[i] = b.String()
	}
	return "SLO: " + strings.Join(parts, ", ")
}

// BestLines are one line per workload naming its best run, e.g.
// "best chat run: vllm-fp8kv-chat at concurrency 16, 1209.9 tok/s", with
// report.SimulatedMark after a simulated run's label and, where the run
// never broke the SLO, that its load is a lower bound (BestAnswer.LowerBound).
func (a *Answer) BestLines() []string {
	var out []string
	for _, b := range a.Best {
		w := b.Workload
		if w == "" {
			w = "unnamed-workload"
		}
		if b.Label == "" {
			out = append(out, fmt.Sprintf("best %s run: none meets the SLO at any measured concurrency", w))
			continue
		}
		at := fmt.Sprintf("concurrency %d", b.Concurrency)
		switch b.By {
		case slo.ByRate:
			at = slo.ByRate.Format(b.Load)
		case slo.ByUsers:
			at = fmt.Sprintf("%d users", b.Concurrency)
		}
		line := fmt.Sprintf("best %s run: %s at %s, %s tok/s", w, b.RunLabel(), at, report.FormatFloat(b.ThroughputTokS, 1))
		if b.LowerBound {
			line += LowerBoundNote
		}
		out = append(out, line)
	}
	return out
}

// LowerBoundNote follows a best load that is the highest the run
// measured with the SLO still held.
const LowerBoundNote = " (a lower bound: the highest load measured, and none broke the SLO)"

// RunLabel is the best run's label, with report.SimulatedMark after a
// simulated run's.
func (b BestAnswer) RunLabel() string {
	if b.Simulated {
		return b.Label + " (" + report.SimulatedMark + ")"
	}
	return b.Label
}

func orNull(s string) string {
	if s == "" {
		return report.Null
	}
	return s
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}
