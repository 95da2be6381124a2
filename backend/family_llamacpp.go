package backend

// LlamaCpp is llama.cpp's llama-server.
const LlamaCpp Kind = "llamacpp"

// llamaCppFamily: port 8080 (llama-server --port); GET /props for the
// build; POST /tokenize {"content"} → {"tokens": [...]}; n_predict,
// cache_prompt and ignore_eos; serves its one model under any name.
var llamaCppFamily = Descriptor{
	Kind: LlamaCpp, Name: "llama.cpp",
	Ports:  []int{8080},
	Health: "/health",
	APIs:   openAIAPIs, Paths: openAIPaths,
	Version: Endpoint{Path: "/props", Field: "build_info"},
	Tokenizer: &Tokenizer{Path: "/tokenize", Field: "tokens",
		Body: func(_, text string) map[string]string { return map[string]string{"content": text} }},
	Metrics:  &llamaCppMetrics,
	Log:      LlamaCpp,
	Weights:  GGUF,
	AnyModel: true,
	EOS:      EOSNative,
	probe:    func(p *prober, _ *Descriptor) { p.llamaCpp() },
	client:   newOpenAIClient,
	// Unique prompts run with llama.cpp's prompt cache off, so a slot's
	// leftovers cannot flatter a level; a workload that shares prefixes
	// turns it on to measure the cache.
	request: func(b *openAIBody, rq *Request, _ bool) {
		n, cache := rq.MaxTokens, rq.ReusePrefix
		b.NPredict, b.CachePrompt = &n, &cache
	},
}

// llama.cpp names (llama-server --metrics, tools/server/server.cpp): the KV
// metrics were removed in 2025 builds, so they are optional.
var llamaCppMetrics = MetricNames{
	KVUsage:      []string{"llamacpp:kv_cache_usage_ratio"},
	Running:      []string{"llamacpp:requests_processing"},
	Waiting:      []string{"llamacpp:requests_deferred"},
	KVTokensUsed: []string{"llamacpp:kv_cache_tokens"},
}
