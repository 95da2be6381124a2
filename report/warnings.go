package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// levelWarning is one warning of one level, before folding.
type levelWarning struct {
	concurrency int
	text        string
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
func foldLevelWarnings(ws []levelWarning) []string {
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
		c := strconv.Itoa(w.concurrency)
		if len(g.levels) == 0 || g.levels[len(g.levels)-1] != c {
			g.levels = append(g.levels, c)
		}
		g.alike = g.alike && w.text == g.first
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		line := fmt.Sprintf("c=%s: %s", strings.Join(g.levels, ", "), g.first)
		if !g.alike {
			line += fmt.Sprintf(" (figures of c=%s; the other levels' alike)", g.levels[0])
		}
		out = append(out, line)
	}
	return out
}
