package report

import (
	"fmt"
	"strconv"

	"github.com/servebench/servebench/document"
)

// Layout of realistic workloads: sessions, shared prefixes and
// reasoning models.

// workloadDetails describes a run's sessions and shared prefixes.
func workloadDetails(r *document.Run) []string {
	var d []string
	if r.Turns > 0 {
		s := fmt.Sprintf("sessions of %d turns, each sending the conversation so far", r.Turns)
		if r.ThinkTime != "" {
			s += ", think time " + r.ThinkTime
		}
		d = append(d, s)
	}
	if r.SharedPrefixTokens > 0 {
		d = append(d, fmt.Sprintf("shared prefix: %d tokens, %d group(s)", r.SharedPrefixTokens, max(r.PrefixGroups, 1)))
	}
	return d
}

// turnTable lays out the turns of a run's multi-turn levels, one row per
// level and turn; ok is false when no level has turns. Columns the server
// gives no figures for are left out.
func turnTable(levels []document.Level) (Table, bool) {
	type row struct {
		c int
		t document.TurnSummary
	}
	var rows []row
	cached, prefill := false, false
	for _, l := range levels {
		for _, t := range l.Turns {
			rows = append(rows, row{l.Concurrency, t})
			cached = cached || t.MeanCachedTokens != nil
			prefill = prefill || t.ServerPrefillP50Ms != nil
		}
	}
	if len(rows) == 0 {
		return Table{}, false
	}
	t := Table{Columns: []Column{{"c", Right}, {"turn", Right}, {"requests", Right}, {"errors", Right},
		{"TTFT p50 ms", Right}, {"TTFT p95 ms", Right}, {"mean prompt tok", Right}}}
	if cached {
		t.Columns = append(t.Columns, Column{"mean cached prompt tok", Right})
	}
	if prefill {
		t.Columns = append(t.Columns, Column{"server prefill p50 ms", Right})
	}
	for _, r := range rows {
		cells := []string{strconv.Itoa(r.c), strconv.Itoa(r.t.Turn), strconv.Itoa(r.t.Requests), strconv.Itoa(r.t.Errors),
			floatOrNull(r.t.TTFTP50Ms, 1), floatOrNull(r.t.TTFTP95Ms, 1), floatOrNull(r.t.MeanPromptTokens, 1)}
		if cached {
			cells = append(cells, floatOrNull(r.t.MeanCachedTokens, 1))
		}
		if prefill {
			cells = append(cells, floatOrNull(r.t.ServerPrefillP50Ms, 2))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t, true
}
