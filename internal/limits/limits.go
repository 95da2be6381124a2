// Package limits holds the written bounds on counts and sizes that come
// from outside servebench (flags, trace rows, documents, profiles,
// request bodies), each checked before anything is sized from it. Every
// bound leaves room for real use and keeps the arithmetic done with it
// (sums of two bounded values, products with a request count) far from
// overflowing an int64.
package limits

import "time"

// MaxTokens bounds a request's tokens, prompt or output (--prompt-tokens,
// --max-tokens, a trace row's input_tokens and output_tokens, a
// document's max_tokens): 2^24 = 16,777,216, above the longest context a
// model is served with (10 M tokens), so that a prompt of that many
// tokens (about 6 bytes of text each) stays near 100 MB and a sum of two
// never overflows.
const MaxTokens = 1 << 24

// MaxRequests bounds --requests and --warmup per level: 10^7, two orders
// above a long soak test at a thousand requests per second for an hour,
// at a few KB of memory each while a level runs.
const MaxRequests = 10_000_000

// MaxRepeats bounds --repeats: 1,000 passes of every level, where 3 to 10
// give an interval.
const MaxRepeats = 1000

// MaxTurns bounds --turns: 1,000 turns of one conversation, each of
// which resends the whole conversation so far (every answer kept for it
// is itself bounded, backend.MaxAnswerBytes).
const MaxTurns = 1000

// MaxRate bounds --rate: 10^6 requests/s, far above what one client
// machine sends.
const MaxRate = 1e6

// MaxSpan bounds how long a schedule known before the first request may
// take: a trace's replay at its speed, one think time, a rate's level.
// 30 days: past it a run would wait with nothing to show rather than
// measure, and every time.Duration the pacer computes stays far from
// overflowing.
const MaxSpan = 30 * 24 * time.Hour

// MaxSequences bounds the sequences a server is launched to run at once
// (a launch profile's max_num_seqs and parallel, the items per prompt of
// limit_mm_per_prompt): 65,536, far above vLLM's default of 256 or 1,024
// and llama.cpp's few slots.
const MaxSequences = 1 << 16

// MaxFitLevels bounds the levels sim fit fits one run on: every objective
// evaluation simulates each of them (about 0.4 s of fitting per level), so
// a run of more levels is fitted on this many, spread across its loads,
// and its other levels are predicted from that fit afterwards (as
// --lowest does): a run's fit stays near half a minute.
const MaxFitLevels = 64

// MaxTensorParallel bounds a launch profile's tensor_parallel_size: 64
// GPUs, above the largest single machines (8 or 16 GPUs) a server is
// launched on.
const MaxTensorParallel = 64
