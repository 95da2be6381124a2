package simserve

import (
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// TestDriverPausesOnAStall: a driver that wakes 2 s late (a machine that
// stalled the process) runs the engine only maxLag past its next event and
// counts the rest as a pause, so the simulated server resumes where it
// stopped instead of emitting two seconds of tokens at once; a driver
// that wakes a little late catches up.
func TestDriverPausesOnAStall(t *testing.T) {
	cfg, err := sim.Spec{Backend: backend.VLLM, GPU: "RTX 4090", Model: "qwen2.5-7b", Quant: "awq"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		late      time.Duration
		wantPause bool
	}{{"a little late catches up", 50 * time.Millisecond, false}, {"a stall pauses", 2 * time.Second, true}} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tokens := 0
			if _, err := e.Submit(sim.Request{PromptTokens: 10, OutputTokens: 1000}, 0, func(ev sim.Event) {
				if ev.Kind == sim.EventToken {
					tokens++
				}
			}); err != nil {
				t.Fatal(err)
			}
			first, _ := e.NextEvent()
			d := &driver{eng: e, start: time.Now().Add(-(first + tc.late))} // no goroutine: advance by hand
			d.advance()
			paused := time.Duration(d.paused.Load())
			switch {
			case tc.wantPause && (paused < tc.late-maxLag-50*time.Millisecond || e.Now() > first+maxLag):
				t.Errorf("paused %v, engine at %v: want about %v paused and the engine at most %v past %v", paused, e.Now(), tc.late-maxLag, maxLag, first)
			case !tc.wantPause && (paused != 0 || e.Now() < first+tc.late):
				t.Errorf("paused %v, engine at %v: want no pause and the engine caught up to %v", paused, e.Now(), first+tc.late)
			}
			// ~6 ms a token on this GPU: a burst of a pause's worth of
			// tokens would be hundreds
			if tc.wantPause && tokens > int(maxLag/(5*time.Millisecond))+1 {
				t.Errorf("%d tokens in one wake-up after a stall", tokens)
			}
			if got := d.now(); got < e.Now() || got > e.Now()+50*time.Millisecond {
				t.Errorf("virtual now %v, engine %v: the clock should resume from the engine's time", got, e.Now())
			}
		})
	}
}
