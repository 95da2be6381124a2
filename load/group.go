package load

import (
	"context"
	"sync"
)

// group runs goroutines and waits for them, like sync.WaitGroup, telling
// the Tracker what it does: each goroutine gets a token as it starts; a
// waiter gives its token back while it waits, and the last goroutine to
// end hands its own token to the waiter instead of giving it back.
type group struct {
	tr      Tracker
	mu      sync.Mutex
	n       int
	waiting bool
	done    chan struct{}
}

func newGroup(tr Tracker) *group { return &group{tr: tr, done: make(chan struct{})} }

// Go runs f on its own goroutine.
func (g *group) Go(f func()) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	g.tr.Busy(+1)
	go func() {
		defer g.exit()
		f()
	}()
}

func (g *group) exit() {
	g.mu.Lock()
	g.n--
	last := g.n == 0 && g.waiting
	g.mu.Unlock()
	if last {
		close(g.done) // this goroutine's token passes to the waiter
		return
	}
	g.tr.Busy(-1)
}

// Wait waits until every goroutine started by Go has returned. It is
// called once, after the last Go.
func (g *group) Wait() {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return
	}
	g.waiting = true
	g.mu.Unlock()
	g.tr.Busy(-1)
	<-g.done
}

// semaphore holds n slots; one goroutine (the rate method's pacer) takes
// them, the goroutines it started give them back. A taker that waits for
// a slot gives its token back; the goroutine that frees the slot hands it
// one.
type semaphore struct {
	tr     Tracker
	mu     sync.Mutex
	free   int
	waiter chan struct{}
}

func newSemaphore(tr Tracker, n int) *semaphore { return &semaphore{tr: tr, free: n} }

// acquire takes a slot, waiting until one is free or ctx ends; it reports
// whether it took one.
func (s *semaphore) acquire(ctx context.Context) bool {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return true
	}
	w := make(chan struct{})
	s.waiter = w
	s.mu.Unlock()
	s.tr.Busy(-1)
	select {
	case <-w:
		return true // release handed over the slot and a token
	case <-ctx.Done():
	}
	s.mu.Lock()
	if s.waiter == w {
		s.waiter = nil
		s.mu.Unlock()
		s.tr.Busy(+1)
		return false
	}
	s.mu.Unlock()
	<-w // handed over just as ctx ended
	return true
}

// release frees a slot, handing it (and a token) to a waiting taker.
func (s *semaphore) release() {
	s.mu.Lock()
	if w := s.waiter; w != nil {
		s.waiter = nil
		s.mu.Unlock()
		s.tr.Busy(+1)
		close(w)
		return
	}
	s.free++
	s.mu.Unlock()
}
