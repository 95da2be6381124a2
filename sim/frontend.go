package sim

import "time"

// FrontEnd is the serial work of a server's API process, which every
// request and every streamed token passes through one at a time: vLLM's
// API server (HTTP, chat template, tokenization, and for each output
// the incremental detokenizer and the SSE write, in one asyncio loop of
// one process; vllm/v1/engine/async_llm.py) and SGLang's TokenizerManager
// (the same work, its detokenizer in a process of its own). Costs are
// CPU time per request, per prompt token and per streamed chunk (one
// token of one sequence); all zero for llama.cpp and Ollama, whose HTTP
// threads the engine does not model.
//
// Params.RequestLatency already holds a request's own pass through the
// front end when it is idle, so the front end only adds the wait: a
// request that finds it busy reaches the scheduler that much later. The
// chunks of a step's tokens take its time too, so streaming delays the
// requests waiting to be tokenized; the chunks themselves are delivered
// when their step ends (a front end backed up by its chunks would
// deliver them late as well; that is not modelled).
type FrontEnd struct {
	PerRequest     time.Duration `json:"front_end_request_ns,omitempty"`
	PerPromptToken time.Duration `json:"front_end_prompt_token_ns,omitempty"`
	PerChunk       time.Duration `json:"front_end_chunk_ns,omitempty"`
}

// zero says whether f has no cost.
func (f FrontEnd) zero() bool { return f == FrontEnd{} }

// frontQueue is the front end's one server: when it is next free.
type frontQueue struct {
	cost FrontEnd
	free time.Duration
}

// admit takes a request of prompt tokens that reaches the front end at
// at, and returns how long it waited for the work queued before it.
func (q *frontQueue) admit(at time.Duration, prompt int) time.Duration {
	if q.cost.zero() {
		return 0
	}
	start := max(at, q.free)
	q.free = start + q.cost.PerRequest + time.Duration(prompt)*q.cost.PerPromptToken
	return start - at
}

// chunk queues the streaming of one token produced at now.
func (q *frontQueue) chunk(now time.Duration) {
	if q.cost.PerChunk > 0 {
		q.free = max(now, q.free) + q.cost.PerChunk
	}
}
