package sim

import (
	"slices"

	"github.com/servebench/servebench/backend"
)

// batchScheduler is the continuous batcher of vLLM and SGLang.
//
// vLLM follows the V1 scheduler, vllm/v1/core/sched/scheduler.py,
// Scheduler.schedule(): every step has a budget of max_num_batched_tokens;
// RUNNING requests are served first, in order, each taking
// num_tokens − num_computed_tokens tokens (one for a decode, a chunk of
// its prompt for a prefill) up to the budget; when
// KVCacheManager.allocate_slots cannot find the blocks for them, the last
// request of the running list is preempted (FCFS policy:
// self.running.pop()), its blocks freed and its computed tokens reset to
// zero (_preempt_request), and it goes back to the front of the waiting
// queue to recompute its prompt and output so far — minus whatever prefix
// of it is still cached; the loop stops if the request itself had to go.
// WAITING requests are admitted only in steps without a preemption, in
// order, while the budget lasts and fewer than max_num_seqs run, each
// with a chunk of min(its uncached tokens, budget) and the blocks for that
// chunk; with scheduler_reserve_full_isl (the default) only if the blocks
// for all of its tokens are free (allocate_slots(full_sequence_must_fit=
// True) in vllm/v1/core/kv_cache_manager.py); the first that cannot get
// its blocks stops admission. A
// request samples a token at the end of the step that brings its computed
// tokens up to its length (first token: end of its last prompt chunk).
// With prefix caching a request's full blocks stay cached after it leaves
// (KVCacheManager.get_computed_blocks finds them; at most num_tokens − 1
// tokens hit).
//
// SGLang follows python/sglang/srt/managers/scheduler.py
// (get_next_batch_to_run): a prefill ("extend") batch of waiting requests
// runs whenever one can be formed — decodes wait meanwhile, as without
// --enable-mixed-chunk — and otherwise one decode step of every running
// request. Admission (schedule_policy.py, PrefillAdder) reserves for the
// future output of running requests: a request is admitted while
// free tokens − Σ running min(remaining output, 4096) × new_token_ratio
// covers its prompt plus min(its output, 4096) × new_token_ratio, with one
// chunked prefill of at most chunked_prefill_size tokens at a time.
// new_token_ratio starts at 0.7 and decays by (0.7 − 0.098)/600 per decode
// step (global_config.py). When a decode step finds no room, requests are
// retracted (schedule_batch.py, retract_decode) — the one with the fewest
// output tokens first, ties to the longest prompt — back to the waiting
// queue, and new_token_ratio is re-estimated as (decoded + 20 × running) /
// Σ max_new_tokens.
type batchScheduler struct {
	e       *Engine
	sglang  bool
	bs      int
	maxSeqs int
	budget  int
	maxLen  int
	prefix  bool
	full    bool
	pool    blockPool
	waiting deque
	running []Handle
	planned []entry
	// decodeOnly says the planned step holds only decodes.
	decodeOnly bool
	sh         shape
	groupHeld  map[int]int
	groupRefs  map[int]int
	// chunked is SGLang's request in chunked prefill, or -1.
	chunked Handle
	ratio   float64
}

// entry is one request's part of a planned step.
type entry struct {
	h       Handle
	n       int
	samples bool
}

// SGLang's admission constants (global_config.py, schedule_batch.py).
const (
	sglInitRatio     = 0.7
	sglMinRatio      = 0.7 * 0.14
	sglDecaySteps    = 600
	sglClipMaxNew    = 4096
	sglRetractDecode = 20
)

func newBatchScheduler(e *Engine) *batchScheduler {
	s := e.cfg.Server
	b := &batchScheduler{
		e: e, sglang: e.cfg.Backend == backend.SGLang, bs: s.BlockSize, maxSeqs: s.MaxNumSeqs,
		budget: s.MaxNumBatchedTokens, maxLen: s.MaxModelLen, prefix: s.PrefixCaching, full: s.ReserveFullPrompt,
		pool:      newBlockPool(s.KVBlocks, e.cfg.Backend == backend.VLLM),
		groupHeld: map[int]int{}, groupRefs: map[int]int{}, chunked: -1, ratio: sglInitRatio,
	}
	return b
}

func (b *batchScheduler) counts() (int, int, float64) {
	return len(b.running), b.waiting.len(), b.pool.usage()
}

func ownKey(h Handle) int64 { return 1<<40 + int64(h) }
func groupKey(g int) int64  { return int64(g) }

// convKey names the blocks a conversation's last turn left cached: its
// prompt and answer, which the conversation's next turn begins with.
func convKey(c int) int64 { return 2<<40 + int64(c) }

func (b *batchScheduler) enqueue(h Handle) {
	r := &b.e.reqs[h]
	total := r.prompt + r.output
	switch {
	case b.maxLen > 0 && total > b.maxLen:
		b.e.reject(h, "prompt plus max_tokens exceeds max_model_len")
	case (total+b.bs-1)/b.bs > b.pool.usable:
		b.e.reject(h, "request needs more KV blocks than the cache has")
	default:
		b.waiting.pushBack(h)
	}
}

// blocksFor is the blocks that cover n tokens.
func (b *batchScheduler) blocksFor(n int) int { return (n + b.bs - 1) / b.bs }

// grow makes h's blocks cover tokens; false when the pool is short.
func (b *batchScheduler) grow(h Handle, tokens int) bool {
	r := &b.e.reqs[h]
	need := b.blocksFor(tokens) - r.blocks - r.shared
	if !b.pool.take(need) {
		return false
	}
	if need > 0 {
		r.blocks += need
	}
	return true
}

// schedule adds n tokens of h to the planned step.
func (b *batchScheduler) schedule(h Handle, n int) {
	r := &b.e.reqs[h]
	samples := r.computed+n == r.numTokens()
	b.planned = append(b.planned, entry{h, n, samples})
	b.sh.add(n, r.computed, samples)
	if r.images > 0 && !r.encoded {
		b.sh.images += r.images
		r.encoded = true
	}
	if n != 1 || !samples {
		b.decodeOnly = false
	}
}

func (b *batchScheduler) plan() (float64, bool) {
	b.planned, b.sh, b.decodeOnly = b.planned[:0], shape{}, true
	if b.sglang {
		b.planSGLang()
	} else {
		b.planVLLM()
	}
	if len(b.planned) == 0 {
		return 0, false
	}
	return b.e.cost.batchStep(&b.sh, b.decodeOnly, b.e.cfg.Backend), true
}

func (b *batchScheduler) planVLLM() {
	budget := b.budget
	preempted := false
	for i := 0; i < len(b.running) && budget > 0; {
		h := b.running[i]
		r := &b.e.reqs[h]
		n := min(r.numTokens()-r.computed, budget)
		if n <= 0 {
			i++
			continue
		}
		ok := b.grow(h, r.computed+n)
		for !ok {
			victim := b.running[len(b.running)-1]
			b.running = b.running[:len(b.running)-1]
			b.preempt(victim)
			preempted = true
			if victim == h {
				break
			}
			ok = b.grow(h, r.computed+n)
		}
		if !ok {
			break
		}
		b.schedule(h, n)
		budget -= n
		i++
	}
	if preempted {
		return
	}
	for b.waiting.len() > 0 && budget > 0 && len(b.running) < b.maxSeqs {
		_, n, ok := b.admitFront(budget)
		if !ok {
			break
		}
		budget -= n
	}
}

// admitFront admits the front of the waiting queue with a chunk of at most
// budget tokens and schedules it; false when its blocks are not there.
func (b *batchScheduler) admitFront(budget int) (Handle, int, bool) {
	h := b.waiting.front()
	n, ok := b.admit(h, budget)
	if !ok {
		return h, 0, false
	}
	b.waiting.popFront()
	b.running = append(b.running, h)
	b.schedule(h, n)
	return h, n, true
}

// admit gives waiting request h its cached prefix and the blocks for a
// chunk of at most budget tokens; it returns the chunk, or false when the
// blocks are not there (nothing changes).
func (b *batchScheduler) admit(h Handle, budget int) (int, bool) {
	r := &b.e.reqs[h]
	shared, own, key, fromCache := b.lookup(h)
	hit := (shared + own) * b.bs
	n := min(r.numTokens()-hit, budget)
	need := b.blocksFor(hit+n) - shared - own
	touched := own
	if fromCache {
		touched += shared
	}
	if need+touched > b.pool.free {
		return 0, false
	}
	if b.full && b.blocksFor(r.numTokens())-shared-own+touched > b.pool.free {
		return 0, false
	}
	b.pool.reuse(key, own)
	if shared > 0 {
		if fromCache {
			b.pool.reuse(groupKey(r.group), shared)
			b.groupHeld[r.group] = shared
		}
		b.groupRefs[r.group]++
	}
	b.pool.take(need)
	r.shared, r.blocks, r.computed = shared, own+need, hit
	r.state = stateRunning
	b.e.emit(h, Event{Kind: EventScheduled, Cached: min(hit, r.prompt)})
	return n, true
}

// lookup is h's prefix-cache hit in blocks: its group's shared prefix
// (held by a running request, or cached in the free queue), then its own
// blocks kept from a preemption or, for a conversation's turn, the
// blocks its conversation's previous turn left (at most its history).
// key names the free-queue segment the own blocks come from.
func (b *batchScheduler) lookup(h Handle) (shared, own int, key int64, fromCache bool) {
	r := &b.e.reqs[h]
	key = ownKey(h)
	if !b.prefix || r.computed != 0 {
		return 0, 0, key, false
	}
	limit := (r.numTokens() - 1) / b.bs
	if g := r.group; g != 0 {
		gb := min(r.groupToks/b.bs, limit)
		switch {
		case gb == 0:
		case b.groupHeld[g] >= gb:
			shared = b.groupHeld[g]
		case b.pool.cached(groupKey(g)) >= gb:
			shared, fromCache = b.pool.cached(groupKey(g)), true
		}
		shared = min(shared, limit)
		if shared == 0 && gb > 0 {
			return 0, 0, key, false // own blocks hash on the group prefix
		}
	}
	own = min(b.pool.cached(key), limit-shared)
	if own == 0 && r.conv != 0 {
		key = convKey(r.conv)
		own = max(min(b.pool.cached(key), min(limit, r.histToks/b.bs)-shared), 0)
	}
	return shared, own, key, fromCache
}

// release frees h's blocks; with prefix caching its full private blocks
// stay cached, the last ones evicted first: under its own key after a
// preemption, under its conversation's when a conversation's turn ends
// (the next turn begins with them).
func (b *batchScheduler) release(h Handle, preempted bool) {
	r := &b.e.reqs[h]
	if r.shared > 0 {
		g := r.group
		b.groupRefs[g]--
		if b.groupRefs[g] == 0 {
			b.pool.release(groupKey(g), b.groupHeld[g])
			b.groupHeld[g] = 0
		}
	}
	full, key := 0, ownKey(h)
	if b.prefix && (preempted || r.conv != 0) {
		full = max(min(r.computed/b.bs-r.shared, r.blocks), 0)
		if !preempted {
			key = convKey(r.conv)
		}
	}
	b.pool.release(0, r.blocks-full)
	b.pool.release(key, full)
	r.blocks, r.shared = 0, 0
}

// preempt frees h and sends it back to the front of the waiting queue
// (vLLM's _preempt_request), or to its back (SGLang's retraction).
func (b *batchScheduler) preempt(h Handle) { b.evict(h, true) }

func (b *batchScheduler) evict(h Handle, front bool) {
	r := &b.e.reqs[h]
	b.release(h, true)
	r.computed, r.encoded, r.state = 0, false, stateWaiting
	if front {
		b.waiting.pushFront(h)
	} else {
		b.waiting.pushBack(h)
	}
	b.e.stats.Preemptions++
	b.e.emit(h, Event{Kind: EventPreempted})
}

func (b *batchScheduler) finish() {
	done := false
	for _, en := range b.planned {
		r := &b.e.reqs[en.h]
		if en.h == b.chunked && (en.samples || r.state == stateDone) {
			// its prompt's last chunk ran (it samples its first token,
			// which makes numTokens one more than computed): the
			// chunked prefill is over
			b.chunked = -1
		}
		if r.state == stateDone {
			continue // cancelled while the step ran
		}
		r.computed += en.n
		b.shareGroup(en.h)
		if !en.samples {
			continue
		}
		if b.e.sampled(en.h) {
			b.release(en.h, false)
			done = true
		}
	}
	if b.chunked >= 0 && b.e.reqs[b.chunked].computed == b.e.reqs[b.chunked].numTokens() {
		b.chunked = -1
	}
	if done {
		b.running = slices.DeleteFunc(b.running, func(h Handle) bool { return b.e.reqs[h].state == stateDone })
	}
	if b.sglang && b.decodeOnly {
		b.ratio = max(b.ratio-(sglInitRatio-sglMinRatio)/sglDecaySteps, sglMinRatio)
	}
}

// shareGroup makes the first full blocks of h's group prefix the group's,
// once computed, so later requests of the group hit them.
func (b *batchScheduler) shareGroup(h Handle) {
	r := &b.e.reqs[h]
	if !b.prefix || r.group == 0 || r.shared > 0 || b.groupHeld[r.group] > 0 {
		return
	}
	gb := r.groupToks / b.bs
	if gb == 0 || r.computed < gb*b.bs || r.blocks < gb {
		return
	}
	r.blocks -= gb
	r.shared = gb
	b.groupHeld[r.group] = gb
	b.groupRefs[r.group] = 1
}

// planSGLang forms a prefill batch if it can, else a decode batch.
func (b *batchScheduler) planSGLang() {
	if b.prefillSGLang() {
		return
	}
	b.decodeSGLang()
}

// reserved is the tokens SGLang's PrefillAdder sets aside for the future
// output of running requests.
func (b *batchScheduler) reserved() int {
	sum := 0.0
	for _, h := range b.running {
		r := &b.e.reqs[h]
		sum += float64(min(r.output-r.generated, sglClipMaxNew)) * b.ratio
	}
	return int(sum)
}

func (b *batchScheduler) prefillSGLang() bool {
	budget := b.budget
	if h := b.chunked; h >= 0 {
		r := &b.e.reqs[h]
		n := min(r.numTokens()-r.computed, budget)
		if !b.grow(h, r.computed+n) {
			return false
		}
		b.schedule(h, n)
		budget -= n
		if r.computed+n < r.numTokens() {
			return true
		}
	}
	reserve := b.reserved()
	for b.waiting.len() > 0 && budget > 0 && len(b.running) < b.maxSeqs {
		h := b.waiting.front()
		r := &b.e.reqs[h]
		future := int(float64(min(r.output-r.generated, sglClipMaxNew)) * b.ratio)
		if r.numTokens()+future+reserve > b.pool.free+b.cachedFor(h) {
			break
		}
		_, n, ok := b.admitFront(budget)
		if !ok {
			break
		}
		budget -= n
		reserve += future
		if r.computed+n < r.numTokens() {
			b.chunked = h
			break
		}
	}
	return len(b.planned) > 0
}

// cachedFor is the blocks of h's prefix that a hit would not need anew.
func (b *batchScheduler) cachedFor(h Handle) int {
	shared, own, _, _ := b.lookup(h)
	return shared + own
}

func (b *batchScheduler) decodeSGLang() {
	need := 0
	for _, h := range b.running {
		r := &b.e.reqs[h]
		if r.computed < r.numTokens() && h != b.chunked {
			need += b.blocksFor(r.computed+1) - r.blocks - r.shared
		}
	}
	if need > b.pool.free {
		b.retract(need)
	}
	for _, h := range b.running {
		r := &b.e.reqs[h]
		if h == b.chunked || r.computed >= r.numTokens() {
			continue
		}
		if b.grow(h, r.computed+1) {
			b.schedule(h, 1)
		}
	}
}

// retract sends running requests back to the queue, fewest outputs first
// (ties: longest prompt), until need blocks fit.
func (b *batchScheduler) retract(need int) {
	order := slices.Clone(b.running)
	slices.SortStableFunc(order, func(x, y Handle) int {
		rx, ry := &b.e.reqs[x], &b.e.reqs[y]
		if rx.generated != ry.generated {
			return ry.generated - rx.generated
		}
		return rx.prompt - ry.prompt
	})
	for need > b.pool.free && len(order) > 1 {
		h := order[len(order)-1]
		order = order[:len(order)-1]
		r := &b.e.reqs[h]
		if b.blocksFor(r.computed+1) > r.blocks+r.shared {
			need--
		}
		b.running = slices.DeleteFunc(b.running, func(x Handle) bool { return x == h })
		b.evict(h, false)
	}
	decoded, maxNew := 0, 0
	for _, h := range b.running {
		decoded += b.e.reqs[h].generated
		maxNew += b.e.reqs[h].output
	}
	if maxNew > 0 {
		b.ratio = min(1, float64(decoded+sglRetractDecode*len(b.running))/float64(maxNew))
	}
}

// cancel withdraws h (vLLM's finish_requests with FINISHED_ABORTED: out
// of the waiting queue or the running list, its blocks freed at once).
func (b *batchScheduler) cancel(h Handle) {
	switch b.e.reqs[h].state {
	case stateWaiting:
		b.waiting.remove(h)
	case stateRunning:
		b.running = slices.DeleteFunc(b.running, func(x Handle) bool { return x == h })
		b.release(h, false)
		if b.chunked == h {
			b.chunked = -1
		}
	}
}

// deque is a double-ended queue of handles.
type deque struct {
	buf        []Handle
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	n := max(2*len(d.buf), 16)
	buf := make([]Handle, n)
	for i := range d.size {
		buf[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = buf, 0
}

func (d *deque) pushBack(h Handle) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = h
	d.size++
}

func (d *deque) pushFront(h Handle) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = h
	d.size++
}

func (d *deque) front() Handle { return d.buf[d.head] }

func (d *deque) popFront() Handle {
	h := d.buf[d.head]
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return h
}

// remove deletes h from the queue, keeping the others' order.
func (d *deque) remove(h Handle) {
	for i := range d.size {
		if d.buf[(d.head+i)%len(d.buf)] != h {
			continue
		}
		for j := i; j < d.size-1; j++ {
			d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
		}
		d.size--
		return
	}
}
