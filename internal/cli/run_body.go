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

// bodyConfig reads the request-body flags into cfg.
func (f *runFlags) bodyConfig(cfg *runConfig, set map[string]bool) error {
	bf := f.body
	mode, err := backend.ParseIgnoreEOS(*bf.ignoreEOS)
	if err != nil {
		return configf("--ignore-eos %v", err)
	}
	cfg.Sampling.IgnoreEOS = mode
	if err := bf.sampling(&cfg.Sampling, set); err != nil {
		return err
	}
	for _, h := range *bf.headers {
		hd, err := backend.ParseHeader(h)
		if err != nil {
			name, _, _ := strings.Cut(h, ":")
			return configf("--header %q: %v", strings.TrimSpace(name), err)
		}
		cfg.Headers = append(cfg.Headers, hd)
	}
	if *bf.extraBody != "" {
		eb, err := backend.ParseExtraBody(*bf.extraBody)
		if err != nil {
			return configf("--extra-body: %v", err)
		}
		if err := eb.Conflicts(); err != nil {
			return configf("--extra-body %v", err)
		}
		cfg.ExtraBody = eb
	}
	return nil
}

// sampling reads the sampling flags that were given into sp.
func (bf bodyFlags) sampling(sp *backend.Sampling, set map[string]bool) error {
	switch {
	case set["temperature"] && (*bf.temperature < 0 || *bf.temperature > 100 || math.IsNaN(*bf.temperature)):
		return configf("--temperature %g: want 0 or more", *bf.temperature)
	case set["top-p"] && !(*bf.topP > 0 && *bf.topP <= 1):
		return configf("--top-p %g: want a value in (0, 1]", *bf.topP)
	case set["top-k"] && *bf.topK < 1:
		return configf("--top-k %d: must be at least 1", *bf.topK)
	}
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
	for _, s := range *bf.stop {
		if s == "" {
			return configf("--stop: empty stop sequence")
		}
	}
	sp.Stop = *bf.stop
	return nil
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
