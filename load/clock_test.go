package load

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

// fakeClock is a Clock whose time moves only when the test says so
// (advanceTo); next tells the test the earliest pending Sleep or AfterFunc.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waits   []*fakeWait
	changed chan struct{} // closed and replaced whenever waits change
}

// fakeWait is a pending Sleep (wake is closed when due) or AfterFunc (f
// runs when due).
type fakeWait struct {
	at   time.Time
	wake chan struct{}
	f    func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	w := c.add(d, nil)
	select {
	case <-w.wake:
		return true
	case <-ctx.Done():
		c.remove(w)
		return false
	}
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	w := c.add(d, f)
	return func() bool { return c.remove(w) }
}

func (c *fakeClock) add(d time.Duration, f func()) *fakeWait {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &fakeWait{at: c.now.Add(d), wake: make(chan struct{}), f: f}
	c.waits = append(c.waits, w)
	c.notify()
	return w
}

func (c *fakeClock) remove(w *fakeWait) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.waits, w)
	if i < 0 {
		return false
	}
	c.waits = slices.Delete(c.waits, i, i+1)
	c.notify()
	return true
}

func (c *fakeClock) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// next waits until a Sleep or AfterFunc is pending and returns the earliest
// deadline; false when done closed first.
func (c *fakeClock) next(done <-chan struct{}) (time.Time, bool) {
	for {
		c.mu.Lock()
		if len(c.waits) > 0 {
			at := c.waits[0].at
			for _, w := range c.waits[1:] {
				if w.at.Before(at) {
					at = w.at
				}
			}
			c.mu.Unlock()
			return at, true
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return time.Time{}, false
		}
	}
}

// advanceTo sets the time to t and fires every wait due by then.
func (c *fakeClock) advanceTo(t time.Time) {
	c.mu.Lock()
	c.now = t
	var due []*fakeWait
	c.waits = slices.DeleteFunc(c.waits, func(w *fakeWait) bool {
		if w.at.After(t) {
			return false
		}
		due = append(due, w)
		return true
	})
	c.notify()
	c.mu.Unlock()
	for _, w := range due {
		if w.f != nil {
			go w.f()
		} else {
			close(w.wake)
		}
	}
}

// instantClient answers every request at once, taking no time on any
// clock.
type instantClient struct{}

func (instantClient) Do(_ context.Context, req *backend.Request, res *record.Result) {
	out := req.MaxTokens
	res.OutputTokens, res.Status = &out, 200
}
func (instantClient) Tokenize(context.Context, string) (int, error) { return 0, backend.ErrUnsupported }
func (instantClient) Warnings() []string                            { return nil }

// countingSink passes everything to a sink and lets the test wait until
// n Results arrived.
type countingSink struct {
	*sink
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func (c *countingSink) Result(r *record.Result) {
	c.sink.Result(r)
	c.mu.Lock()
	c.n++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *countingSink) waitResults(n int) {
	for {
		c.mu.Lock()
		got, ch := c.n, c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		<-ch
	}
}

// TestRateOnFakeClock drives the rate method with a fake clock, advancing
// it to each Sleep the sweep asks for: every request is sent exactly at
// its Pacer due time (StartNS = ScheduledNS = Due(k)), and the level ends
// at the last due time, with no real waiting. Before each advance the
// driver waits until every request due earlier has been delivered: those
// run on goroutines of their own, and a clock moved while one of them had
// yet to read it would stamp it late (the quiescence a virtual clock must
// wait for; see Clock).
func TestRateOnFakeClock(t *testing.T) {
	for _, arrival := range []Arrival{Constant, Poisson} {
		t.Run(string(arrival), func(t *testing.T) {
			clock := newFakeClock()
			t0 := clock.Now()
			level := Level{Level: 3, Concurrency: 4, Requests: 12, Rate: 5, Arrival: string(arrival)}
			s := &countingSink{sink: &sink{t: t}, changed: make(chan struct{})}
			sw := &Sweep{Run: "r", Method: Rate, Levels: []Level{level}, Seed: 11, Clock: clock,
				Client: instantClient{}, Source: fakeSource{}, Sink: s}
			pacer := NewPacer(level, sw.Seed)
			done := make(chan struct{})
			var complete bool
			var err error
			go func() {
				complete, err = sw.Do(context.Background())
				close(done)
			}()
			sleeps := 0
			for {
				at, ok := clock.next(done)
				if !ok {
					break
				}
				sleeps++
				dueBefore := 0
				for k := range level.Requests {
					if t0.Add(pacer.Due(k)).Before(at) {
						dueBefore++
					}
				}
				s.waitResults(dueBefore)
				clock.advanceTo(at)
			}
			if !complete || err != nil {
				t.Fatalf("Do = %v, %v", complete, err)
			}
			if len(s.results) != level.Requests {
				t.Fatalf("%d results, want %d", len(s.results), level.Requests)
			}
			rs := slices.Clone(s.results)
			slices.SortFunc(rs, func(a, b record.Result) int { return a.Seq - b.Seq })
			for k, r := range rs {
				due := int64(pacer.Due(k))
				if r.ScheduledNS == nil || *r.ScheduledNS != due || r.StartNS != due {
					t.Errorf("request %d: start %d ns, scheduled %v; want both %d ns", k, r.StartNS, r.ScheduledNS, due)
				}
			}
			if got, want := clock.Now().Sub(t0), pacer.Due(level.Requests-1); got != want {
				t.Errorf("the sweep ended at %v on the clock, want the last due time %v", got, want)
			}
			if sleeps == 0 || sleeps > level.Requests-1 {
				t.Errorf("%d sleeps for %d requests", sleeps, level.Requests)
			}
		})
	}
}

// blockingClient holds every request until its context ends.
type blockingClient struct {
	started  chan struct{}
	inFlight atomic.Int64
}

func (c *blockingClient) Do(ctx context.Context, _ *backend.Request, res *record.Result) {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	c.started <- struct{}{}
	<-ctx.Done()
	res.Reason, res.Error = record.ReasonCanceled, "canceled"
}
func (c *blockingClient) Tokenize(context.Context, string) (int, error) {
	return 0, backend.ErrUnsupported
}
func (c *blockingClient) Warnings() []string { return nil }

// TestGraceOnFakeClock cancels a sweep with two requests in flight: they
// go on until Grace has passed on the sweep's clock, and no longer.
func TestGraceOnFakeClock(t *testing.T) {
	clock := newFakeClock()
	c := &blockingClient{started: make(chan struct{}, 2)}
	s := &sink{t: t}
	const grace = 7 * time.Second
	sw := &Sweep{Run: "r", Method: Pool, Levels: []Level{{Level: 2, Concurrency: 2, Requests: 2}}, Grace: grace,
		Clock: clock, Client: c, Source: fakeSource{}, Sink: s}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var complete bool
	go func() {
		complete, _ = sw.Do(ctx)
		close(done)
	}()
	<-c.started
	<-c.started
	cancel()
	at, ok := clock.next(done)
	if !ok {
		t.Fatal("the sweep ended before its grace period")
	}
	if want := clock.Now().Add(grace); !at.Equal(want) {
		t.Fatalf("grace ends at %v, want %v", at, want)
	}
	if n := c.inFlight.Load(); n != 2 {
		t.Fatalf("%d requests in flight before the grace period passed, want 2", n)
	}
	clock.advanceTo(at)
	<-done
	if complete || len(s.results) != 2 || s.results[0].Reason != record.ReasonCanceled {
		t.Fatalf("complete %v, results %+v", complete, s.results)
	}
	if _, pending := clock.next(closed()); pending {
		t.Fatal("a Sleep or AfterFunc outlived Do")
	}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestRateInVirtualTime runs a whole rate sweep whose requests take 0.9 s
// each inside a testing/synctest bubble, where RealClock's time is virtual
// and moves only when every goroutine of the bubble waits: 40 requests at
// 8/s take 5.775 virtual seconds and no real ones, and every request
// starts exactly when due and lasts exactly its 0.9 s.
func TestRateInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const took = 900 * time.Millisecond
		fc := &fakeClient{delay: took}
		s := &sink{t: t}
		level := Level{Level: 0, Concurrency: 16, Requests: 40, Rate: 8, Arrival: string(Constant)}
		sw := &Sweep{Run: "r", Method: Rate, Levels: []Level{level}, Client: fc, Source: fakeSource{}, Sink: s}
		start := time.Now()
		if complete, err := sw.Do(context.Background()); !complete || err != nil {
			t.Fatal(complete, err)
		}
		if el, want := time.Since(start), 39*time.Second/8+took; el != want {
			t.Errorf("the sweep took %v of virtual time, want %v", el, want)
		}
		for _, r := range s.results {
			if r.ScheduledNS == nil || r.StartNS != *r.ScheduledNS || r.E2ENS != int64(took) {
				t.Errorf("request %d: start %d, scheduled %v, e2e %d", r.Seq, r.StartNS, r.ScheduledNS, r.E2ENS)
			}
		}
		if len(s.results) != 40 || fc.peak.Load() != 8 {
			t.Errorf("%d results, peak in flight %d; want 40 and 8", len(s.results), fc.peak.Load())
		}
	})
}

// TestLoadReadsTimeOnlyThroughClock: no file of load but clock.go calls
// the time package's clock or timers.
func TestLoadReadsTimeOnlyThroughClock(t *testing.T) {
	forbidden := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if name == "clock.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && forbidden[sel.Sel.Name] {
				t.Errorf("%s: time.%s: read the time through the Sweep's Clock", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no files checked")
	}
}
