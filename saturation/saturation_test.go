package saturation

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
)

func fp(v float64) *float64 { return &v }

func TestCheck(t *testing.T) {
	base := document.Level{ThroughputTokS: fp(1000), E2EP50Ms: fp(100), TTFTP50Ms: fp(10)}
	with := func(edit func(l *document.Level)) *document.Level {
		l := base
		edit(&l)
		return &l
	}
	cases := []struct {
		name   string
		prev   *document.Level
		cur    *document.Level
		want   Reason
		detail string
	}{
		{"first level has nothing to compare", nil, &base, None, ""},
		{"throughput rose", &base, with(func(l *document.Level) { l.ThroughputTokS = fp(1200); l.E2EP50Ms = fp(150) }), None, ""},
		{"flat while latency rose", &base, with(func(l *document.Level) { l.ThroughputTokS = fp(1030); l.E2EP50Ms = fp(190) }), ThroughputFlat, "+3.0%"},
		{"fell while latency rose", &base, with(func(l *document.Level) { l.ThroughputTokS = fp(900); l.E2EP50Ms = fp(190) }), ThroughputFlat, "-10.0%"},
		{"flat but latency did not rise", &base, with(func(l *document.Level) { l.ThroughputTokS = fp(1000); l.E2EP50Ms = fp(90) }), None, ""},
		{"flat, TTFT when no E2E", with(func(l *document.Level) { l.E2EP50Ms = nil }), with(func(l *document.Level) { l.E2EP50Ms = nil; l.TTFTP50Ms = fp(30) }), ThroughputFlat, "TTFT p50"},
		{"gain exactly 5% is not flat", &base, with(func(l *document.Level) { l.ThroughputTokS = fp(1050); l.E2EP50Ms = fp(190) }), None, ""},
		{"preempted", nil, with(func(l *document.Level) { l.Preemptions = fp(3) }), Preempted, "3"},
		{"zero preemptions are no sign", nil, with(func(l *document.Level) { l.Preemptions = fp(0) }), None, ""},
		{"KV cache full", nil, with(func(l *document.Level) { l.PeakKVCacheUsage = fp(0.97) }), KVCacheFull, "97.0%"},
		{"KV cache not full", nil, with(func(l *document.Level) { l.PeakKVCacheUsage = fp(0.94) }), None, ""},
		{"rate shortfall against the schedule", nil, with(func(l *document.Level) { l.RequestedRate = fp(10); l.ScheduledRate = fp(11); l.AchievedRate = fp(9.5) }), RateShortfall, "86%"},
		{"Poisson spread is not a shortfall", nil, with(func(l *document.Level) { l.RequestedRate = fp(10); l.ScheduledRate = fp(8.9); l.AchievedRate = fp(8.8) }), None, ""},
		{"shortfall against the requested rate without a schedule", nil, with(func(l *document.Level) { l.RequestedRate = fp(10); l.AchievedRate = fp(6) }), RateShortfall, "60%"},
		{"queue growing", nil, with(func(l *document.Level) {
			l.RequestedRate = fp(10)
			l.RequestsWaitingRise = fp(18)
			l.PeakRequestsWaiting = fp(20)
		}), QueueGrowing, "18.0"},
		{"queue fluctuating", nil, with(func(l *document.Level) {
			l.RequestedRate = fp(10)
			l.RequestsWaitingRise = fp(2)
			l.PeakRequestsWaiting = fp(20)
		}), None, ""},
		{"queue growth only counts in open loop", nil, with(func(l *document.Level) { l.RequestsWaitingRise = fp(18); l.PeakRequestsWaiting = fp(20) }), None, ""},
		{"preemption comes first", &base, with(func(l *document.Level) { l.Preemptions = fp(1); l.ThroughputTokS = fp(900); l.E2EP50Ms = fp(500) }), Preempted, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check(c.prev, c.cur)
			if got.Reason != c.want || got.Saturated() != (c.want != None) {
				t.Fatalf("Check = %+v, want %q", got, c.want)
			}
			if !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("detail %q does not say %q", got.Detail, c.detail)
			}
		})
	}
}
