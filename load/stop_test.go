package load

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/record"
)

// TestLevelStop: under every method with planned counted requests, a
// level whose check stops it after a few counted results sends no
// further request (those in flight end and count), says so in its
// level_end warnings, and the next level runs its whole length unwatched.
func TestLevelStop(t *testing.T) {
	const after = 3 // the check stops level 1 at its 3rd counted result
	tests := []struct {
		name   string
		method Method
		level  Level
		// most is the most counted results a stopped level 1 may have:
		// the stopping one and those then in flight
		most int
	}{
		{"pool", Pool, Level{Concurrency: 2, Requests: 40}, after + 2},
		{"batch", Batch, Level{Concurrency: 2, Repeats: 20}, after + 2},
		{"rate", Rate, Level{Concurrency: 2, Requests: 40, Rate: 1000, Arrival: string(Constant)}, after + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{t: t}
			first, second := tc.level, tc.level
			first.Level, second.Level = 1, 2
			sw := &Sweep{Run: "r", Method: tc.method, Client: &fakeClient{delay: 2 * time.Millisecond}, Source: fakeSource{}, Sink: s,
				Levels: []Level{first, second},
				Stop: func(l Level) func(*record.Result) string {
					if l.Level != 1 {
						return nil
					}
					n := 0
					return func(*record.Result) string {
						if n++; n >= after {
							return "enough"
						}
						return ""
					}
				}}
			if complete, err := sw.Do(context.Background()); err != nil || !complete {
				t.Fatalf("Do = %v, %v", complete, err)
			}
			counted := map[int]int{}
			for _, r := range s.results {
				if !r.Warmup {
					counted[r.Level]++
				}
			}
			planned := tc.method.Total(tc.level)
			if counted[1] < after || counted[1] > tc.most {
				t.Errorf("stopped level: %d counted results, want %d–%d", counted[1], after, tc.most)
			}
			if counted[2] != planned {
				t.Errorf("next level: %d counted results, want all %d", counted[2], planned)
			}
			if len(s.ends) != 2 {
				t.Fatalf("%d level ends", len(s.ends))
			}
			var warns []string
			if f := s.ends[0].Fields; f != nil {
				warns = f.Warnings
			}
			want := fmt.Sprintf("stopped after %d of %d counted requests: enough", counted[1], planned)
			if len(warns) != 1 || warns[0] != want {
				t.Errorf("stopped level's warnings %q, want [%q]", warns, want)
			}
			if f := s.ends[1].Fields; f != nil && len(f.Warnings) > 0 && strings.Contains(strings.Join(f.Warnings, " "), "stopped") {
				t.Errorf("the level that ran whole says %q", f.Warnings)
			}
		})
	}
}
