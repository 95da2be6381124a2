// Package sim is a discrete-event simulator of one LLM server on one GPU:
// it predicts what a sweep would measure (TTFT, TPOT, ITL, throughput, KV
// usage, preemptions, queueing) before anyone owns the hardware, and it is
// calibrated from measurements (Fit).
//
// # Model
//
// Memory: the KV cache holds what the capacity models of package plan say
// the server allocates (vLLM and SGLang: blocks of block_size tokens;
// llama.cpp and Ollama: cells, split into slots). A document that recorded
// the server's own figure (kv_cache.blocks) overrides the prediction.
//
// Schedulers follow each server's code (see sched_batch.go and
// sched_slots.go for the files and functions they follow): vLLM's V1
// scheduler (continuous batching under max_num_seqs and
// max_num_batched_tokens, chunked prefill mixed with decodes, paged KV by
// block, preemption by recompute of the last running request when blocks
// run out, optional prefix caching), SGLang's (prefill batches before
// decode batches, admission that reserves for future decode tokens,
// retraction when memory runs out), llama.cpp's server (--parallel slots,
// each holding a request from prompt to end; prompts in n_batch batches
// split into n_ubatch micro-batches together with the other slots' decode
// tokens; a FIFO of deferred tasks when every slot is busy) and Ollama's
// runner (the same engine with OLLAMA_NUM_PARALLEL slots of num_ctx cells
// and num_batch 512).
//
// Step time is a roofline over the GPU catalog's memory bandwidth and
// dense FP16 tensor throughput with FP32 accumulate:
//
//	bytes = weights read once + KV of every sequence in the step
//	flops = 2 × matrix parameters × tokens (CUDA-graph padded where the
//	        server pads) + 2 × lm_head × sampled sequences + attention
//	        + image encoder
//	time  = max(bytes / (bandwidth × memory efficiency),
//	            flops / (peak × compute efficiency))
//	        + step overhead + sequence cost × sequences in the step
//
// llama.cpp and Ollama run that per micro-batch (each micro-batch reads the
// weights again) and charge the sequence cost per token after the first
// only in micro-batches of at most eight tokens, where ggml's vector
// kernels do per-column work (the first column's hides under the weight
// read). On NVIDIA boards those vector kernels stream weights at no more
// than a fixed number of bytes per SM cycle (vectorBandwidth), and MMQ,
// the quantized types' matrix kernel above eight tokens, runs at no more
// than an RTX SM's INT8 rate per SM cycle (kernelPeak): so A100 and H100
// boards decode and prefill GGUF weights below their bandwidth and
// tensor peaks.
// DEFAULTS.md lists each default efficiency and overhead with the
// published figures it comes from (none from the reference sweep).
//
// # Driving it
//
// The Engine is driven from outside in virtual time: Submit a Request with
// its arrival time, ask NextEvent when something happens next, AdvanceTo a
// time to let it happen; each request's listener receives its events
// (queued, tokens, preemption, finish). Virtual (virtual.go) is the one
// driver: the engine behind package load's Client and Clock, so that
// load's own Sweep runs every load method on it in virtual time, each
// method defined once, with seeded client jitter so closed-loop clients
// do not move in lock-step. `servebench run --backend sim` (package
// simrun, which counts each HTTP request's prompt with the tokenizer)
// and RunLevel (one level of fixed-length requests, for fitting and
// planning) both run load's Sweep on a Virtual, and both return a real
// run's record.Result values and document.Level summaries.
//
// Units: time.Duration and seconds inside; bytes, FLOPs and tokens as
// plain numbers; names outside carry their unit.
package sim
