package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/workload"
)

func TestParseThinkTime(t *testing.T) {
	tests := []struct {
		in   string
		want ThinkTime
		err  bool
	}{
		{"const:1s", ThinkTime{Kind: ThinkConst, Mean: time.Second}, false},
		{"exp:2s", ThinkTime{Kind: ThinkExp, Mean: 2 * time.Second}, false},
		{"uniform:0.5s-3s", ThinkTime{Kind: ThinkUniform, Min: 500 * time.Millisecond, Max: 3 * time.Second}, false},
		{"const:0s", ThinkTime{Kind: ThinkConst}, false},
		{"uniform:3s-1s", ThinkTime{}, true},
		{"uniform:1s", ThinkTime{}, true},
		{"const:-1s", ThinkTime{}, true},
		{"exp:2h", ThinkTime{}, true},
		{"gauss:1s", ThinkTime{}, true},
		{"1s", ThinkTime{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseThinkTime(tt.in)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, tt.want, tt.err)
			}
			if again, _ := ParseThinkTime(got.String()); err == nil && again != got {
				t.Errorf("String() = %q reads back as %+v", got.String(), again)
			}
			if err != nil && !strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q does not name the value", err)
			}
		})
	}
}

func TestThinkTimeDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	u := ThinkTime{Kind: ThinkUniform, Min: time.Second, Max: 3 * time.Second}
	e := ThinkTime{Kind: ThinkExp, Mean: 2 * time.Second}
	var sumU, sumE time.Duration
	const n = 20000
	for range n {
		d := u.Draw(r)
		if d < u.Min || d > u.Max {
			t.Fatalf("uniform draw %v outside [%v, %v]", d, u.Min, u.Max)
		}
		sumU += d
		sumE += e.Draw(r)
	}
	if m := sumU / n; m < 1950*time.Millisecond || m > 2050*time.Millisecond {
		t.Errorf("uniform mean %v, want 2s", m)
	}
	if m := sumE / n; m < 1900*time.Millisecond || m > 2100*time.Millisecond {
		t.Errorf("exponential mean %v, want 2s", m)
	}
	a, b := thinkRand(7, 3), thinkRand(7, 3)
	if e.Draw(a) != e.Draw(b) || (ThinkTime{}).Draw(a) != 0 {
		t.Error("same seed and session must draw the same pauses; the zero law none")
	}
}

// answeringClient takes delay for every request and writes an answer
// where the request asks for one (a session's turns but the last).
type answeringClient struct {
	fakeClient
}

func (c *answeringClient) Do(ctx context.Context, req *backend.Request, res *record.Result) {
	c.fakeClient.Do(ctx, req, res)
	if req.Answer != nil {
		req.Answer.Reset()
		req.Answer.WriteString("answer to " + req.Prompt[:8])
	}
}

// sessionBuilder is the real workload builder for sessions of turns turns
// without length control (no probes are needed).
func sessionBuilder(t *testing.T, c backend.Client, turns int) *workload.Builder {
	b := workload.NewBuilder(workload.Spec{Scenario: workload.Multiturn, MaxTokens: 8, Seed: 1, Turns: turns}, c)
	if err := b.Calibrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPoolSessionsInVirtualTime runs 4 sessions of 3 turns with 2 in
// flight, each request taking 1 s and a constant 2 s think time, in
// virtual time: a session lasts 3×1 + 2×2 = 7 s, so the level takes 14 s;
// each turn starts 3 s after the previous one began and carries the
// conversation so far.
func TestPoolSessionsInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &answeringClient{fakeClient: fakeClient{delay: time.Second}}
		b := sessionBuilder(t, c, 3)
		s := &sink{t: t}
		level := Level{Level: 2, Concurrency: 2, Requests: 12, Sessions: 4, Turns: 3}
		sw := &Sweep{Run: "r", Method: Pool, Levels: []Level{level}, Client: c, Source: b, Sessions: b,
			Think: ThinkTime{Kind: ThinkConst, Mean: 2 * time.Second}, Sink: s}
		start := time.Now()
		if complete, err := sw.Do(context.Background()); !complete || err != nil {
			t.Fatal(complete, err)
		}
		if el := time.Since(start); el != 14*time.Second {
			t.Errorf("level took %v, want 14s", el)
		}
		checkSessions(t, s.results, 4, 3, 3*time.Second)
		if c.peak.Load() != 2 {
			t.Errorf("peak requests in flight %d, want 2 (one per session in flight)", c.peak.Load())
		}
	})
}

// TestRateSessionsInVirtualTime starts 6 sessions at 2 sessions/s
// (constant arrivals) whatever their turns do: session i starts at i/2 s
// and is scheduled then; a later turn is scheduled at its previous turn's
// end (1 s after its send) plus the 4 s think time, and in virtual time,
// where the client loses no time, sent then (no lag).
func TestRateSessionsInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &answeringClient{fakeClient: fakeClient{delay: time.Second}}
		b := sessionBuilder(t, c, 2)
		s := &sink{t: t}
		level := Level{Level: 0, Concurrency: 64, Requests: 12, Sessions: 6, Turns: 2, Rate: 2, Arrival: string(Constant)}
		sw := &Sweep{Run: "r", Method: Rate, Levels: []Level{level}, Client: c, Source: b, Sessions: b,
			Think: ThinkTime{Kind: ThinkConst, Mean: 4 * time.Second}, Sink: s}
		if complete, err := sw.Do(context.Background()); !complete || err != nil {
			t.Fatal(complete, err)
		}
		checkSessions(t, s.results, 6, 2, 5*time.Second)
		for _, r := range s.results {
			switch {
			case r.Turn == 1 && (r.ScheduledNS == nil || *r.ScheduledNS != int64(*r.Session)*int64(time.Second)/2 || r.StartNS != *r.ScheduledNS):
				t.Errorf("session %d: first turn scheduled %v, sent %d", *r.Session, r.ScheduledNS, r.StartNS)
			case r.Turn == 2 && (r.ScheduledNS == nil || *r.ScheduledNS != int64(*r.Session)*int64(time.Second)/2+5*int64(time.Second) || r.StartNS != *r.ScheduledNS):
				t.Errorf("session %d turn 2: scheduled %v, sent %d; want both at its first turn's end + 4 s", *r.Session, r.ScheduledNS, r.StartNS)
			}
		}
	})
}

// checkSessions checks that results hold n sessions of turns turns, each
// turn starting gap after the previous one, numbered in order, and each
// later turn sent after the previous answer.
func checkSessions(t *testing.T, results []record.Result, n, turns int, gap time.Duration) {
	t.Helper()
	if len(results) != n*turns {
		t.Fatalf("%d results, want %d", len(results), n*turns)
	}
	bySession := map[int][]record.Result{}
	for _, r := range results {
		if r.Session == nil || r.Turn < 1 || r.Turn > turns || !r.OK() {
			t.Fatalf("result %+v", r)
		}
		bySession[*r.Session] = append(bySession[*r.Session], r)
	}
	if len(bySession) != n {
		t.Fatalf("%d sessions, want %d", len(bySession), n)
	}
	for id, rs := range bySession {
		for k := 1; k < len(rs); k++ {
			a, b := rs[k-1], rs[k]
			if b.Turn != a.Turn+1 || b.Seq != a.Seq+1 || b.StartNS-a.StartNS != int64(gap) {
				t.Errorf("session %d: turn %d (seq %d) at %d, then turn %d (seq %d) at %d; want the next turn %v later",
					id, a.Turn, a.Seq, a.StartNS, b.Turn, b.Seq, b.StartNS, gap)
			}
		}
	}
}

// FuzzParseThinkTime: whatever --think-time says, the parser returns a law
// whose draws stay within [0, maxThink] and which reads back the same from
// its String, or an error that names the value.
func FuzzParseThinkTime(f *testing.F) {
	for _, s := range []string{"const:1s", "exp:2s", "uniform:0.5s-3s", "uniform:1s-1s", "exp:", "uniform:-", "const:1h0m0.000000001s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tt, err := ParseThinkTime(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("error %q does not name %q", err, s)
			}
			return
		}
		if again, err := ParseThinkTime(tt.String()); err != nil || again != tt {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, tt, tt.String(), again, err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		for range 8 {
			if d := tt.Draw(r); d < 0 || d > maxThink {
				t.Fatalf("%q drew %v", s, d)
			}
		}
	})
}

// TestSessionsContinueAcrossDo: several Do calls on one Sweep (find, run
// --stop-when-saturated) number their sessions on from the last, as one
// run does, so no two levels share a session's number and its seeded
// think times.
func TestSessionsContinueAcrossDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &answeringClient{fakeClient: fakeClient{delay: time.Second}}
		b := sessionBuilder(t, c, 2)
		s := &sink{t: t}
		sw := &Sweep{Run: "r", Method: Pool, Client: c, Source: b, Sessions: b, Sink: s}
		for _, l := range []Level{{Level: 1, Concurrency: 1, Requests: 6, Sessions: 3, Turns: 2}, {Level: 2, Concurrency: 2, Requests: 8, Sessions: 4, Turns: 2}} {
			sw.Levels = []Level{l}
			if complete, err := sw.Do(context.Background()); !complete || err != nil {
				t.Fatal(complete, err)
			}
		}
		if sw.FirstSession != 7 {
			t.Errorf("FirstSession %d after 7 sessions, want 7", sw.FirstSession)
		}
		seen := map[int]int{}
		for _, r := range s.results {
			if r.Session == nil {
				continue
			}
			if lv, ok := seen[*r.Session]; ok && lv != r.Level {
				t.Errorf("session %d in levels %d and %d", *r.Session, lv, r.Level)
			}
			seen[*r.Session] = r.Level
		}
		if len(seen) != 7 {
			t.Errorf("%d distinct sessions, want 7", len(seen))
		}
	})
}
