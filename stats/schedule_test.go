package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

const msNS = int64(1e6)

// scheduled builds n rate-method Results due every gap ms, request k sent
// lag(k) ms late and taking e2e ms (TTFT a fifth of it), at most one
// failing (fail = its index, −1 for none).
func scheduled(n int, gap int64, lag func(k int) int64, e2e int64, fail int) []record.Result {
	rs := make([]record.Result, n)
	for k := range rs {
		sched := int64(k) * gap * msNS
		ttft := e2e * msNS / 5
		out := 8
		rs[k] = record.Result{Seq: k, ScheduledNS: ptr.To(sched), StartNS: sched + lag(k)*msNS, E2ENS: e2e * msNS,
			TTFTNS: &ttft, OutputTokens: &out, ExpectedOutputTokens: 8, Status: 200}
		if k == fail {
			rs[k].Reason, rs[k].Error, rs[k].TTFTNS = record.ReasonHTTP5xx, "boom", nil
		}
	}
	return rs
}

func nearMs(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", name, deref(got), want)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestScheduledLatencies: a client that sends request k 100·k ms late
// (one slot, 300 ms requests, due every 200 ms) reports E2E from the
// scheduled time as E2E + lag, the lag's distribution and growth, and the
// rates; the send-time E2E stays 300 ms.
func TestScheduledLatencies(t *testing.T) {
	rs := scheduled(12, 200, func(k int) int64 { return 100 * int64(k) }, 300, -1)
	l := SummarizeLevel(rs)
	nearMs(t, "e2e_p50", l.E2EP50Ms, 300)
	nearMs(t, "e2e_mean", l.E2EMeanMs, 300)
	nearMs(t, "e2e_p99", l.E2EP99Ms, 300)
	nearMs(t, "ttft_mean", l.TTFTMeanMs, 60)
	// lags 0, 100, …, 1100 ms: mean 550, p50 550, p95 1045, p99 1089, max 1100.
	nearMs(t, "lag_p50", l.ScheduleLagP50Ms, 550)
	nearMs(t, "lag_p95", l.ScheduleLagP95Ms, 1045)
	nearMs(t, "lag_p99", l.ScheduleLagP99Ms, 1089)
	nearMs(t, "lag_mean", l.ScheduleLagMeanMs, 550)
	nearMs(t, "lag_max", l.ScheduleLagMaxMs, 1100)
	nearMs(t, "e2e_sched_p50", l.E2ESchedP50Ms, 850)
	nearMs(t, "e2e_sched_p95", l.E2ESchedP95Ms, 1345)
	nearMs(t, "e2e_sched_p99", l.E2ESchedP99Ms, 1389)
	nearMs(t, "e2e_sched_mean", l.E2ESchedMeanMs, 850)
	nearMs(t, "ttft_sched_mean", l.TTFTSchedMeanMs, 610)
	nearMs(t, "ttft_sched_p50", l.TTFTSchedP50Ms, 610)
	// First quarter lags 0, 100, 200; last 900, 1000, 1100: growth 900 ms.
	nearMs(t, "lag_growth", l.ScheduleLagGrowthMs, 900)
	// Scheduled: 11 gaps of 200 ms; sent: 11 gaps of 300 ms.
	nearMs(t, "scheduled_rate", l.ScheduledRate, 5)
	nearMs(t, "achieved_rate", l.AchievedRate, 11/3.3)
	// Each request starts as the one before it ends: one in flight.
	if l.PeakInFlight == nil || *l.PeakInFlight != 1 {
		t.Errorf("peak in flight %v, want 1", l.PeakInFlight)
	}
	// A failed request has a lag but no latency.
	f := SummarizeLevel(scheduled(12, 200, func(int) int64 { return 0 }, 300, 3))
	if f.ScheduleLagP50Ms == nil || *f.ScheduleLagMaxMs != 0 || len(f.Warnings) != 0 {
		t.Fatalf("lag %+v", f)
	}
	// Pool and batch levels have none of these fields.
	var pool []record.Result
	for _, r := range rs {
		r.ScheduledNS = nil
		pool = append(pool, r)
	}
	p := SummarizeLevel(pool)
	if p.E2ESchedP50Ms != nil || p.ScheduledRate != nil || p.PeakInFlight != nil || p.ClientLimited != nil {
		t.Fatalf("pool level has schedule fields: %+v", p)
	}
}

func TestCheckSchedule(t *testing.T) {
	cases := []struct {
		name    string
		rs      []record.Result
		cap     int
		limited *bool
		cause   string
	}{
		{"on time", scheduled(40, 100, func(k int) int64 { return int64(k % 3) }, 250, -1), 4, ptr.To(false), ""},
		{"steady lag is no limit", scheduled(40, 100, func(int) int64 { return 400 }, 250, -1), 4, ptr.To(false), ""},
		{"jitter below threshold", scheduled(40, 10, func(k int) int64 { return int64(k) / 2 }, 5, -1), 4, ptr.To(false), ""},
		{"behind at the cap", scheduled(40, 100, func(k int) int64 { return 30 * int64(k) }, 390, -1), 3, ptr.To(true), "reached the cap of 3"},
		{"behind below the cap", scheduled(40, 100, func(k int) int64 { return 30 * int64(k) }, 20, -1), 64, ptr.To(true), "peaked at 1, below the cap of 64"},
		{"too few requests", scheduled(7, 100, func(k int) int64 { return 300 * int64(k) }, 20, -1), 1, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := SummarizeLevel(c.rs)
			l.Concurrency = c.cap
			l.RequestedRate = ptr.To(10.0)
			CheckSchedule(&l)
			if (l.ClientLimited == nil) != (c.limited == nil) || l.ClientLimited != nil && *l.ClientLimited != *c.limited {
				t.Fatalf("client limited %v, want %v (achieved %v, scheduled %v, growth %v)", l.ClientLimited, c.limited, deref(l.AchievedRate), deref(l.ScheduledRate), deref(l.ScheduleLagGrowthMs))
			}
			w := strings.Join(l.Warnings, "\n")
			if c.cause == "" {
				if strings.Contains(w, "client-limited") {
					t.Fatalf("warning %q", w)
				}
				return
			}
			if !strings.Contains(w, "client-limited") || !strings.Contains(w, c.cause) || !strings.Contains(w, "requested 10") {
				t.Fatalf("warning %q lacks %q", w, c.cause)
			}
		})
	}
	// A level without a schedule is left alone.
	var l document.Level
	CheckSchedule(&l)
	if l.ClientLimited != nil || l.Warnings != nil {
		t.Fatal("judged a level without a schedule")
	}
}

func TestPeakInFlight(t *testing.T) {
	cases := []struct {
		spans []span
		want  int
	}{
		{nil, 0},
		{[]span{{0, 10}, {10, 20}}, 1},
		{[]span{{0, 10}, {5, 20}, {6, 7}, {8, 30}}, 3},
		{[]span{{0, 10}, {0, 10}, {0, 10}}, 3},
	}
	for _, c := range cases {
		if got := peakInFlight(c.spans); got != c.want {
			t.Errorf("peakInFlight(%v) = %d, want %d", c.spans, got, c.want)
		}
	}
}

// TestPromptWarningOnlyOverTargets: requests without a prompt target (a
// mix's image requests) do not make the level's prompt look off target.
func TestPromptWarningOnlyOverTargets(t *testing.T) {
	rs := scheduled(8, 100, func(int) int64 { return 0 }, 50, -1)
	for k := range rs {
		p := 32
		rs[k].ExpectedPromptTokens = 32
		if k%2 == 1 {
			p, rs[k].ExpectedPromptTokens = 300, 0 // an image request
		}
		rs[k].PromptTokens = &p
	}
	if l := SummarizeLevel(rs); len(l.Warnings) != 0 || *l.MeanPromptTokens != 166 {
		t.Fatalf("warnings %q, mean prompt %v", l.Warnings, *l.MeanPromptTokens)
	}
	short := 30
	rs[0].PromptTokens, rs[2].PromptTokens = &short, &short // 31 of 32 on target: −3.1%
	if w := strings.Join(SummarizeLevel(rs).Warnings, "\n"); !strings.Contains(w, "mean prompt length 31.0 tokens is -3.1% off the 32-token target") {
		t.Fatalf("warnings %q", w)
	}
}
