package report

// Other benchmark tools' result files, read as servebench documents so
// that `report` and `compare` set them beside servebench's own runs:
// vLLM's `vllm bench serve --save-result` JSON (docs/features.md maps its
// metrics onto servebench's, citing vLLM's definitions).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

// IsVLLMResult reports whether data looks like a vLLM `--save-result`
// file: one JSON object with vLLM's own keys (output_throughput,
// completed, and a model_id), which no servebench document has.
func IsVLLMResult(data []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(fixInfinity(data), &probe) != nil {
		return false
	}
	return probe["output_throughput"] != nil && probe["completed"] != nil && probe["model_id"] != nil && probe["runs"] == nil
}

// infinity matches the bare Infinity some writers (SGLang's bench_serving,
// Python's json.dump of float("inf")) put where JSON has no such value.
var infinity = regexp.MustCompile(`:\s*-?Infinity\b`)

// fixInfinity turns a bare Infinity value into the string "inf", as vLLM
// itself writes an unbounded request rate.
func fixInfinity(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	return infinity.ReplaceAll(data, []byte(`: "inf"`))
}

// vllmResult holds the keys of a vLLM result file servebench maps.
type vllmResult struct {
	Date           string          `json:"date"`
	Backend        string          `json:"backend"`
	Label          string          `json:"label"`
	ModelID        string          `json:"model_id"`
	NumPrompts     *int            `json:"num_prompts"`
	RequestRate    json.RawMessage `json:"request_rate"`
	MaxConcurrency *int            `json:"max_concurrency"`
	Duration       *float64        `json:"duration"`
	Completed      *int            `json:"completed"`
	Failed         *int            `json:"failed"`
	TotalInput     *int            `json:"total_input_tokens"`
	TotalOutput    *int            `json:"total_output_tokens"`
	OutputTput     *float64        `json:"output_throughput"`
}

// vllmLatency maps vLLM's latency keys onto a level's fields.
var vllmLatency = []struct {
	key string
	get func(l *document.Level) **float64
}{
	{"mean_ttft_ms", func(l *document.Level) **float64 { return &l.TTFTMeanMs }},
	{"median_ttft_ms", func(l *document.Level) **float64 { return &l.TTFTP50Ms }},
	{"p90_ttft_ms", func(l *document.Level) **float64 { return &l.TTFTP90Ms }},
	{"p95_ttft_ms", func(l *document.Level) **float64 { return &l.TTFTP95Ms }},
	{"p99_ttft_ms", func(l *document.Level) **float64 { return &l.TTFTP99Ms }},
	{"mean_tpot_ms", func(l *document.Level) **float64 { return &l.TPOTMeanMs }},
	{"median_tpot_ms", func(l *document.Level) **float64 { return &l.TPOTP50Ms }},
	{"p90_tpot_ms", func(l *document.Level) **float64 { return &l.TPOTP90Ms }},
	{"p95_tpot_ms", func(l *document.Level) **float64 { return &l.TPOTP95Ms }},
	{"p99_tpot_ms", func(l *document.Level) **float64 { return &l.TPOTP99Ms }},
	{"mean_itl_ms", func(l *document.Level) **float64 { return &l.ITLMeanMs }},
	{"median_itl_ms", func(l *document.Level) **float64 { return &l.ITLP50Ms }},
	{"p90_itl_ms", func(l *document.Level) **float64 { return &l.ITLP90Ms }},
	{"p95_itl_ms", func(l *document.Level) **float64 { return &l.ITLP95Ms }},
	{"p99_itl_ms", func(l *document.Level) **float64 { return &l.ITLP99Ms }},
	{"mean_e2el_ms", func(l *document.Level) **float64 { return &l.E2EMeanMs }},
	{"median_e2el_ms", func(l *document.Level) **float64 { return &l.E2EP50Ms }},
	{"p90_e2el_ms", func(l *document.Level) **float64 { return &l.E2EP90Ms }},
	{"p95_e2el_ms", func(l *document.Level) **float64 { return &l.E2EP95Ms }},
	{"p99_e2el_ms", func(l *document.Level) **float64 { return &l.E2EP99Ms }},
}

// vllmNotes are what every vLLM file's run says about how its figures
// differ from servebench's.
var vllmNotes = []string{
	"vLLM result file: TTFT and E2E start before the connection is opened (its client opens one per request), as servebench's --connection per-request; servebench's default starts them once the request is written",
	"vLLM result file: token counts are the client tokenizer's, not the server's",
	"vLLM result file: no server telemetry (peak VRAM, KV-cache usage, preemptions are null)",
}

// ReadVLLM reads one vLLM result file as a document of one run with one
// level: the run is the file's label (else model_id), the level its
// max_concurrency, else its request_rate ("inf": a burst of num_prompts
// at once). Figures the file lacks (percentiles vLLM was not asked for
// with --metric-percentiles, TTFT/TPOT/ITL without a tokenizer) are
// null and named in one warning.
func ReadVLLM(name string, data []byte) (*document.Document, error) {
	data = fixInfinity(data)
	var r vllmResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &document.DecodeError{File: name, Msg: "vLLM result: " + err.Error()}
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw)
	level, method, err := vllmLevel(&r)
	if err != nil {
		return nil, &document.DecodeError{File: name, Path: "request_rate", Msg: err.Error()}
	}
	var missing []string
	for _, f := range vllmLatency {
		v, ok := jsonNumber(raw[f.key])
		if !ok {
			missing = append(missing, f.key)
			continue
		}
		*f.get(&level) = &v
	}
	label := r.Label
	if label == "" {
		label = r.ModelID
	}
	run := document.Run{Run: record.Run{Label: label, Backend: "vllm-bench", Model: r.ModelID, Scenario: "vllm-bench", StartedAt: r.Date,
		Method: method, Connection: "per-request"}, Levels: []document.Level{level}}
	run.Warnings = append(run.Warnings, vllmNotes...)
	if len(missing) > 0 {
		sort.Strings(missing)
		run.Warnings = append(run.Warnings, fmt.Sprintf("vLLM result file lacks %v (vLLM writes percentiles only for --metric-percentiles and TTFT/TPOT/ITL only with a tokenizer): null here", missing))
	}
	return &document.Document{Tool: "vllm bench serve", Runs: []document.Run{run}}, nil
}

// vllmLevel is the file's level: its load and the request figures.
func vllmLevel(r *vllmResult) (document.Level, string, error) {
	var l document.Level
	method := "pool"
	rate, inf, err := parseRate(r.RequestRate)
	if err != nil {
		return l, "", err
	}
	switch {
	case r.MaxConcurrency != nil && *r.MaxConcurrency > 0:
		l.Concurrency = *r.MaxConcurrency
	case inf && r.NumPrompts != nil && *r.NumPrompts > 0:
		l.Concurrency = *r.NumPrompts // a burst: every prompt at once
		method = "burst"
	case !inf && rate > 0:
		// Levels are keyed by concurrency: a rate level without a cap
		// is keyed by its rate in thousandths of requests/s.
		l.Concurrency = max(int(math.Round(rate*1000)), 1)
		l.Warnings = append(l.Warnings, fmt.Sprintf("vLLM result file: no max_concurrency; level keyed by request_rate %g req/s (c = %d, the rate in mreq/s)", rate, l.Concurrency))
	default:
		return l, "", fmt.Errorf("neither max_concurrency nor a request_rate with num_prompts: the file's load is unknown")
	}
	if !inf && rate > 0 {
		l.RequestedRate, method = &rate, "rate"
	}
	if r.Completed != nil {
		l.Requests = *r.Completed
	}
	if r.Failed != nil {
		l.Requests += *r.Failed
		l.Errors = *r.Failed
	}
	l.ThroughputTokS, l.WallSeconds, l.OutputTokens = r.OutputTput, r.Duration, r.TotalOutput
	if r.TotalInput != nil && r.Completed != nil && *r.Completed > 0 {
		m := float64(*r.TotalInput) / float64(*r.Completed)
		l.MeanPromptTokens = &m
	}
	return l, method, nil
}

// parseRate reads request_rate: a number, or "inf" (vLLM's unbounded
// rate).
func parseRate(raw json.RawMessage) (rate float64, inf bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "inf" {
			return 0, true, nil
		}
		if rate, err = strconv.ParseFloat(s, 64); err != nil {
			return 0, false, fmt.Errorf("want a number or \"inf\", got %q", s)
		}
	} else if err := json.Unmarshal(raw, &rate); err != nil {
		return 0, false, fmt.Errorf("want a number or \"inf\"")
	}
	if math.IsInf(rate, 1) {
		return 0, true, nil
	}
	if !(rate >= 0) {
		return 0, false, fmt.Errorf("request_rate %g: want a positive rate", rate)
	}
	return rate, false, nil
}

// number reads a JSON number; null, absent or other values are not one.
func jsonNumber(raw json.RawMessage) (float64, bool) {
	var v *float64
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil || math.IsNaN(*v) {
		return 0, false
	}
	return *v, true
}
