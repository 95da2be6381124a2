package cli

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/backend"
)

// `servebench run`'s request body: sampling parameters (--temperature,
// --top-p, --top-k, --sampling-seed, --stop), --ignore-eos, an extra
// JSON object merged into every body (--extra-body) and extra headers
// (--header), whose values are redacted from every output as the API
// key is.

// bodyFlags are the raw values of the request-body flags.
type bodyFlags struct {
	extraBody, ignoreEOS *string
	temperature, topP    *float64
	topK                 *int
	samplingSeed         *int64
	headers, stop        *listFlag
}

// listFlag is a repeatable flag's values, in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set appends one value.
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// defineBodyFlags adds the request-body flags to run's flags.
func defineBodyFlags(fs *flag.FlagSet) bodyFlags {
	f := bodyFlags{headers: &listFlag{}, stop: &listFlag{}}
	f.extraBody = fs.String("extra-body", "", "JSON object (or @FILE holding one) merged into every request body, e.g. '{\"chat_template_kwargs\": {\"enable_thinking\": false}}'; it may not set servebench's own fields (max_tokens, temperature, …: use their flags)")
	f.ignoreEOS = fs.String("ignore-eos", string(backend.IgnoreEOSAuto), "ask the server to ignore EOS: auto (where the family can: vLLM, llama.cpp, SGLang), on (send ignore_eos to every OpenAI-compatible family) or off (requests stop where the model would)")
	f.temperature = fs.Float64("temperature", 0, "sampling temperature (default 0: greedy)")
	f.topP = fs.Float64("top-p", 0, "nucleus sampling top_p, in (0, 1] (default: not sent, the server's)")
	f.topK = fs.Int("top-k", 0, "top_k sampling (default: not sent, the server's)")
	f.samplingSeed = fs.Int64("sampling-seed", 0, "seed sent with every request (default: --seed)")
	fs.Var(f.headers, "header", "extra HTTP header `'Name: value'` sent with every request (repeatable); its value is never written to any output")
	fs.Var(f.stop, "stop", "stop sequence sent with every request (repeatable)")
	return f
}

// requestBody is the user's part of every request (--temperature,
// --top-p, --top-k, --sampling-seed, --stop, --ignore-eos, --extra-body,
// --header); header values are secrets, as the API key. A sampling value
// is nil when its flag was not given (the server's default).
type requestBody struct {
	Sampling  backend.Sampling
	ExtraBody backend.ExtraBody
	Headers   []backend.Header
}

// Validate checks the sampling values given and that the extra body sets
// none of servebench's own fields.
func (b requestBody) Validate() error {
	sp := b.Sampling
	switch {
	case sp.Temperature != nil && (*sp.Temperature < 0 || *sp.Temperature > 100 || math.IsNaN(*sp.Temperature)):
		return configf("--temperature %g: want 0 or more", *sp.Temperature)
	case sp.TopP != nil && !(*sp.TopP > 0 && *sp.TopP <= 1):
		return configf("--top-p %g: want a value in (0, 1]", *sp.TopP)
	case sp.TopK != nil && *sp.TopK < 1:
		return configf("--top-k %d: must be at least 1", *sp.TopK)
	}
	for _, s := range sp.Stop {
		if s == "" {
			return configf("--stop: empty stop sequence")
		}
	}
	if err := b.ExtraBody.Conflicts(); err != nil {
		return configf("--extra-body %v", err)
	}
	return nil
}

// bodyConfig reads the request-body flags into cfg.requestBody.
func (f *runFlags) bodyConfig(cfg *runConfig, set map[string]bool) error {
	bf, b := f.body, &cfg.requestBody
	mode, err := backend.ParseIgnoreEOS(*bf.ignoreEOS)
	if err != nil {
		return configf("--ignore-eos %v", err)
	}
	b.Sampling.IgnoreEOS = mode
	bf.sampling(&b.Sampling, set)
	for _, h := range *bf.headers {
		hd, err := backend.ParseHeader(h)
		if err != nil {
			name, _, _ := strings.Cut(h, ":")
			return configf("--header %q: %v", strings.TrimSpace(name), err)
		}
		b.Headers = append(b.Headers, hd)
	}
	if *bf.extraBody != "" {
		if b.ExtraBody, err = backend.ParseExtraBody(*bf.extraBody); err != nil {
			return configf("--extra-body: %v", err)
		}
	}
	return b.Validate()
}

// sampling reads the sampling flags that were given into sp.
func (bf bodyFlags) sampling(sp *backend.Sampling, set map[string]bool) {
	if set["temperature"] {
		sp.Temperature = bf.temperature
	}
	if set["top-p"] {
		sp.TopP = bf.topP
	}
	if set["top-k"] {
		sp.TopK = bf.topK
	}
	if set["sampling-seed"] {
		sp.Seed = bf.samplingSeed
	}
	sp.Stop = *bf.stop
}

// samplingNote describes the request body's user parts for the run's
// description: sampling values and the extra body's keys (never its
// values, which may hold anything).
func samplingNote(cfg runConfig) string {
	sp := cfg.Sampling
	var parts []string
	if sp.Temperature != nil {
		parts = append(parts, fmt.Sprintf("temperature=%g", *sp.Temperature))
	}
	if sp.TopP != nil {
		parts = append(parts, fmt.Sprintf("top_p=%g", *sp.TopP))
	}
	if sp.TopK != nil {
		parts = append(parts, fmt.Sprintf("top_k=%d", *sp.TopK))
	}
	if sp.Seed != nil {
		parts = append(parts, fmt.Sprintf("seed=%d", *sp.Seed))
	}
	if len(sp.Stop) > 0 {
		parts = append(parts, fmt.Sprintf("stop=%d sequences", len(sp.Stop)))
	}
	if sp.IgnoreEOS != "" && sp.IgnoreEOS != backend.IgnoreEOSAuto {
		parts = append(parts, "ignore_eos="+string(sp.IgnoreEOS))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.ExtraBody)) {
		parts = append(parts, "extra:"+k)
	}
	return strings.Join(parts, " ")
}

// secrets are the values no output may hold: the API key and the extra
// headers' values.
func (cfg *runConfig) secrets() []string {
	c := cfg.clientConfig()
	return c.Secrets()
}
