package sim

import "github.com/servebench/servebench/backend"

// slotScheduler is llama.cpp's server and Ollama's runner.
//
// llama.cpp follows tools/server/server.cpp (server_context.update_slots
// and get_available_slot): --parallel slots share one KV cache of -c cells,
// n_ctx / n_parallel per slot; a task takes an idle slot — the least
// recently used, since unique prompts share no prefix — and holds it from
// its prompt to its last token; a task that finds every slot busy waits in
// the deferred queue, first in first out, and takes the next slot that
// frees. Each loop iteration builds one batch: first the sampled token of
// every generating slot, then prompt tokens of the slots still processing
// their prompts, slot by slot, until the batch holds n_batch tokens;
// llama_decode splits it into micro-batches of n_ubatch tokens, in order,
// and each reads the weights again. A slot whose prompt ends in the batch
// samples its first token at its end; generating slots sample their next.
// A prompt at least as long as the slot's context is refused; generation
// stops when the slot's context is full.
//
// Ollama follows runner/llamarunner/runner.go (Server.processBatch):
// OLLAMA_NUM_PARALLEL sequences of num_ctx cells each, a batch of
// num_batch (512) tokens filled the same way, the same engine underneath;
// requests beyond the parallel limit wait on the runner's semaphore in
// arrival order. A prompt longer than num_ctx is truncated to fit (Ollama
// keeps its end), and generation goes on past a full context by shifting
// it (the shift itself is not modelled).
type slotScheduler struct {
	e        *Engine
	ollama   bool
	slots    []slotState
	queue    deque
	nBatch   int
	nUBatch  int
	ctx      int
	planned  []entry
	busy     int
	cellsUse int
}

// slotState is one slot: the request it holds (-1: idle), when it was
// last released, and the conversation whose last turn it still holds in
// its cache (conv, 0: none) with the tokens cached. llama.cpp keeps a
// slot's cells after a task (cache_prompt) and gives a task the idle
// slot whose cached prompt it shares most (get_available_slot's
// similarity); Ollama's runner reuses the cached sequence with the
// longest common prefix (InputCache.LoadCacheSlot): a conversation's
// next turn finds its history there.
type slotState struct {
	h        Handle
	lastUsed int64
	conv     int
	cached   int
}

func newSlotScheduler(e *Engine) *slotScheduler {
	s := e.cfg.Server
	sc := &slotScheduler{e: e, ollama: e.cfg.Backend == backend.Ollama, nBatch: s.NBatch, nUBatch: s.NUBatch, ctx: s.SlotContext}
	sc.slots = make([]slotState, s.Slots)
	for i := range sc.slots {
		sc.slots[i].h = -1
	}
	return sc
}

func (s *slotScheduler) counts() (int, int, float64) {
	return s.busy, s.queue.len(), float64(s.cellsUse) / float64(len(s.slots)*s.ctx)
}

func (s *slotScheduler) enqueue(h Handle) {
	r := &s.e.reqs[h]
	if s.ollama {
		r.prompt = min(r.prompt, s.ctx-1)
	} else if r.prompt >= s.ctx {
		s.e.reject(h, "the request exceeds the available context size")
		return
	}
	if !s.ollama {
		// generation stops at the end of the slot's context
		r.output = min(r.output, s.ctx-r.prompt)
	}
	if i := s.idle(h); i >= 0 {
		s.assign(i, h)
		return
	}
	s.queue.pushBack(h)
}

// idle is the idle slot that holds h's conversation, else the least
// recently used idle slot, or −1.
func (s *slotScheduler) idle(h Handle) int {
	best := -1
	conv := s.e.reqs[h].conv
	for i, sl := range s.slots {
		if sl.h >= 0 {
			continue
		}
		if conv != 0 && sl.conv == conv {
			return i
		}
		if best < 0 || sl.lastUsed < s.slots[best].lastUsed {
			best = i
		}
	}
	return best
}

// assign gives slot i to h; a turn of the conversation the slot still
// caches starts with its history computed.
func (s *slotScheduler) assign(i int, h Handle) {
	sl := &s.slots[i]
	sl.h = h
	r := &s.e.reqs[h]
	r.slot, r.state, r.computed = i, stateRunning, 0
	if r.conv != 0 && sl.conv == r.conv {
		r.computed = max(min(sl.cached, r.histToks, r.prompt-1), 0)
		s.cellsUse += r.computed
	}
	sl.conv, sl.cached = 0, 0
	s.busy++
	s.e.emit(h, Event{Kind: EventScheduled, Cached: r.computed})
}

func (s *slotScheduler) plan() (float64, bool) {
	s.planned = s.planned[:0]
	n := 0
	for _, sl := range s.slots {
		if sl.h >= 0 && s.e.reqs[sl.h].computed >= s.e.reqs[sl.h].prompt {
			s.planned = append(s.planned, entry{sl.h, 1, true})
			n++
		}
	}
	for _, sl := range s.slots {
		if n >= s.nBatch {
			break
		}
		if sl.h < 0 {
			continue
		}
		r := &s.e.reqs[sl.h]
		if r.computed >= r.prompt {
			continue
		}
		k := min(r.prompt-r.computed, s.nBatch-n)
		s.planned = append(s.planned, entry{sl.h, k, r.computed+k == r.prompt})
		n += k
	}
	if n == 0 {
		return 0, false
	}
	return s.cost(), true
}

// cost is the sum of the batch's micro-batches.
func (s *slotScheduler) cost() float64 {
	var total float64
	var sh shape
	room := s.nUBatch
	for _, en := range s.planned {
		r := &s.e.reqs[en.h]
		ctx, left := r.computed, en.n
		if r.images > 0 && !r.encoded {
			sh.images += r.images
			r.encoded = true
		}
		for left > 0 {
			k := min(left, room)
			left -= k
			sh.add(k, ctx, en.samples && left == 0)
			ctx += k
			room -= k
			if room == 0 {
				total += s.e.cost.microBatch(&sh)
				sh, room = shape{}, s.nUBatch
			}
		}
	}
	if sh.tokens > 0 {
		total += s.e.cost.microBatch(&sh)
	}
	return total
}

func (s *slotScheduler) finish() {
	for _, en := range s.planned {
		r := &s.e.reqs[en.h]
		if r.state == stateDone {
			continue // cancelled while the step ran
		}
		r.computed += en.n
		s.cellsUse += en.n
		if !en.samples || !s.e.sampled(en.h) {
			continue
		}
		s.release(en.h)
	}
}

// release frees h's slot and its cells and gives the slot to the next
// deferred task.
func (s *slotScheduler) release(h Handle) {
	r := &s.e.reqs[h]
	i := r.slot
	s.cellsUse -= r.computed
	s.slots[i].h = -1
	s.slots[i].lastUsed = int64(s.e.now)
	s.slots[i].conv, s.slots[i].cached = r.conv, r.computed
	s.busy--
	if s.queue.len() > 0 {
		s.assign(i, s.queue.popFront())
	}
}

// cancel withdraws h (llama.cpp's cancel task, Ollama's closed request):
// out of the deferred queue, or out of its slot with its cells freed.
func (s *slotScheduler) cancel(h Handle) {
	switch s.e.reqs[h].state {
	case stateWaiting:
		s.queue.remove(h)
	case stateRunning:
		s.release(h)
	}
}
