package backend

// TGI is Hugging Face text-generation-inference.
const TGI Kind = "tgi"

// tgiFamily: port 8080, where its container is usually mapped, then 3000
// (text-generation-launcher --port); GET /info for version and model; no
// ignore_eos; serves its one model under any name.
var tgiFamily = Descriptor{
	Kind: TGI, Name: "TGI",
	Ports:  []int{8080, 3000},
	Health: "/health",
	APIs:   openAIAPIs, Paths: openAIPaths,
	Version:    Endpoint{Path: "/info", Field: "version"},
	Metrics:    &tgiMetrics,
	Weights:    HuggingFace,
	AnyModel:   true,
	EOS:        EOSNone,
	probe:      func(p *prober, _ *Descriptor) { p.tgiInfo() },
	client:     newOpenAIClient,
	eosWarning: "tgi has no ignore_eos: requests may stop at EOS before max_tokens; output tokens are verified against the request",
}

// TGI names (text-generation-inference docs, reference/metrics):
// tgi_queue_size is the number of requests waiting, tgi_batch_current_size
// the size of the batch being decoded.
var tgiMetrics = MetricNames{
	Running: []string{"tgi_batch_current_size"},
	Waiting: []string{"tgi_queue_size"},
}
