package backend

// OpenAI is any OpenAI-compatible server.
const OpenAI Kind = "openai"

// openAIFamily is any server that speaks the OpenAI API: /v1 routes only,
// no port of its own, ignore_eos sent only when asked for; it may be any
// family underneath, so its metrics are read under every family's names.
var openAIFamily = Descriptor{
	Kind: OpenAI, Name: "an OpenAI-compatible server",
	Health: "/health",
	APIs:   openAIAPIs, Paths: openAIPaths,
	Weights:    AnyWeights,
	Generic:    true,
	EOS:        EOSNone,
	probe:      func(p *prober, _ *Descriptor) { p.models() },
	client:     newOpenAIClient,
	eosWarning: "openai (generic) endpoint: ignore_eos is not sent (unknown fields may be rejected); requests may stop at EOS before max_tokens; output tokens are verified against the request",
}

// openAIAPIs and openAIPaths are the OpenAI-compatible API every family
// but Ollama takes: chat completions (the default) and completions.
var (
	openAIAPIs  = []API{Chat, Completions}
	openAIPaths = map[API]string{Chat: "/v1/chat/completions", Completions: "/v1/completions"}
)
