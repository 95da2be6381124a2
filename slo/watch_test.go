package slo

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/record"
)

// result is a counted request with the given TTFT and E2E in ms; failed
// marks it failed (no latency counts).
func result(ttftMs, e2eMs float64, failed bool) *record.Result {
	ttft := int64(ttftMs * 1e6)
	r := &record.Result{TTFTNS: &ttft, E2ENS: int64(e2eMs * 1e6), Status: 200}
	if failed {
		r.Reason, r.Error = record.ReasonCanceled, "canceled"
	}
	return r
}

// TestBreakWatch: a level stops at the first look (the 59 requests a
// p95's decided pass needs, then each doubling) whose one-sided lower
// bound lies beyond a latency ceiling at the confidence left for that
// look; a level within its bound, or broken only a little, never stops;
// failed requests and bounds that are not latency percentiles count for
// nothing.
func TestBreakWatch(t *testing.T) {
	tests := []struct {
		name string
		slo  string
		// ttft(i), e2e(i), failed(i) make request i
		ttft, e2e func(i int) float64
		failed    func(i int) bool
		n         int
		stopAt    int // 1-based request the watch stops at; 0: never
		metric    string
	}{
		{"all far above: first look", "ttft_p95=1s", func(int) float64 { return 5000 }, nil, nil, 500, 59, "ttft_p95"},
		{"all within: never", "ttft_p95=1s", func(int) float64 { return 200 }, nil, nil, 500, 0, ""},
		{"1 in 16 above a p95: never at these counts", "ttft_p95=1s", func(i int) float64 {
			if i%16 == 0 {
				return 5000
			}
			return 200
		}, nil, nil, 500, 0, ""},
		{"1 in 10 above a p95: third look", "ttft_p95=1s", func(i int) float64 {
			if i%10 == 0 {
				return 5000
			}
			return 200
		}, nil, nil, 500, 236, "ttft_p95"},
		{"a third above a p95: second look", "ttft_p95=1s", func(i int) float64 {
			if i%3 == 0 && i >= 40 {
				return 5000
			}
			return 200
		}, nil, nil, 500, 118, "ttft_p95"},
		{"the e2e bound of two", "ttft_p95=1s,e2e_p50=2s", func(int) float64 { return 100 }, func(int) float64 { return 9000 }, nil, 500, 59, "e2e_p50"},
		{"failed requests count for no bound", "ttft_p95=1s", func(int) float64 { return 5000 }, nil, func(int) bool { return true }, 500, 0, ""},
		{"no latency percentile: never", "throughput_min=100", func(int) float64 { return 5000 }, nil, nil, 500, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bounds, err := Parse(tc.slo)
			if err != nil {
				t.Fatal(err)
			}
			w := NewBreakWatch(bounds, 0)
			got, why := 0, ""
			for i := range tc.n {
				e2e := 100.0
				if tc.e2e != nil {
					e2e = tc.e2e(i)
				}
				failed := tc.failed != nil && tc.failed(i)
				if why = w.Add(result(tc.ttft(i), e2e, failed)); why != "" {
					got = i + 1
					break
				}
			}
			if got != tc.stopAt {
				t.Fatalf("stopped at request %d (%q), want %d", got, why, tc.stopAt)
			}
			if tc.metric != "" && !strings.HasPrefix(why, tc.metric+" decisively above ") {
				t.Fatalf("why %q, want it to name %s", why, tc.metric)
			}
		})
	}
}
