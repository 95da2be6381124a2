package find

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
)

// ttftLevel is a level at load 1 whose TTFT p95 is v with a relative
// half-width w.
func ttftLevel(v, w float64, requests int) document.Level {
	return document.Level{Concurrency: 1, Requests: requests, CIConfidence: fp(0.95),
		TTFTP95Ms: fp(v), TTFTP95MsCILow: fp(v * (1 - w)), TTFTP95MsCIHigh: fp(v * (1 + w)), ThroughputTokS: fp(100)}
}

// TestDriftBetweenPasses: a load measured twice whose passes alone have
// intervals that do not overlap gets a warning in the answer, its figures
// written as verdicts write them (no "1.892e+04"); passes that agree, a
// Prober that gives no pass alone, or passes that each broke the SLO
// (past what the server sustains latency grows with time inside a level)
// get none.
func TestDriftBetweenPasses(t *testing.T) {
	cases := []struct {
		name         string
		slo          string
		first, again float64 // TTFT p95 of each pass alone, ms
		passAlone    bool
		want         string
	}{
		{"latency grew", "ttft_p95=100ms", 40, 160, true, "concurrency 1 measured twice differed beyond the intervals: ttft_p95 40 ms (38–42 ms) on pass 1, 160 ms (152–168 ms) on pass 2; the server changed"},
		{"large figures", "ttft_p95=30s", 18920.35, 40000, true, "concurrency 1 measured twice differed beyond the intervals: ttft_p95 18920.35 ms (17974.33–19866.37 ms) on pass 1, 40000 ms (38000–42000 ms) on pass 2"},
		{"passes agree", "ttft_p95=100ms", 90, 92, true, ""},
		{"no pass alone", "ttft_p95=100ms", 40, 160, false, ""},
		{"both passes broke", "ttft_p95=100ms", 1892, 17170, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{By: "concurrency", Bounds: bounds(t, c.slo), Max: 1})
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := s.Next(); !ok || p.Pass != 0 {
				t.Fatalf("first probe %+v", p)
			}
			if c.passAlone {
				s.ObservePass(ttftLevel(c.first, 0.05, 100))
			}
			s.Observe(ttftLevel(90, 0.5, 100)) // pooled: straddles 100 ms, measured again
			if p, ok := s.Next(); !ok || p.Load != 1 || p.Pass != 1 {
				t.Fatalf("second probe %+v, want load 1 pass 1", p)
			}
			if c.passAlone {
				s.ObservePass(ttftLevel(c.again, 0.05, 100))
			}
			s.Observe(ttftLevel((c.first+c.again)/2, 0.3, 200))
			a := s.Answer()
			switch {
			case c.want == "" && len(a.Warnings) > 0:
				t.Fatalf("warnings %q, want none", a.Warnings)
			case c.want != "" && (len(a.Warnings) != 1 || !strings.HasPrefix(a.Warnings[0], c.want)):
				t.Fatalf("warnings %q, want one starting %q", a.Warnings, c.want)
			}
		})
	}
}
