package load

import (
	"context"
	"sync"

	"github.com/servebench/servebench/workload"
)

// ItemBlock is how many requests a level prepares at a time: a level of
// any size holds the block being sent, the next one (prepared while the
// first is sent, so that no request waits for its prompt) and the one in
// preparation, not one prompt per request of the level. 256 prompts of a
// few KB each are about a megabyte.
const ItemBlock = 256

// feed hands out the n requests of a level numbered seq0 … seq0+n−1 in
// order, preparing them ItemBlock at a time on a goroutine of its own,
// one block ahead of the senders. take is safe for concurrent use.
type feed struct {
	seq0, n int
	ready   chan feedBlock
	done    chan struct{}
	exited  chan struct{}

	mu    sync.Mutex
	block []workload.Item
	base  int // index of block[0] in the level
	next  int // index of the next request handed out
	err   error
}

// feedBlock is one prepared block, or the error preparing it.
type feedBlock struct {
	items []workload.Item
	err   error
}

// newFeed starts preparing n requests from seq0 with prepare (a Source's
// Items or WarmupItems) and waits for the first block, so that a level
// whose first requests cannot be prepared fails before it starts. Its
// error is that of the first block; close must be called in every case.
func newFeed(ctx context.Context, seq0, n int, prepare func(ctx context.Context, seq0, n int) ([]workload.Item, error)) (*feed, error) {
	f := &feed{seq0: seq0, n: max(n, 0), ready: make(chan feedBlock, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go f.produce(ctx, prepare)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n > 0 && !f.advance() {
		return f, f.err
	}
	return f, nil
}

// produce prepares the blocks in order until the last, an error, or
// close.
func (f *feed) produce(ctx context.Context, prepare func(ctx context.Context, seq0, n int) ([]workload.Item, error)) {
	defer close(f.exited)
	defer close(f.ready)
	for off := 0; off < f.n; off += ItemBlock {
		items, err := prepare(ctx, f.seq0+off, min(ItemBlock, f.n-off))
		select {
		case f.ready <- feedBlock{items: items, err: err}:
		case <-f.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// advance moves to the next prepared block, waiting for it; false when
// there is none (the last was handed out, or preparing it failed: err).
// f.mu is held.
func (f *feed) advance() bool {
	b, ok := <-f.ready
	if !ok {
		return false
	}
	if b.err != nil {
		f.err = b.err
		return false
	}
	f.base += len(f.block)
	f.block = b.items
	return len(b.items) > 0
}

// take returns the next request and its index in the level (its
// sequence number is seq0 plus it); false when none is left or the next
// block could not be prepared (Err says which).
func (f *feed) take() (*workload.Item, int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next >= f.n || f.err != nil {
		return nil, 0, false
	}
	if f.next-f.base >= len(f.block) && !f.advance() {
		return nil, 0, false
	}
	i := f.next
	f.next++
	return &f.block[i-f.base], i, true
}

// Err is the error preparing a block after the first, nil if none.
func (f *feed) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// close stops the preparation and waits for its goroutine.
func (f *feed) close() {
	close(f.done)
	for range f.ready { // unblock a send in flight
	}
	<-f.exited
}
