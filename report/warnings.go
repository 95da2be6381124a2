package report

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/servebench/servebench/document"
)

// levelWarning is one warning of one level, before folding.
type levelWarning struct {
	level string // the level's load as loadColumn writes it ("4", "1.5")
	text  string
}

// numbers matches the figures in a warning, which differ between levels
// that warn of the same thing.
var numbers = regexp.MustCompile(`[-+]?[0-9]+(\.[0-9]+)?`)

// foldLevelWarnings says each warning once per run however many levels
// give it: warnings that differ only in their figures ("mean prompt
// length 35.8 tokens is -3.2% off the 37-token target" at c=1, "… 35.2
// tokens is -4.9% …" at c=8) become one line naming every level,
// "c=1, 4, 8: …", with the first level's figures and, where the others'
// differ, a note saying so; each level's own words stay in its level of
// the document. A warning only one level gives is "c=N: …" as before.
//
// name says the levels as the run's level table names its load
// (sweepColumn.words): "c=1, 4", "users 20, 80", "1, 2 req/s".
func foldLevelWarnings(ws []levelWarning, name func(levels ...string) string) []string {
	type group struct {
		levels []string
		first  string
		alike  bool // every level's text is the first's
	}
	var order []string
	groups := map[string]*group{}
	for _, w := range ws {
		key := numbers.ReplaceAllString(w.text, "#")
		g, ok := groups[key]
		if !ok {
			g = &group{first: w.text, alike: true}
			groups[key] = g
			order = append(order, key)
		}
		if len(g.levels) == 0 || g.levels[len(g.levels)-1] != w.level {
			g.levels = append(g.levels, w.level)
		}
		g.alike = g.alike && w.text == g.first
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		line := fmt.Sprintf("%s: %s", name(g.levels...), g.first)
		if !g.alike {
			line += fmt.Sprintf(" (figures of %s; the other levels' alike)", name(g.levels[0]))
		}
		out = append(out, line)
	}
	return out
}

// words says levels of a run in a warning as its level table's load
// column c (loadColumn) names them: "users 20, 80" for people, "1, 2
// req/s" for a rate run, else "c=1, 4"; each level as c's cell.
func (c sweepColumn) words(levels ...string) string {
	switch c.Header {
	case "users":
		return "users " + strings.Join(levels, ", ")
	case "req/s":
		return strings.Join(levels, ", ") + " req/s"
	}
	return "c=" + strings.Join(levels, ", ")
}

// isRateRun says run r is a rate run whose levels each say their rate.
func isRateRun(r *document.Run) bool {
	return r != nil && r.Method == "rate" && everyRate(r.Levels)
}
