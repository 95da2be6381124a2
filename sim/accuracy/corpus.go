package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Regime is how a published benchmark loaded its server.
type Regime string

// Load regimes of the corpus.
const (
	// SingleStream: one request at a time (vllm bench serve
	// --max-concurrency 1, llama-bench, one chat client).
	SingleStream Regime = "single_stream"
	// ClosedLoop: Concurrency clients, each sending its next request when
	// its last one ends (--max-concurrency C at request rate inf).
	ClosedLoop Regime = "closed_loop"
	// OpenRate: requests arrive at Rate per second (Poisson unless
	// Constant), at most Concurrency in flight when that is set.
	OpenRate Regime = "rate"
	// Burst: all NumRequests sent at once (request rate inf, no
	// concurrency cap).
	Burst Regime = "burst"
)

// Regimes lists the regimes in report order.
var Regimes = []Regime{SingleStream, ClosedLoop, OpenRate, Burst}

// Case is one published measurement: the setup as its page gives it and
// the figures it measured. Optional settings are zero when the page does
// not give them.
type Case struct {
	ID string `json:"id"`
	// Source names the page (one page, thread or document is one
	// source); Org the organisation or person that published it.
	Source string `json:"source"`
	Org    string `json:"org"`
	URL    string `json:"url"`
	// Server is the family (vllm, sglang, llamacpp, ollama, or another
	// name the simulator does not model); Tool the benchmark client
	// ("vllm bench serve", "llama-bench", "sglang bench_serving"...).
	Server        string `json:"server"`
	ServerVersion string `json:"server_version,omitempty"`
	Tool          string `json:"tool"`
	// GPU is the board as NVIDIA spells it; GPUCount the boards used,
	// TP the tensor-parallel size.
	GPU      string `json:"gpu"`
	GPUCount int    `json:"gpu_count"`
	TP       int    `json:"tp"`
	// Model is the model as the page names it; Preset the servebench
	// preset it is.
	Model   string `json:"model"`
	Preset  string `json:"preset"`
	Quant   string `json:"quant"`
	KVDtype string `json:"kv_dtype,omitempty"`
	// Server settings the page gives.
	MaxModelLen          int     `json:"max_model_len,omitempty"`
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens,omitempty"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	EnforceEager         bool    `json:"enforce_eager,omitempty"`
	Slots                int     `json:"slots,omitempty"`
	CtxSize              int     `json:"ctx_size,omitempty"`
	FlashAttention       bool    `json:"flash_attention,omitempty"`
	// Load: the regime, its concurrency (closed loop; cap of an open
	// loop), rate (requests/s), the request count and the lengths in
	// tokens (means where the dataset varies them: Dataset says which).
	Regime       Regime  `json:"regime"`
	Concurrency  int     `json:"concurrency,omitempty"`
	Rate         float64 `json:"rate,omitempty"`
	NumRequests  int     `json:"num_requests,omitempty"`
	PromptTokens int     `json:"prompt_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Dataset      string  `json:"dataset,omitempty"`
	Measured     Figures `json:"measured"`
	Note         string  `json:"note,omitempty"`
}

// Figures are the measured figures of a case, as published; nil = not
// published.
type Figures struct {
	OutputTokS *float64 `json:"output_tok_s,omitempty"`
	TotalTokS  *float64 `json:"total_tok_s,omitempty"`
	PromptTokS *float64 `json:"prompt_tok_s,omitempty"`
	// DecodeTokS is one request's generation rate after its first token
	// (Ollama's eval rate, a client's tokens / (duration − TTFT)).
	DecodeTokS   *float64 `json:"decode_tok_s,omitempty"`
	TPOTMeanMs   *float64 `json:"tpot_mean_ms,omitempty"`
	TPOTMedianMs *float64 `json:"tpot_median_ms,omitempty"`
	TTFTMeanMs   *float64 `json:"ttft_mean_ms,omitempty"`
	TTFTMedianMs *float64 `json:"ttft_median_ms,omitempty"`
}

// reservedSources are pages kept for independent verification of the
// model: no case may come from them (host or path fragments, lower case).
var reservedSources = []string{
	"gpustack/gpustack", "docs.gpustack.ai", "performance-lab",
	"gpu-benchmarks-on-llm-inference", "xiongjiedai",
	"mushfiqrahman.dev",
	"vllm-project/vllm/issues/20469",
	"tt-inference-server/issues/143", "tt-inference-server/issues/394",
	"club-3090/issues/697",
	"buildkite.com/vllm/performance-benchmark",
	"achatbot/pull/183",
	"llama.cpp/pull/15131",
}

// ParseCases reads a JSON Lines corpus (blank lines and lines starting
// with # are skipped) and checks every case; an error names the line and
// the field.
func ParseCases(r io.Reader) ([]Case, error) {
	var out []Case
	ids := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: more than one JSON value", n)
		}
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("line %d (%s): %v", n, c.ID, err)
		}
		if ids[c.ID] {
			return nil, fmt.Errorf("line %d: id %q repeats an earlier case", n, c.ID)
		}
		ids[c.ID] = true
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

var errField = errors.New("invalid field")

func (c *Case) validate() error {
	for _, f := range []struct{ name, v string }{{"id", c.ID}, {"source", c.Source}, {"org", c.Org}, {"url", c.URL},
		{"server", c.Server}, {"tool", c.Tool}, {"gpu", c.GPU}, {"model", c.Model}, {"quant", c.Quant}} {
		if strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("%w: %s is empty", errField, f.name)
		}
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: url %q is not an http(s) address", errField, c.URL)
	}
	low := strings.ToLower(c.URL)
	for _, r := range reservedSources {
		if strings.Contains(low, r) {
			return fmt.Errorf("%w: url %q is a reserved source (%s)", errField, c.URL, r)
		}
	}
	if c.GPUCount < 1 || c.TP < 1 || c.TP > c.GPUCount {
		return fmt.Errorf("%w: gpu_count %d and tp %d (want 1 <= tp <= gpu_count)", errField, c.GPUCount, c.TP)
	}
	if err := c.validateLoad(); err != nil {
		return err
	}
	return c.validateFigures()
}

func (c *Case) validateLoad() error {
	switch c.Regime {
	case SingleStream:
	case ClosedLoop:
		if c.Concurrency < 1 {
			return fmt.Errorf("%w: closed_loop needs concurrency >= 1", errField)
		}
	case OpenRate:
		if !(c.Rate > 0 && c.Rate < 1e6) {
			return fmt.Errorf("%w: rate regime needs rate > 0", errField)
		}
	case Burst:
		if c.NumRequests < 1 {
			return fmt.Errorf("%w: burst needs num_requests >= 1", errField)
		}
	default:
		return fmt.Errorf("%w: regime %q (want single_stream, closed_loop, rate or burst)", errField, c.Regime)
	}
	if c.PromptTokens < 0 || c.OutputTokens < 0 || c.PromptTokens+c.OutputTokens == 0 || c.NumRequests < 0 || c.Concurrency < 0 {
		return fmt.Errorf("%w: prompt_tokens %d, output_tokens %d, num_requests %d, concurrency %d", errField,
			c.PromptTokens, c.OutputTokens, c.NumRequests, c.Concurrency)
	}
	return nil
}

func (c *Case) validateFigures() error {
	m := c.Measured
	any := false
	for _, p := range []*float64{m.OutputTokS, m.TotalTokS, m.PromptTokS, m.DecodeTokS, m.TPOTMeanMs, m.TPOTMedianMs, m.TTFTMeanMs, m.TTFTMedianMs} {
		if p == nil {
			continue
		}
		if !(*p > 0 && *p < 1e9) {
			return fmt.Errorf("%w: measured figure %v must be > 0", errField, *p)
		}
		any = true
	}
	if !any {
		return fmt.Errorf("%w: measured has no figure", errField)
	}
	return nil
}
