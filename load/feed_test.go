package load

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/workload"
)

// countingSource prepares requests with a prompt of promptBytes and
// remembers the largest batch it was asked for and every sequence number.
type countingSource struct {
	promptBytes int
	due         time.Duration // request k is due at k·due (a trace)

	mu      sync.Mutex
	largest int
	seqs    map[int]bool
}

func (s *countingSource) Items(_ context.Context, seq0, n int) ([]workload.Item, error) {
	s.mu.Lock()
	s.largest = max(s.largest, n)
	if s.seqs == nil {
		s.seqs = map[int]bool{}
	}
	for i := range n {
		s.seqs[seq0+i] = true
	}
	s.mu.Unlock()
	items := make([]workload.Item, n)
	for i := range items {
		items[i].Request = backend.Request{Prompt: strings.Repeat("x", s.promptBytes), MaxTokens: 4}
		items[i].Due = time.Duration(seq0+i) * s.due
	}
	return items, nil
}

// chunkClient answers every request at once with four chunks.
type chunkClient struct{}

func (chunkClient) Do(_ context.Context, req *backend.Request, res *record.Result) {
	res.Status, res.E2ENS = 200, 4
	res.ChunkOffsetsNS = []int64{1, 2, 3, 4}
	out := req.MaxTokens
	res.OutputTokens = &out
}
func (chunkClient) Tokenize(context.Context, string) (int, error) { return 0, backend.ErrUnsupported }
func (chunkClient) Warnings() []string                            { return nil }

// seqSink keeps the sequence numbers and schedules of the counted Results.
type seqSink struct {
	seqs  []int
	sched []int64
}

func (s *seqSink) LevelStart(Level) {}
func (s *seqSink) Result(r *record.Result) {
	if !r.Warmup {
		s.seqs = append(s.seqs, r.Seq)
		if r.ScheduledNS != nil {
			s.sched = append(s.sched, *r.ScheduledNS)
		}
	}
}
func (s *seqSink) LevelEnd(Level, *record.LevelEnd) {}

// TestLevelPreparesRequestsInBlocks checks that every method sends each
// request of a level once while asking its Source for at most ItemBlock
// requests at a time, so that a level's prompts are not all held at once.
func TestLevelPreparesRequestsInBlocks(t *testing.T) {
	n := 3*ItemBlock + 5
	cases := []struct {
		name  string
		m     Method
		level Level
	}{
		{"pool", Pool, Level{Level: 4, Concurrency: 4, Requests: n}},
		{"batch", Batch, Level{Level: 7, Concurrency: 7, Repeats: n / 7}},
		{"rate", Rate, Level{Level: 0, Concurrency: 8, Requests: n, Rate: 1e6, Arrival: string(Constant)}},
		{"trace", Rate, Level{Level: 0, Concurrency: 8, Requests: n, Arrival: string(Trace)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &countingSource{promptBytes: 8, due: time.Microsecond}
			sk := &seqSink{}
			sw := &Sweep{Run: "r", Method: c.m, Warmup: ItemBlock + 1, Client: chunkClient{}, Source: src, Sink: sk, Levels: []Level{c.level}}
			if complete, err := sw.Do(context.Background()); err != nil || !complete {
				t.Fatalf("Do = %v, %v", complete, err)
			}
			want := c.m.Total(c.level)
			if len(sk.seqs) != want {
				t.Fatalf("%d counted results, want %d", len(sk.seqs), want)
			}
			seen := map[int]bool{}
			for _, q := range sk.seqs {
				if seen[q] || !src.seqs[q] {
					t.Fatalf("seq %d sent twice or never prepared", q)
				}
				seen[q] = true
			}
			if src.largest > ItemBlock {
				t.Fatalf("the Source was asked for %d requests at once, want at most %d", src.largest, ItemBlock)
			}
			if c.name == "trace" {
				// each request is scheduled at its own due time
				slices.Sort(sk.sched)
				for k, s := range sk.sched {
					if d := time.Duration(s - sk.sched[0]); d != time.Duration(k)*src.due {
						t.Fatalf("request %d scheduled %v after the first, want %v", k, d, time.Duration(k)*src.due)
					}
				}
			}
		})
	}
}

// heapSink samples the live heap once, halfway through a level.
type heapSink struct {
	at, n int
	heap  uint64
}

func (s *heapSink) LevelStart(Level) {}
func (s *heapSink) Result(r *record.Result) {
	if s.n++; s.n == s.at {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		s.heap = m.HeapAlloc
	}
}
func (s *heapSink) LevelEnd(Level, *record.LevelEnd) {}

// BenchmarkLevelMemory reports the live heap per request of a pool level
// of 20,000 requests with 4 KB prompts, sampled halfway through it
// (live-B/req): what a level holds for requests it has not sent yet.
func BenchmarkLevelMemory(b *testing.B) {
	const n = 20000
	for b.Loop() {
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		sk := &heapSink{at: n / 2}
		sw := &Sweep{Run: "r", Method: Pool, Client: chunkClient{}, Source: &countingSource{promptBytes: 4096}, Sink: sk,
			Levels: []Level{{Level: 8, Concurrency: 8, Requests: n}}}
		if _, err := sw.Do(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(int64(sk.heap)-int64(m0.HeapAlloc))/n, "live-B/req")
	}
}
