package find

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/slo"
)

// Sentence is a users search's answer in one sentence a person can act
// on, e.g. "RTX 4090, qwen2.5-14b AWQ, vLLM: 18 chat users (16–20) at
// TTFT p95 ≤ 1 s, TPOT p95 ≤ 100 ms"; who names the server (GPU, model,
// quant, family), profile the people. A server that holds no one says 0
// and the figure that broke.
func (a Answer) Sentence(who, profile string, simulated bool) string {
	var b strings.Builder
	if simulated {
		b.WriteString("SIMULATED: ")
	}
	budget := make([]string, len(a.Bounds))
	for i, bd := range a.Bounds {
		budget[i] = boundWords(bd)
	}
	at := strings.Join(budget, ", ")
	switch {
	case a.Load == nil && a.FirstFail != nil:
		fmt.Fprintf(&b, "%s: 0 %s users at %s: one breaks it (%s)", who, profile, at, breaks(a.FailedBy))
	case a.Load == nil:
		fmt.Fprintf(&b, "%s: no answer for %s users at %s (the search stopped: %s)", who, profile, at, a.Stop)
	default:
		fmt.Fprintf(&b, "%s: %s %s users (%s) at %s", who, slo.ByUsers.Format(*a.Load), profile, a.intervalText(), at)
		if a.Stop == MaxLoad {
			b.WriteString(" (every number tried passed)")
		}
	}
	if a.Stop == OutOfTime || a.Stop == Interrupted {
		fmt.Fprintf(&b, " [search cut short: %s]", a.Stop)
	}
	return b.String()
}

// boundWords writes a bound as a person reads it: "TTFT p95 ≤ 1 s",
// "TPOT p95 ≤ 100 ms".
func boundWords(b slo.Bound) string {
	s := b.String()
	name, pct, ok := strings.Cut(string(b.Metric), "_p")
	if !ok || !strings.HasSuffix(s, " ms") {
		return s
	}
	v := fmt.Sprintf("%g ms", b.Value)
	if b.Value >= 1000 {
		v = fmt.Sprintf("%g s", b.Value/1000)
	}
	return fmt.Sprintf("%s p%s ≤ %s", strings.ToUpper(name), pct, v)
}
