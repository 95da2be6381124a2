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
// intervals that do not overlap gets a warning in the answer; passes
// that agree, or a Prober that gives no pass alone, get none.
func TestDriftBetweenPasses(t *testing.T) {
	cases := []struct {
		name         string
		first, again float64 // TTFT p95 of each pass alone, ms
		passAlone    bool
		want         string
	}{
		{"latency grew", 40, 160, true, "concurrency 1 measured twice differed beyond the intervals: ttft_p95 40 (38–42) on pass 1, 160 (152–168) on pass 2"},
		{"passes agree", 90, 92, true, ""},
		{"no pass alone", 40, 160, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{By: "concurrency", Bounds: bounds(t, "ttft_p95=100ms"), Max: 1})
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
