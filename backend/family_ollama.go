package backend

// Ollama is Ollama's native API.
const Ollama Kind = "ollama"

// ollamaFamily: port 11434 (OLLAMA_HOST); POST /api/chat or /api/generate,
// streamed as NDJSON; GET /api/version, POST /api/show and GET /api/ps for
// its identity; no tokenizer, no metrics, no ignore_eos; its runner writes
// llama.cpp's log lines.
var ollamaFamily = Descriptor{
	Kind: Ollama, Name: "Ollama",
	Ports:   []int{11434},
	Health:  "/api/version",
	APIs:    []API{Chat, Generate},
	Paths:   map[API]string{Chat: "/api/chat", Generate: "/api/generate"},
	Version: Endpoint{Path: "/api/version", Field: "version"},
	Log:     LlamaCpp,
	Weights: GGUF,
	EOS:     EOSNone,
	probe: func(p *prober, d *Descriptor) {
		p.version(d.Name, d.Version.Path, d.Version.Field)
		p.ollamaShow()
		p.ollamaPS()
	},
	client:     func(b base) Client { return &ollamaClient{base: b} },
	eosWarning: "ollama has no ignore_eos: requests may stop at EOS before num_predict; output tokens are verified against eval_count",
}
