package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
)

// TestRunLevelReproducible: the same seed gives the same records; another
// seed moves the clients' jitter.
func TestRunLevelReproducible(t *testing.T) {
	run := func(seed uint64) *LevelResult {
		e := mustNew(t, testConfig(backend.VLLM))
		lr, err := RunLevel(e, Workload{PromptTokens: 200, OutputTokens: 20}, Load{Method: load.Pool, Concurrency: 4, Requests: 12, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return lr
	}
	a, b, c := run(7), run(7), run(8)
	if !reflect.DeepEqual(a.Results, b.Results) {
		t.Error("same seed, different records")
	}
	if reflect.DeepEqual(a.Results, c.Results) {
		t.Error("different seeds, identical records: no jitter")
	}
}

// TestRunLevelRecords: every counted request is a complete record with
// server-reported tokens, one chunk offset per token, and a TTFT that
// does not include the client's send jitter.
func TestRunLevelRecords(t *testing.T) {
	c := testConfig(backend.VLLM)
	c.Params.RequestLatency = 3 * time.Millisecond
	e := mustNew(t, c)
	lr, err := RunLevel(e, Workload{PromptTokens: 100, OutputTokens: 16}, Load{Method: load.Pool, Concurrency: 1, Requests: 3, Warmup: 2, Seed: 1, Run: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Results) != 5 || !lr.Results[0].Warmup || lr.Results[2].Warmup {
		t.Fatalf("want 2 warm-ups then 3 counted, got %d records", len(lr.Results))
	}
	for _, r := range lr.Results {
		if !r.OK() || r.Status != 200 || *r.OutputTokens != 16 || *r.PromptTokens != 100 || len(r.ChunkOffsetsNS) != 16 || r.Run != "r" {
			t.Errorf("record %+v", r)
		}
		// one request alone: TTFT = latency + 10 ms prefill
		if got := time.Duration(*r.TTFTNS); !near(got, 13*time.Millisecond) {
			t.Errorf("TTFT %v, want 13ms (the jitter is before the send)", got)
		}
		if r.ChunkOffsetsNS[15] != r.E2ENS {
			t.Errorf("last chunk at %d, E2E %d", r.ChunkOffsetsNS[15], r.E2ENS)
		}
	}
	l := lr.Level
	if l.Requests != 3 || l.Errors != 0 || l.ThroughputTokS == nil || l.PeakKVCacheUsage == nil || l.Preemptions == nil || *l.Preemptions != 0 {
		t.Errorf("level %+v", l)
	}
}

// TestRunLevelTelemetryByFamily: KV usage and preemptions come from vLLM
// and SGLang only, as from the real servers' metrics.
func TestRunLevelTelemetryByFamily(t *testing.T) {
	for _, f := range []backend.Kind{backend.VLLM, backend.SGLang, backend.LlamaCpp, backend.Ollama} {
		e := mustNew(t, testConfig(f))
		lr, err := RunLevel(e, Workload{PromptTokens: 50, OutputTokens: 4}, Load{Method: load.Pool, Concurrency: 2, Requests: 4})
		if err != nil {
			t.Fatal(err)
		}
		hasKV := lr.Level.PeakKVCacheUsage != nil
		if hasKV != batched(f) || (lr.Level.PeakRequestsRunning != nil) != (f != backend.Ollama) {
			t.Errorf("%s: KV usage %v, running %v", f, lr.Level.PeakKVCacheUsage, lr.Level.PeakRequestsRunning)
		}
	}
}

// TestRunLevelBatch: the batch method sends Repeats batches and derives
// the vllm-text-image-example.json record.
func TestRunLevelBatch(t *testing.T) {
	e := mustNew(t, testConfig(backend.VLLM))
	lr, err := RunLevel(e, Workload{PromptTokens: 32, OutputTokens: 128, Images: 0}, Load{Method: load.Batch, Concurrency: 4, Repeats: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := lr.Batch
	if b == nil || b.Repeats != 3 || len(b.Runs) != 3 || b.TotalVerifiedOutputTokens != 3*4*128 || b.Workload != "text" || len(b.Warnings) != 0 {
		t.Fatalf("batch record %+v", b)
	}
	for _, r := range lr.Results {
		if r.Repeat < 0 || r.Repeat > 2 {
			t.Errorf("repeat %d", r.Repeat)
		}
	}
}

// TestRunLevelRate: the open loop sends on its schedule, holds requests
// over the in-flight cap back and records when they were due.
func TestRunLevelRate(t *testing.T) {
	e := mustNew(t, testConfig(backend.VLLM))
	lr, err := RunLevel(e, Workload{PromptTokens: 100, OutputTokens: 50}, Load{Method: load.Rate, Key: 1, Rate: 200, Concurrency: 2, Requests: 20, Constant: true})
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for i, r := range lr.Results {
		if r.ScheduledNS == nil || *r.ScheduledNS != int64(time.Duration(i)*5*time.Millisecond) {
			t.Fatalf("request %d scheduled at %v", i, r.ScheduledNS)
		}
		if r.StartNS > *r.ScheduledNS {
			late++
		}
	}
	if late == 0 || lr.Level.RequestedRate == nil || *lr.Level.PeakRequestsRunning > 2 {
		t.Errorf("late %d, level %+v: the cap of 2 should hold requests back", late, lr.Level)
	}
}

// TestRunLevelBadLoad: loads that cannot run are errors naming the field.
func TestRunLevelBadLoad(t *testing.T) {
	w := Workload{PromptTokens: 10, OutputTokens: 10}
	for _, l := range []Load{
		{Method: "burst", Concurrency: 1, Requests: 1},
		{Method: load.Pool, Concurrency: 0, Requests: 1},
		{Method: load.Batch, Concurrency: 1},
		{Method: load.Rate, Requests: 5},
	} {
		e := mustNew(t, testConfig(backend.VLLM))
		if _, err := RunLevel(e, w, l); err == nil {
			t.Errorf("%+v: no error", l)
		}
	}
}
