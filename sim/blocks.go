package sim

// blockPool counts the KV blocks of a paged server the way vLLM's
// BlockPool (vllm/v1/core/block_pool.py) hands them out: free blocks wait
// in one queue in eviction order; allocation takes from its head, evicting
// whatever prefix-cache entry a block still held; freed blocks join its
// tail, a request's blocks in reverse order (KVCacheManager.free), so a
// freed sequence loses its last blocks first and keeps its prefix cached
// longest. Blocks are counted per owner, not listed one by one: the queue
// holds segments of blocks, keyed by the owner whose prefix they cache
// (a preempted request, a shared-prefix group) or 0 for blocks no later
// request can hit.
type blockPool struct {
	// numBlocks is the server's num_gpu_blocks; one is vLLM's null block,
	// so usable = numBlocks − 1.
	numBlocks, usable int
	free              int
	queue             []*segment
	head              int
	byKey             map[int64]*segment
}

// segment is a run of free blocks in the queue.
type segment struct {
	key int64
	n   int
}

func newBlockPool(numBlocks int, nullBlock bool) blockPool {
	usable := numBlocks
	if nullBlock {
		usable--
	}
	p := blockPool{numBlocks: numBlocks, usable: usable, free: usable, byKey: map[int64]*segment{}}
	p.queue = append(p.queue, &segment{n: usable})
	return p
}

// take allocates k blocks from the head of the free queue, evicting cached
// prefixes; it reports false (and takes nothing) when fewer are free.
func (p *blockPool) take(k int) bool {
	if k <= 0 {
		return true
	}
	if k > p.free {
		return false
	}
	p.free -= k
	for k > 0 {
		s := p.queue[p.head]
		d := min(s.n, k)
		s.n -= d
		k -= d
		if s.n == 0 {
			p.drop()
		}
	}
	return true
}

// drop removes the empty head segment.
func (p *blockPool) drop() {
	s := p.queue[p.head]
	if s.key != 0 && p.byKey[s.key] == s {
		delete(p.byKey, s.key)
	}
	p.queue[p.head] = nil
	p.head++
	if p.head > 64 && p.head*2 > len(p.queue) {
		n := copy(p.queue, p.queue[p.head:])
		clear(p.queue[n:])
		p.queue = p.queue[:n]
		p.head = 0
	}
	for p.head < len(p.queue) && p.queue[p.head].n == 0 {
		p.drop()
	}
}

// release returns n blocks to the tail of the queue, cached under key (0:
// nobody will hit them).
func (p *blockPool) release(key int64, n int) {
	if n <= 0 {
		return
	}
	p.free += n
	if key == 0 && len(p.queue) > p.head {
		if t := p.queue[len(p.queue)-1]; t.key == 0 {
			t.n += n
			return
		}
	}
	s := &segment{key: key, n: n}
	if key != 0 {
		if old := p.byKey[key]; old != nil {
			old.key = 0 // superseded: its blocks can no longer be hit
		}
		p.byKey[key] = s
	}
	p.queue = append(p.queue, s)
}

// cached is the blocks still cached under key.
func (p *blockPool) cached(key int64) int {
	if s := p.byKey[key]; s != nil {
		return s.n
	}
	return 0
}

// reuse takes k of the blocks cached under key out of the free queue (a
// prefix-cache hit touches them); blocks of the segment past the hit stay
// free but can no longer be hit.
func (p *blockPool) reuse(key int64, k int) {
	s := p.byKey[key]
	if s == nil || k <= 0 {
		return
	}
	k = min(k, s.n)
	s.n -= k
	p.free -= k
	s.key = 0
	delete(p.byKey, key)
	for p.head < len(p.queue) && p.queue[p.head].n == 0 {
		p.drop()
	}
}

// usage is vLLM's kv_cache_usage (BlockPool.get_usage): 1 − free blocks
// / the blocks other than the null block.
func (p *blockPool) usage() float64 {
	return 1 - float64(p.free)/float64(p.usable)
}
