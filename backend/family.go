package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is a server family. Every package that treats families differently
// (the simulator, the simulated server, the planner, launch, discovery)
// names them with Kind; what servebench knows of each is its Descriptor,
// one value in one file per family (family_<kind>.go).
type Kind string

// Descriptor is what servebench knows of one server family: how its
// server is found, addressed and read. What backend cannot hold (the
// planner's capacity model, the simulator's scheduler, the simulated
// server's wire format) is registered per Kind in one table of the
// package that holds it (docs/extending.md lists them).
type Descriptor struct {
	// Kind is the family's name in flags, profiles and documents.
	Kind Kind
	// Name is the family's name as its makers write it ("vLLM",
	// "llama.cpp"), for messages to people.
	Name string
	// Ports are the loopback ports its server is usually found on, from
	// its documentation, the usual one first: discovery looks at each, and
	// launch and the simulated server listen on the first. None for a
	// family that has no server of its own (a generic OpenAI endpoint).
	Ports []int
	// Health is the path that answers 200 once the server is ready.
	Health string
	// Paths are the generation request paths by API; the first API of
	// APIs is the default.
	APIs  []API
	Paths map[API]string
	// Version is where the server says its version: GET Version.Path,
	// JSON string field Version.Field ("" where it has no such answer).
	Version Endpoint
	// Tokenizer is the server's tokenizer endpoint; nil where it has none
	// (Client.Tokenize then returns ErrUnsupported).
	Tokenizer *Tokenizer
	// Metrics are the Prometheus metric names its /metrics uses; nil where
	// it exports none. Generic families read every family's names.
	Metrics *MetricNames
	// Log is the family whose log lines its server writes, as package
	// serverlog reads them (Ollama's runner writes llama.cpp's); "" where
	// servebench reads none of its logs.
	Log Kind
	// Weights is the weight format it loads.
	Weights WeightFormat
	// AnyModel: the server answers whatever model a request names (it
	// serves the one model it loaded), so a model list cannot say whether
	// it serves the one asked for.
	AnyModel bool
	// Generic: the family stands for any server that speaks its API, so
	// a server recognised as another family is still one of it, and its
	// metrics may carry any family's names.
	Generic bool
	// EOS is how a request asks it to produce exactly MaxTokens tokens.
	EOS EOSControl

	// probe reads the server's identity (Probe).
	probe func(p *prober, d *Descriptor)
	// client builds its adapter over b.
	client func(b base) Client
	// request writes the family's own fields of an OpenAI-compatible
	// request body beside ignore_eos (set when ignore is true).
	request func(b *openAIBody, rq *Request, ignore bool)
	// eosWarning is the report warning of a family without ignore-EOS.
	eosWarning string
}

// Endpoint is a GET path and the JSON string field read from its answer.
type Endpoint struct {
	Path  string
	Field string
}

// Tokenizer is a tokenizer endpoint: POST Path with the body Body makes,
// and read Field from the answer: an integer count, or "tokens", an array
// counted.
type Tokenizer struct {
	Path  string
	Body  func(model, text string) map[string]string
	Field string
}

// WeightFormat is the kind of weight files a family loads.
type WeightFormat string

// Weight formats.
const (
	// HuggingFace checkpoints: safetensors in bf16, fp16, fp8, AWQ, GPTQ.
	HuggingFace WeightFormat = "huggingface"
	// GGUF files: fp16, q8_0, q4_k_m and the other GGML types.
	GGUF WeightFormat = "gguf"
	// AnyWeights: whatever the server behind a generic API loads.
	AnyWeights WeightFormat = "any"
)

// EOSControl is how a family is asked to ignore the end-of-sequence token,
// so that a request produces exactly the tokens it asked for.
type EOSControl int

// EOS controls.
const (
	// EOSNative: the family has its own field (ignore_eos and the like),
	// sent unless IgnoreEOSOff.
	EOSNative EOSControl = iota
	// EOSNone: the family has none; ignore_eos is sent only with
	// IgnoreEOSOn, and outputs may stop short.
	EOSNone
)

// families are the descriptors in the order discovery looks at their
// ports and help texts list them.
var families = []*Descriptor{&vllmFamily, &sglangFamily, &llamaCppFamily, &tgiFamily, &ollamaFamily, &openAIFamily}

// Kinds lists every Kind in the order help texts show them.
var Kinds = func() []Kind {
	ks := make([]Kind, len(families))
	for i, d := range families {
		ks[i] = d.Kind
	}
	return ks
}()

// ParseKind returns the Kind named s, or an error listing the valid names.
func ParseKind(s string) (Kind, error) {
	if _, ok := describe(Kind(s)); ok {
		return Kind(s), nil
	}
	return "", fmt.Errorf("unknown backend %q (want one of %v)", s, Kinds)
}

// describe returns k's descriptor.
func describe(k Kind) (*Descriptor, bool) {
	for _, d := range families {
		if d.Kind == k {
			return d, true
		}
	}
	return nil, false
}

// Describe returns k's descriptor; a Kind servebench does not know gets
// one with only Kind and Name set, so callers need not check.
func (k Kind) Describe() Descriptor {
	if d, ok := describe(k); ok {
		return *d
	}
	return Descriptor{Kind: k, Name: string(k)}
}

// Name is the family's name as its makers write it ("vLLM", "llama.cpp",
// "SGLang", "TGI", "Ollama"), for messages to people; OpenAI is "an
// OpenAI-compatible server".
func (k Kind) Name() string { return k.Describe().Name }

// Port is the port k's server usually listens on, 0 when it has none.
func (k Kind) Port() int {
	if p := k.Describe().Ports; len(p) > 0 {
		return p[0]
	}
	return 0
}

// LocalServers are the usual loopback addresses of each family's server
// (Descriptor.Ports): each family's usual port in the order of Kinds, then
// the others it is also found on; an address shared by two families is
// listed once, naming both. Only loopback: servebench looks at no other
// machine unless --url names it.
func LocalServers() []Candidate {
	var out []Candidate
	at := map[int]int{}
	add := func(port int, k Kind) {
		if i, ok := at[port]; ok {
			out[i].Kinds = append(out[i].Kinds, k)
			return
		}
		at[port] = len(out)
		out = append(out, Candidate{URL: "http://127.0.0.1:" + strconv.Itoa(port), Kinds: []Kind{k}})
	}
	for _, d := range families {
		if len(d.Ports) > 0 {
			add(d.Ports[0], d.Kind)
		}
	}
	for _, d := range families {
		for _, p := range d.Ports[min(1, len(d.Ports)):] {
			add(p, d.Kind)
		}
	}
	return out
}

// MetricsFor returns the Prometheus metric names of family k's /metrics:
// its own, the union of every family's for a generic family, and ok false
// where it exports none (Ollama).
func MetricsFor(k Kind) (names MetricNames, ok bool) {
	d := k.Describe()
	switch {
	case d.Metrics != nil:
		return *d.Metrics, true
	case d.Generic || d.client == nil:
		var u MetricNames
		for _, f := range families {
			if f.Metrics != nil {
				u = u.union(*f.Metrics)
			}
		}
		return u, true
	}
	return MetricNames{}, false
}

// MetricNames lists, per quantity, the Prometheus metric names a server
// family has used for it across versions, newest first. The first name
// present in a scrape wins, so renames between versions are tolerated.
type MetricNames struct {
	// KVUsage is a gauge: fraction (0–1) of the KV cache in use.
	KVUsage []string
	// Preemptions is a counter of requests preempted (evicted from the KV
	// cache and recomputed or swapped) since the server started.
	Preemptions []string
	// Running is a gauge: requests being decoded now.
	Running []string
	// Waiting is a gauge: requests queued, not yet scheduled.
	Waiting []string
	// KVTokensUsed is a gauge: KV-cache tokens in use now.
	KVTokensUsed []string
	// KVTokensMax is a gauge: KV-cache capacity in tokens.
	KVTokensMax []string
	// CacheInfo is an info gauge (value 1) whose labels carry the KV-cache
	// settings: num_gpu_blocks, block_size, cache_dtype,
	// gpu_memory_utilization.
	CacheInfo []string
	// PrefixCacheQueries and PrefixCacheHits are counters of prompt tokens
	// looked up in the prefix cache and found there; their deltas over a
	// level give its hit rate.
	PrefixCacheQueries []string
	PrefixCacheHits    []string
	// PrefixCacheHitRate is a gauge of the hit rate (0–1) where a server
	// exports only that; negative values mean caching is off.
	PrefixCacheHitRate []string
}

// union is u with t's names appended, quantity by quantity.
func (u MetricNames) union(t MetricNames) MetricNames {
	u.KVUsage = append(u.KVUsage, t.KVUsage...)
	u.Preemptions = append(u.Preemptions, t.Preemptions...)
	u.Running = append(u.Running, t.Running...)
	u.Waiting = append(u.Waiting, t.Waiting...)
	u.KVTokensUsed = append(u.KVTokensUsed, t.KVTokensUsed...)
	u.KVTokensMax = append(u.KVTokensMax, t.KVTokensMax...)
	u.CacheInfo = append(u.CacheInfo, t.CacheInfo...)
	u.PrefixCacheQueries = append(u.PrefixCacheQueries, t.PrefixCacheQueries...)
	u.PrefixCacheHits = append(u.PrefixCacheHits, t.PrefixCacheHits...)
	u.PrefixCacheHitRate = append(u.PrefixCacheHitRate, t.PrefixCacheHitRate...)
	return u
}

// Or lists ks for messages and help: "vllm, sglang, llamacpp or ollama".
func Or(ks []Kind) string {
	if len(ks) < 2 {
		return Join(ks)
	}
	return Join(ks[:len(ks)-1]) + " or " + string(ks[len(ks)-1])
}

// Join lists ks for messages and help: "vllm, sglang, llamacpp".
func Join(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
