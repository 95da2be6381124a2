// Package simserve runs the simulator of package sim in real time behind the
// HTTP surface of a real LLM server, so servebench (or any client) can be
// pointed at a GPU nobody owns yet, and so servebench's own adapters and
// metric parsers are tested live against the formats of servers that
// cannot run on a CI machine.
//
// # What it serves
//
// One Server speaks as one personality (--as): vLLM, SGLang, llama.cpp's
// llama-server, TGI, Ollama, or a generic OpenAI-compatible endpoint. Each
// personality answers its server's own routes with its server's own shapes:
// the streaming endpoints (OpenAI chat and completions SSE with
// stream_options.include_usage and vLLM's continuous_usage_stats, llama.cpp's
// timings, Ollama's NDJSON /api/chat and /api/generate with eval_count and
// its durations, TGI's /generate_stream), the tokenizer (/tokenize in vLLM's
// and llama.cpp's shapes), the identity endpoints (/v1/models, /version,
// /props, /slots, /get_server_info, /info, /api/version, /api/tags,
// /api/show, /api/ps, /health) and /metrics with the server's own metric
// families, driven by the engine's state (KV-cache usage, running and
// waiting requests, preemptions) and by counters of what was served. The
// shapes are held equal to the fixtures of real outputs in backend/testdata
// and telemetry/testdata by this package's tests (shape_test.go).
//
// Every identity endpoint says the server is simulated: versions carry a
// "+servebench.sim" build suffix (llama.cpp: "-servebench.sim"), so a
// result measured against it can never pass for a real server's.
//
// # Real time
//
// One goroutine owns the sim.Engine (which is not safe for concurrent use).
// Virtual time is the wall time since the server started, on the monotonic
// clock: the goroutine sleeps until the engine's next event or until a
// command arrives (a new request, a cancellation, a snapshot for /metrics),
// then advances the engine to the present, which delivers every event due.
// Each request's events go to a mailbox its handler drains; a handler whose
// client went away cancels its request (sim.Engine.Cancel), freeing its KV
// cache or slot as a real server's abort does.
//
// # What is not real
//
// The model is not run: output text is words drawn from a seeded generator
// and the tokenizer is a simple, deterministic rule (tokenizer.go), not the
// model's. The simulated model never emits EOS, so every request generates
// exactly the tokens it asked for (max_tokens and its per-server spellings),
// or the server's default cap. Faults (429, 5xx, cut streams, stalls, a slow
// first token) are injected on request with Options.Faults, drawn from a
// generator seeded with Options.Seed.
package simserve
