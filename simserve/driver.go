package simserve

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/sim"
)

// driver runs a sim.Engine in real time on one goroutine: the engine's
// virtual time is the wall time since start (monotonic), less the pauses
// of a machine too busy to keep up (maxLag). The goroutine
// sleeps until the engine's next event or the next command, advances the
// engine to the present and runs the command; the engine's listeners are
// called on it, so they must only hand events on (mailbox.put).
type driver struct {
	eng   *sim.Engine
	start time.Time
	// paused is the virtual time held back, in nanoseconds: when the
	// machine stalls the driver for longer than maxLag, the simulated
	// server pauses with it, as a real server's process would, rather
	// than catching up in a burst of every token due meanwhile.
	paused atomic.Int64
	cmds   chan func()
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// maxLag is how far the engine may fall behind the wall clock before the
// simulated server counts as paused. Below it, late tokens go out as soon
// as the driver wakes (a timer or scheduler delay, a few milliseconds);
// above it (a machine too busy to run the simulator, seen stalling a
// process for a second), virtual time stops while the machine does.
const maxLag = 100 * time.Millisecond

// newDriver starts the goroutine that owns eng.
func newDriver(eng *sim.Engine) *driver {
	d := &driver{eng: eng, start: time.Now(), cmds: make(chan func(), 1024),
		quit: make(chan struct{}), done: make(chan struct{})}
	go d.loop()
	return d
}

// now is the virtual time of the present: the wall time since start, less
// the pauses.
func (d *driver) now() time.Duration { return time.Since(d.start) - time.Duration(d.paused.Load()) }

// wallAt is the wall time of virtual time t (pauses so far included).
func (d *driver) wallAt(t time.Duration) time.Time {
	return d.start.Add(t + time.Duration(d.paused.Load()))
}

// advance runs the engine to the present; when its next event is more than
// maxLag behind, it pauses virtual time so that it is maxLag behind.
func (d *driver) advance() {
	now := d.now()
	if t, ok := d.eng.NextEvent(); ok && now-t > maxLag {
		shift := now - t - maxLag
		d.paused.Add(int64(shift))
		now -= shift
	}
	d.eng.AdvanceTo(now)
}

// maxBatch bounds the commands run in one wake-up, so a flood of new
// requests cannot hold back the events already due.
const maxBatch = 256

func (d *driver) loop() {
	defer close(d.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		if t, ok := d.eng.NextEvent(); ok {
			timer.Reset(time.Until(d.wallAt(t)))
		} else {
			timer.Stop()
		}
		select {
		case <-d.quit:
			timer.Stop()
			return
		case c := <-d.cmds:
			d.advance()
			c()
			for range maxBatch {
				select {
				case c := <-d.cmds:
					c()
					continue
				default:
				}
				break
			}
		case <-timer.C:
			d.advance()
		}
	}
}

// run runs fn on the engine's goroutine, after advancing the engine to
// the present, and waits for it; false when the driver has stopped.
func (d *driver) run(fn func(e *sim.Engine, now time.Duration)) bool {
	ran := make(chan struct{})
	select {
	case d.cmds <- func() { fn(d.eng, d.eng.Now()); close(ran) }:
	case <-d.quit:
		return false
	}
	select {
	case <-ran:
		return true
	case <-d.done:
		return false
	}
}

// post runs fn on the engine's goroutine without waiting for it.
func (d *driver) post(fn func(e *sim.Engine)) {
	select {
	case d.cmds <- func() { fn(d.eng) }:
	case <-d.quit:
	}
}

// submit sends r now; its events go to box.
func (d *driver) submit(r sim.Request, box *mailbox) (sim.Handle, time.Duration, error) {
	var (
		h   sim.Handle
		at  time.Duration
		err error
	)
	ok := d.run(func(e *sim.Engine, now time.Duration) {
		at = now
		h, err = e.Submit(r, now, box.put)
	})
	if !ok {
		return 0, 0, errStopped
	}
	return h, at, err
}

// cancel withdraws h (a client that went away).
func (d *driver) cancel(h sim.Handle) { d.post(func(e *sim.Engine) { e.Cancel(h) }) }

// stats is the engine's state now; once the driver stopped, its state
// when it stopped (false).
func (d *driver) stats() (sim.Stats, bool) {
	var s sim.Stats
	if d.run(func(e *sim.Engine, _ time.Duration) { s = e.Stats() }) {
		return s, true
	}
	<-d.done // the goroutine is gone: the engine is ours to read
	return d.eng.Stats(), false
}

// stop ends the goroutine; requests in flight get no more events.
func (d *driver) stop() {
	d.once.Do(func() { close(d.quit) })
	<-d.done
}

// mailbox collects one request's events from the engine's goroutine for
// its handler: put never blocks, wake signals that there is something to
// take.
type mailbox struct {
	mu    sync.Mutex
	evs   []sim.Event
	spare []sim.Event
	wake  chan struct{}
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

// put is the request's sim.Listener.
func (m *mailbox) put(ev sim.Event) {
	m.mu.Lock()
	m.evs = append(m.evs, ev)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// take returns the events put since the last take; the slice is valid
// until the next take.
func (m *mailbox) take() []sim.Event {
	m.mu.Lock()
	evs := m.evs
	m.evs = m.spare[:0]
	m.spare = evs
	m.mu.Unlock()
	return evs
}
