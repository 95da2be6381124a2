package report

import (
	"fmt"

	"github.com/servebench/servebench/document"
)

// peopleTable is a users run's people per level (run --users): how many
// people, the conversations and turns that counted, and the message rate
// they made, beside the latencies each person felt (docs/users.md).
func peopleTable(r *document.Run) (Table, bool) {
	if r.Method != "users" {
		return Table{}, false
	}
	t := Table{Columns: []Column{{"people", Right}, {"conversations", Right}, {"turns", Right}, {"messages/min", Right},
		{"in flight", Right}, {"TTFT p95 ms", Right}, {"E2E mean ms", Right}}}
	for _, l := range r.Levels {
		rate, inFlight := "-", "-"
		if l.MessageRate != nil {
			rate = fmt.Sprintf("%.1f", *l.MessageRate*60)
			if l.E2EMeanMs != nil {
				// Little's law: requests in flight = message rate × E2E
				inFlight = fmt.Sprintf("%.2f", *l.MessageRate**l.E2EMeanMs/1000)
			}
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(l.Concurrency), intOrNull(l.Conversations), fmt.Sprint(l.Requests), rate,
			inFlight, floatOrNull(l.TTFTP95Ms, 0), floatOrNull(l.E2EMeanMs, 0)})
	}
	return t, true
}
