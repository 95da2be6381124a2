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

// MinInterval is the shortest gap a rate or a trace speed may ask for
// between two requests (1 ns, time.Duration's unit): a smaller one would
// round to zero or, inverted, overflow a time.Duration.
const MinInterval = time.Nanosecond

// MaxSpan bounds how long a schedule (a trace's span at its speed, the
// gap a rate asks for) may be: 30 days, past which a run would wait with
// nothing to show rather than measure.
const MaxSpan = 30 * 24 * time.Hour
