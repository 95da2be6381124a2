package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// TestEveryRequestEnds feeds the engine random small configurations and
// requests (prefix groups included) and requires that each request ends,
// finished or rejected, once the engine has nothing left to do: a
// scheduler that can plan no step while holding requests must not leave
// them in flight forever (StuckReason). Trials 8334, 8697 and 12940 are
// SGLang cases whose chunked prefill could not grow beside prefix-cache
// groups; they hung before the engine ended stuck requests.
func TestEveryRequestEnds(t *testing.T) {
	trials := []int{8334, 8697, 12940}
	for i := range 3000 {
		trials = append(trials, i)
	}
	ran := map[backend.Kind]int{}
	var lastErr error
	for _, trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		fams := []backend.Kind{backend.VLLM, backend.SGLang, backend.LlamaCpp, backend.Ollama}
		fam := fams[rng.IntN(4)]
		srv := Server{}
		switch fam {
		case backend.VLLM, backend.SGLang:
			srv.KVBlocks = 2 + rng.IntN(60)
			bs := 16
			if fam == backend.SGLang {
				srv.KVBlocks = 20 + rng.IntN(1000)
				bs = 1
			}
			srv.MaxModelLen = 16 + rng.IntN(srv.KVBlocks*bs)
			srv.MaxNumSeqs = 1 + rng.IntN(8)
			srv.MaxNumBatchedTokens = 16 + rng.IntN(300)
			if fam == backend.VLLM {
				srv.BlockSize = 16
			}
		default:
			srv.Slots = 1 + rng.IntN(3)
			srv.SlotContext = 32 + rng.IntN(400)
		}
		cfg, err := Spec{Backend: fam, GPU: "RTX 4090", Model: "qwen2.5-7b", Server: srv, NoPrefixCaching: rng.IntN(2) == 0}.Config()
		if err != nil {
			lastErr = err
			continue
		}
		ran[fam]++
		e, err := New(cfg)
		if err != nil {
			continue
		}
		n := 1 + rng.IntN(20)
		ended := 0
		stuck := 0
		for i := 0; i < n; i++ {
			r := Request{PromptTokens: 1 + rng.IntN(600), OutputTokens: 1 + rng.IntN(400)}
			if rng.IntN(2) == 0 {
				r.PrefixGroup = 1 + rng.IntN(2)
				r.SharedPrefixTokens = min(r.PromptTokens, 1+rng.IntN(200))
			}
			_, err := e.Submit(r, e.Now()+time.Duration(rng.IntN(1000))*time.Millisecond, func(ev Event) {
				if ev.Kind == EventFinished || ev.Kind == EventRejected {
					ended++
				}
				if ev.Kind == EventRejected && ev.Reason == StuckReason {
					stuck++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		e.Drain()
		_ = lastErr
		if stuck > 0 {
			t.Logf("trial %d %s: %d stuck requests ended with StuckReason", trial, fam, stuck)
		}
		if ended != n {
			t.Errorf("trial %d %s %+v: %d of %d requests ended; engine idle", trial, fam, cfg.Server, ended, n)
		}
	}
	t.Logf("trials per family %v (last configuration refused: %v)", ran, lastErr)
}
