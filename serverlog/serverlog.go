// Package serverlog reads the KV-cache capacity an LLM server reports in
// its start-up log: vLLM's "GPU KV cache size: N tokens" (V1), "# GPU
// blocks: N" (V0), "Maximum concurrency for L tokens per request: Xx" and
// its memory-profiling lines, including the CUDA-graph memory estimate
// and measurement of v0.18 and later (subtracted from the KV budget by
// default since v0.21), its version and attention backend; llama.cpp's
// (and Ollama's, which runs llama.cpp) "KV self size = X MiB" and
// "llama_kv_cache…: size = X MiB (N cells, …)". It also reads what a log
// says about the server itself (Server): the version its start-up lines
// name and the model file Ollama's runner loaded. It is servebench's one
// reader of server logs: `servebench calibrate`, the launch code and run
// --profile all use it.
package serverlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// Capacity is everything the log said about KV-cache capacity. Nil fields
// were not in the log. When a log holds several start-ups, the last one
// wins as a whole: a line that begins a new server start-up (vLLM's
// "vLLM API server version …" and "Initializing a V1 LLM engine (v…)",
// llama.cpp's "llama_model_loader: loaded meta data …") clears everything
// found so far, Lines included, once a capacity figure has been found, so
// no field of an earlier start-up is mixed into a later one.
type Capacity struct {
	// Format is the family whose log lines held the capacity (vLLM, or
	// llama.cpp, whose lines Ollama's runner writes too: the Log of their
	// backend.Descriptor); "" when none did.
	Format backend.Kind
	// Tokens is vLLM's "GPU KV cache size" (V1), or blocks × block size
	// when the caller knows the block size (V0 logs only give blocks).
	Tokens *int
	// Blocks is vLLM's "# GPU blocks" / "# cuda blocks" (V0) or the
	// num_gpu_blocks of "cache_config_info with initialization after
	// num_gpu_blocks is: N" (V1).
	Blocks *int
	// MaxConcurrency is vLLM's "Maximum concurrency for L tokens per
	// request: X×" and ConcurrencyTokens its L.
	MaxConcurrency    *float64
	ConcurrencyTokens *int
	// AvailableKVGiB is vLLM's "Available KV cache memory" (V1) or "the
	// rest of the memory reserved for KV Cache" (V0).
	AvailableKVGiB *float64
	// WeightsGiB is vLLM's "Model loading took X GiB"; ActivationGiB,
	// NonTorchGiB, TotalGPUGiB and Utilization come from its profiling
	// summaries where printed: V0's "total_gpu_memory (…) x
	// gpu_memory_utilization (…)" and "… takes XGiB" lines, V1's DEBUG
	// "Memory profiling takes … torch peak memory increase: XGiB;
	// non-torch forward increase memory: XGiB; weights memory: XGiB." and
	// the post-capture "Free memory on device (F/T GiB) on startup. Desired
	// GPU memory utilization is (U, X GiB). Actual usage is …". Those two
	// V1 lines set WeightsGiB only when "Model loading took" did not (it
	// has more digits). Utilization is also read, when not yet known, from
	// the current --gpu-memory-utilization of the CUDA-graph profiling
	// lines.
	WeightsGiB, ActivationGiB, NonTorchGiB, TotalGPUGiB, Utilization *float64
	// KVMiB is llama.cpp's KV buffer in MiB (summed over the full and
	// sliding-window caches of an iSWA model); Cells its cell count;
	// KMiB and VMiB the halves; TypeK/TypeV the element types.
	KVMiB, KMiB, VMiB *float64
	Cells             *int
	TypeK, TypeV      string
	// NCtx and NSeq are llama.cpp's n_ctx and n_seq_max (slots).
	NCtx, NSeq *int

	// VLLMVersion is the vLLM version without its leading "v", from
	// "Initializing a V1 LLM engine (v0.24.0) with config: …" (older:
	// "Initializing an LLM engine (v0.8.1) with config: …") or "vLLM API
	// server version 0.24.0".
	VLLMVersion string
	// AttentionBackend is the attention backend vLLM chose, by its enum
	// name: from "Using FLASHINFER attention backend out of potential
	// backends: […]", or from the older V1 lines "Using Flash Attention
	// backend on V1 engine." (FLASH_ATTN) and "Using FlashInfer backend on
	// V1 engine." (FLASHINFER).
	AttentionBackend string
	// DecodeBackend is the decode_backend of vLLM's "FlashInfer resolved
	// query dtypes: prefill=…, decode=…, decode_backend=xqa, …" ("" when
	// the line has no decode_backend).
	DecodeBackend string
	// GraphsPiecewise and GraphsFull are the CUDA-graph counts of vLLM's
	// "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35
	// (largest=256)"; either may be missing from the line.
	GraphsPiecewise, GraphsFull *int
	// CUDAGraphEstimateGiB is vLLM's "Estimated CUDA graph memory: X GiB
	// total" (v0.18 and later), or the "(estimated)" figure of "CUDA graph
	// pool memory: …" when that line is all there is.
	CUDAGraphEstimateGiB *float64
	// GraphSamples are vLLM's DEBUG lines "Estimated PIECEWISE CUDA graph
	// memory: A MiB first-capture + (N-1) × B MiB per-graph", one per mode
	// (the last line for a mode wins, so tensor-parallel ranks do not
	// repeat it), in the order the modes first appear.
	GraphSamples []GraphSample
	// CUDAGraphEstimateApplied says whether vLLM subtracted the CUDA-graph
	// estimate from the KV budget: true from "CUDA graph memory profiling
	// is enabled …" (the default since v0.21.0), false from "CUDA graph
	// memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_
	// CUDAGRAPHS=0). …" and from the opt-in era's "In v0.19, CUDA graph
	// memory profiling will be enabled by default …".
	CUDAGraphEstimateApplied *bool
	// UtilizationWithoutGraphs is the "equivalent to
	// --gpu-memory-utilization=X without CUDA graph memory profiling" of
	// the "CUDA graph memory profiling is enabled" line.
	UtilizationWithoutGraphs *float64
	// CUDAGraphActualGiB is the CUDA-graph memory vLLM measured at capture:
	// "CUDA graph pool memory: X GiB (actual), …", "Graph capturing
	// finished in N secs, took X GiB", or the "X GiB for CUDAGraph memory"
	// of the "Free memory on device (…) on startup. …" summary. It may be
	// negative: vLLM measures it as a difference of free memory.
	CUDAGraphActualGiB *float64
	// Lines are the matched lines, verbatim, for the record.
	Lines []string
}

// GraphSample is one vLLM DEBUG line "Estimated <Mode> CUDA graph memory:
// <FirstCaptureMiB> MiB first-capture + (<Graphs>-1) × <PerGraphMiB> MiB
// per-graph" (vllm/v1/worker/gpu_model_runner.py, profile_cudagraph_memory).
type GraphSample struct {
	Mode            string
	FirstCaptureMiB float64
	Graphs          int
	PerGraphMiB     float64
}

// Found reports whether any capacity figure was found.
func (c *Capacity) Found() bool {
	return c.Tokens != nil || c.Blocks != nil || c.KVMiB != nil
}

// TokensFor returns the KV capacity in tokens: Tokens when logged, else
// Blocks × blockSize for vLLM, else Cells for llama.cpp.
func (c *Capacity) TokensFor(blockSize int) (int, bool) {
	switch {
	case c.Tokens != nil:
		return *c.Tokens, true
	case c.Blocks != nil && blockSize > 0:
		return *c.Blocks * blockSize, true
	case c.Cells != nil:
		return *c.Cells, true
	}
	return 0, false
}

// Document converts c to the run document's Capacity, naming source.
func (c *Capacity) Document(source string) *record.Capacity {
	if !c.Found() {
		return nil
	}
	return &record.Capacity{
		Tokens: c.Tokens, Blocks: c.Blocks, KVMiB: c.KVMiB, Cells: c.Cells,
		MaxConcurrency: c.MaxConcurrency, Source: source,
	}
}

var (
	num = `([0-9][0-9,]*)`
	flt = `([0-9]+(?:\.[0-9]+)?)`

	reKVTokens    = regexp.MustCompile(`GPU KV cache size: ` + num + ` tokens`)
	reBlocksV0    = regexp.MustCompile(`# (?i:gpu|cuda) blocks: ` + num)
	reBlocksV1    = regexp.MustCompile(`num_gpu_blocks is\s*:\s*` + num)
	reConcurrency = regexp.MustCompile(`Maximum concurrency for ` + num + ` tokens per request: ` + flt + `x`)
	reAvailV1     = regexp.MustCompile(`Available KV cache memory: ` + flt + ` GiB`)
	reAvailV0     = regexp.MustCompile(`reserved for KV Cache is (-?` + flt[1:])
	reWeights     = regexp.MustCompile(`(?:Model loading took|Loading model weights took) ` + flt + ` (?:GiB|GB)`)
	reProfile     = regexp.MustCompile(`total_gpu_memory \(` + flt + `GiB\) x gpu_memory_utilization \(` + flt + `\)`)
	reNonTorch    = regexp.MustCompile(`non_torch_memory takes ` + flt + `GiB`)
	reActivation  = regexp.MustCompile(`activation peak memory takes ` + flt + `GiB`)

	reKVSelf   = regexp.MustCompile(`KV self size\s*=\s*` + flt + ` MiB(?:, K \((\w+)\):\s*` + flt + ` MiB, V \((\w+)\):\s*` + flt + ` MiB)?`)
	reKVUnif   = regexp.MustCompile(`llama_kv_cache\w*: size\s*=\s*` + flt + ` MiB \(\s*` + num + ` cells(?:[^)]*)\)(?:, K \((\w+)\):\s*` + flt + ` MiB, V \((\w+)\):\s*` + flt + ` MiB)?`)
	reKVInit   = regexp.MustCompile(`kv_size = ` + num + `.*type_k = '(\w+)', type_v = '(\w+)'`)
	reNCtx     = regexp.MustCompile(`(?:llama_init_from_model|llama_new_context_with_model|llama_context):\s+n_ctx\s+=\s+` + num)
	reNSeq     = regexp.MustCompile(`(?:llama_init_from_model|llama_new_context_with_model|llama_context):\s+n_seq_max\s+=\s+` + num)
	reISWA     = regexp.MustCompile(`llama_kv_cache\w*iswa: creating\s+(non-SWA|SWA) KV cache`)
	maxLineLen = 1 << 20

	// sflt is flt with an optional minus sign, for figures vLLM computes
	// as differences of free memory.
	sflt = `(-?[0-9]+(?:\.[0-9]+)?)`

	reEngineVersion = regexp.MustCompile(`Initializing an? (?:V[0-9]+ )?LLM engine \(v([^)\s]+)\)`)
	reAPIVersion    = regexp.MustCompile(`vLLM API server version v?([0-9][^\s,;]*)`)
	reBackendEnum   = regexp.MustCompile(`Using ([A-Z][A-Z0-9_]*) attention backend out of potential backends`)
	reBackendV1     = regexp.MustCompile(`Using (Flash Attention|FlashInfer) backend on V1 engine`)
	reFIDtypes      = regexp.MustCompile(`FlashInfer resolved query dtypes:(.*)`)
	reDecodeBackend = regexp.MustCompile(`\bdecode_backend=([^,\s]+)`)
	reGraphCounts   = regexp.MustCompile(`Profiling CUDA graph memory:(.*)`)
	rePiecewise     = regexp.MustCompile(`\bPIECEWISE=([0-9]+)`)
	reFull          = regexp.MustCompile(`\bFULL=([0-9]+)`)
	reGraphEstimate = regexp.MustCompile(`Estimated CUDA graph memory: ` + sflt + ` GiB total`)
	reGraphSample   = regexp.MustCompile(`Estimated (\w+) CUDA graph memory: ` + sflt + ` MiB first-capture \+ \(([0-9]+)-1\) (?:×|x) ` + flt + ` MiB per-graph`)
	reGraphEnabled  = regexp.MustCompile(`CUDA graph memory profiling is enabled\b.*?--gpu-memory-utilization=` + flt + ` is equivalent to --gpu-memory-utilization=` + sflt)
	reGraphDisabled = regexp.MustCompile(`CUDA graph memory profiling (?:is disabled \(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0\)|will be enabled by default)(?:.*?--gpu-memory-utilization from ` + flt + ` to)?`)
	reGraphPool     = regexp.MustCompile(`CUDA graph pool memory: ` + sflt + ` GiB \(actual\)(?:, ` + sflt + ` GiB \(estimated\))?`)
	reGraphCapture  = regexp.MustCompile(`Graph capturing finished in [0-9.]+ secs?, took ` + sflt + ` GiB`)
	reFreeOnDevice  = regexp.MustCompile(`Free memory on device \(` + flt + `/` + flt + ` GiB\) on startup\. Desired GPU memory utilization is \(` + flt + `, ` + flt + ` GiB\)\. Actual usage is (.*)`)
	reUsageWeight   = regexp.MustCompile(sflt + ` GiB for weight\b`)
	reUsageAct      = regexp.MustCompile(sflt + ` GiB for peak activation\b`)
	reUsageNonTorch = regexp.MustCompile(sflt + ` GiB for non-torch memory\b`)
	reUsageGraph    = regexp.MustCompile(sflt + ` GiB for CUDAGraph memory\b`)
	reProfileV1     = regexp.MustCompile(`torch peak memory increase: ` + sflt + `\s*GiB; non-torch forward increase memory: ` + sflt + `\s*GiB(?:; weights memory: ` + flt + `\s*GiB)?`)

	// reStartup marks the first lines of a server start-up.
	reStartup = regexp.MustCompile(`Initializing an? (?:V[0-9]+ )?LLM engine|vLLM API server version|llama_model_loader: loaded meta data`)
)

// attentionBackendV1 maps the names of vLLM's older "Using … backend on V1
// engine." lines (vllm/platforms/cuda.py before the "out of potential
// backends" message) to the enum names the newer line prints.
var attentionBackendV1 = map[string]string{
	"Flash Attention": "FLASH_ATTN",
	"FlashInfer":      "FLASHINFER",
}

// parse scans a server log for capacity lines. It reads lines of up to 1
// MiB (longer ones are skipped), never fails on content, and returns an
// error only when reading fails.
func parse(r io.Reader) (Capacity, error) {
	var cs capacityScan
	err := scanLines(r, cs.line)
	return cs.c, err
}

// capacityScan is parse's state between lines: the capacity so far, the
// sliding-window cache line waiting for its figure, the line before.
type capacityScan struct {
	c          Capacity
	iswa, prev string
}

// line reads one log line into the capacity.
func (cs *capacityScan) line(line string) {
	if strings.HasSuffix(strings.TrimSpace(cs.prev), "num_gpu_blocks is") {
		// a log file hard-wrapped at a fixed width split this line
		line = strings.TrimSpace(cs.prev) + line
	}
	cs.prev = line
	if cs.c.holdsCapacity() && isStartup(line) {
		// a new start-up: forget the earlier one entirely
		cs.c, cs.iswa = Capacity{}, ""
	}
	if m := reISWA.FindStringSubmatch(line); m != nil {
		cs.iswa = m[1]
	}
	if cs.c.parseVLLM(line) || cs.c.parseLlama(line, &cs.iswa) {
		cs.c.Lines = append(cs.c.Lines, strings.TrimSpace(line))
	}
}

// Log is what one server log says: the KV-cache capacity it reported
// (parse) and what it says about the server (parseServer).
type Log struct {
	Capacity Capacity
	Server   Server
}

// ReadFile reads the log at path once for both its capacity and its
// server; like ParseFile, its error is a read error.
func ReadFile(path string) (Log, error) { return parseFile(path, parseLog) }

// parseLog is parse and parseServer in one pass over r.
func parseLog(r io.Reader) (Log, error) {
	var cs capacityScan
	var lg Log
	err := scanLines(r, func(line string) {
		cs.line(line)
		lg.Server.parseLine(line)
	})
	lg.Capacity = cs.c
	return lg, err
}

// scanLines calls fn with each line of r, skipping lines longer than
// maxLineLen; its error is a read error of r.
func scanLines(r io.Reader, fn func(line string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineLen)
	for {
		if !sc.Scan() {
			if err := sc.Err(); err == bufio.ErrTooLong {
				// skip the rest of an overlong line and go on
				sc = bufio.NewScanner(r)
				sc.Buffer(make([]byte, 64<<10), maxLineLen)
				continue
			} else if err != nil {
				return err
			}
			return nil
		}
		fn(sc.Text())
	}
}

// ParseFile reads the capacity lines of the log at path (see parse).
func ParseFile(path string) (Capacity, error) { return parseFile(path, parse) }

// parseFile runs parser p over the file at path.
func parseFile[T any](path string, p func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return p(f)
}

// isStartup reports whether line is one of those that begin a server
// start-up (the substring tests spare most lines the regexp).
func isStartup(line string) bool {
	return (strings.Contains(line, "LLM engine") || strings.Contains(line, "API server version") ||
		strings.Contains(line, "loaded meta data")) && reStartup.MatchString(line)
}

// holdsCapacity reports whether c already holds a capacity figure: what
// marks a start-up as begun-and-sized, so that the next start-up line
// resets c. AvailableKVGiB and Cells count too: a start-up that died
// after sizing the KV budget must not lend it to the next one.
func (c *Capacity) holdsCapacity() bool {
	return c.Found() || c.Cells != nil || c.AvailableKVGiB != nil
}

func (c *Capacity) parseVLLM(line string) bool {
	hit := c.parseVLLMGraphs(line)
	if m := reKVTokens.FindStringSubmatch(line); m != nil {
		c.Tokens, hit = intp(m[1]), true
	}
	if m := reBlocksV0.FindStringSubmatch(line); m != nil {
		c.Blocks, hit = intp(m[1]), true
	}
	if m := reBlocksV1.FindStringSubmatch(line); m != nil {
		c.Blocks, hit = intp(m[1]), true
	}
	if m := reConcurrency.FindStringSubmatch(line); m != nil {
		c.ConcurrencyTokens, c.MaxConcurrency, hit = intp(m[1]), fltp(m[2]), true
	}
	if m := reAvailV1.FindStringSubmatch(line); m != nil {
		c.AvailableKVGiB, hit = fltp(m[1]), true
	}
	if m := reAvailV0.FindStringSubmatch(line); m != nil {
		c.AvailableKVGiB, hit = fltp(m[1]), true
	}
	if m := reWeights.FindStringSubmatch(line); m != nil {
		c.WeightsGiB, hit = fltp(m[1]), true
	}
	if m := reProfile.FindStringSubmatch(line); m != nil {
		c.TotalGPUGiB, c.Utilization, hit = fltp(m[1]), fltp(m[2]), true
	}
	if m := reNonTorch.FindStringSubmatch(line); m != nil {
		c.NonTorchGiB, hit = fltp(m[1]), true
	}
	if m := reActivation.FindStringSubmatch(line); m != nil {
		c.ActivationGiB, hit = fltp(m[1]), true
	}
	if m := reProfileV1.FindStringSubmatch(line); m != nil {
		c.ActivationGiB, c.NonTorchGiB, hit = fltp(m[1]), fltp(m[2]), true
		if c.WeightsGiB == nil && m[3] != "" {
			c.WeightsGiB = fltp(m[3])
		}
	}
	if v, ok := vllmVersion(line); ok {
		c.VLLMVersion, hit = v, true
	}
	if m := reBackendEnum.FindStringSubmatch(line); m != nil {
		c.AttentionBackend, hit = m[1], true
	}
	if m := reBackendV1.FindStringSubmatch(line); m != nil {
		c.AttentionBackend, hit = attentionBackendV1[m[1]], true
	}
	if m := reFIDtypes.FindStringSubmatch(line); m != nil {
		c.DecodeBackend, hit = "", true
		if d := reDecodeBackend.FindStringSubmatch(m[1]); d != nil {
			c.DecodeBackend = d[1]
		}
	}
	if hit {
		c.Format = backend.VLLM
	}
	return hit
}

// parseVLLMGraphs reads vLLM's CUDA-graph memory lines (v0.18 and later)
// and the post-capture "Free memory on device" summary, one rule of
// vllmGraphRules per line shape.
func (c *Capacity) parseVLLMGraphs(line string) bool {
	if !strings.Contains(line, "CUDA graph") && !strings.Contains(line, "Graph capturing") &&
		!strings.Contains(line, "Free memory on device") {
		return false
	}
	hit := false
	for _, r := range vllmGraphRules {
		if m := r.re.FindStringSubmatch(line); m != nil && r.apply(c, m) {
			hit = true
		}
	}
	return hit
}

// lineRule is one line shape of a server log: its pattern, and what a
// match sets (apply reports whether the match counted).
type lineRule struct {
	re    *regexp.Regexp
	apply func(c *Capacity, m []string) bool
}

// vllmGraphRules are the CUDA-graph and post-capture memory lines of
// vLLM's start-up log, in the order they are tried on a line.
var vllmGraphRules = []lineRule{
	{reGraphCounts, func(c *Capacity, m []string) bool {
		c.GraphsPiecewise, c.GraphsFull = nil, nil
		if p := rePiecewise.FindStringSubmatch(m[1]); p != nil {
			c.GraphsPiecewise = intp(p[1])
		}
		if f := reFull.FindStringSubmatch(m[1]); f != nil {
			c.GraphsFull = intp(f[1])
		}
		return true
	}},
	{reGraphEstimate, func(c *Capacity, m []string) bool {
		c.CUDAGraphEstimateGiB = fltp(m[1])
		return true
	}},
	{reGraphSample, func(c *Capacity, m []string) bool {
		first, per, n := fltp(m[2]), fltp(m[4]), intp(m[3])
		if first == nil || per == nil || n == nil {
			return false
		}
		c.addGraphSample(GraphSample{Mode: m[1], FirstCaptureMiB: *first, Graphs: *n, PerGraphMiB: *per})
		return true
	}},
	{reGraphEnabled, func(c *Capacity, m []string) bool {
		c.CUDAGraphEstimateApplied, c.UtilizationWithoutGraphs = ptr.To(true), fltp(m[2])
		if c.Utilization == nil {
			c.Utilization = fltp(m[1])
		}
		return true
	}},
	{reGraphDisabled, func(c *Capacity, m []string) bool {
		c.CUDAGraphEstimateApplied, c.UtilizationWithoutGraphs = ptr.To(false), nil
		if c.Utilization == nil && m[1] != "" {
			c.Utilization = fltp(m[1])
		}
		return true
	}},
	{reGraphPool, func(c *Capacity, m []string) bool {
		c.CUDAGraphActualGiB = fltp(m[1])
		if c.CUDAGraphEstimateGiB == nil && m[2] != "" {
			c.CUDAGraphEstimateGiB = fltp(m[2])
		}
		return true
	}},
	{reGraphCapture, func(c *Capacity, m []string) bool {
		c.CUDAGraphActualGiB = fltp(m[1])
		return true
	}},
	{reFreeOnDevice, func(c *Capacity, m []string) bool {
		c.TotalGPUGiB, c.Utilization = fltp(m[2]), fltp(m[3])
		c.parseVLLMUsage(m[5])
		return true
	}},
}

// parseVLLMUsage reads the usage breakdown of vLLM's "Free memory on
// device" line: weights (unless known already), activations, non-torch
// memory and the CUDA graphs.
func (c *Capacity) parseVLLMUsage(usage string) {
	if u := reUsageWeight.FindStringSubmatch(usage); u != nil && c.WeightsGiB == nil {
		c.WeightsGiB = fltp(u[1])
	}
	if u := reUsageAct.FindStringSubmatch(usage); u != nil {
		c.ActivationGiB = fltp(u[1])
	}
	if u := reUsageNonTorch.FindStringSubmatch(usage); u != nil {
		c.NonTorchGiB = fltp(u[1])
	}
	if u := reUsageGraph.FindStringSubmatch(usage); u != nil {
		c.CUDAGraphActualGiB = fltp(u[1])
	}
}

// vllmVersion reads the vLLM version of a start-up line: "Initializing
// a V1 LLM engine (v0.10.1.1) with config: …" (older: "Initializing an LLM
// engine (v0.8.1) …") or "vLLM API server version 0.8.5.post1"; when a
// line has both, the API server's.
func vllmVersion(line string) (string, bool) {
	v, ok := "", false
	if m := reEngineVersion.FindStringSubmatch(line); m != nil {
		v, ok = m[1], true
	}
	if m := reAPIVersion.FindStringSubmatch(line); m != nil {
		v, ok = m[1], true
	}
	return v, ok
}

// addGraphSample records s, replacing an earlier sample of the same mode.
func (c *Capacity) addGraphSample(s GraphSample) {
	for i := range c.GraphSamples {
		if c.GraphSamples[i].Mode == s.Mode {
			c.GraphSamples[i] = s
			return
		}
	}
	c.GraphSamples = append(c.GraphSamples, s)
}

func (c *Capacity) parseLlama(line string, iswa *string) bool {
	hit := false
	if m := reKVSelf.FindStringSubmatch(line); m != nil {
		c.KVMiB, hit = fltp(m[1]), true
		if m[2] != "" {
			c.TypeK, c.KMiB, c.TypeV, c.VMiB = m[2], fltp(m[3]), m[4], fltp(m[5])
		}
	}
	if m := reKVUnif.FindStringSubmatch(line); m != nil {
		kv, cells := fltp(m[1]), intp(m[2])
		var k, v *float64
		if m[3] != "" {
			c.TypeK, k, c.TypeV, v = m[3], fltp(m[4]), m[5], fltp(m[6])
		}
		if *iswa == "SWA" && c.KVMiB != nil {
			// second cache of an iSWA model: add it to the first
			*c.KVMiB += *kv
			addp(&c.KMiB, k)
			addp(&c.VMiB, v)
		} else {
			c.KVMiB, c.Cells, c.KMiB, c.VMiB = kv, cells, k, v
		}
		*iswa = ""
		hit = true
	}
	if m := reKVInit.FindStringSubmatch(line); m != nil {
		c.Cells, c.TypeK, c.TypeV, hit = intp(m[1]), m[2], m[3], true
	}
	if m := reNCtx.FindStringSubmatch(line); m != nil {
		c.NCtx, hit = intp(m[1]), true
	}
	if m := reNSeq.FindStringSubmatch(line); m != nil {
		c.NSeq, hit = intp(m[1]), true
	}
	if hit {
		c.Format = backend.LlamaCpp
	}
	return hit
}

func intp(s string) *int {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		return nil
	}
	return &n
}

func fltp(s string) *float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &f
}

func addp(dst **float64, v *float64) {
	if v == nil {
		return
	}
	if *dst == nil {
		x := *v
		*dst = &x
		return
	}
	x := **dst + *v
	*dst = &x
}

// String is a one-line summary of what was found.
func (c *Capacity) String() string {
	var p []string
	if c.Tokens != nil {
		p = append(p, fmt.Sprintf("%d tokens", *c.Tokens))
	}
	if c.Blocks != nil {
		p = append(p, fmt.Sprintf("%d blocks", *c.Blocks))
	}
	if c.KVMiB != nil {
		p = append(p, fmt.Sprintf("KV %.2f MiB", *c.KVMiB))
	}
	if c.Cells != nil {
		p = append(p, fmt.Sprintf("%d cells", *c.Cells))
	}
	if len(p) == 0 {
		return "no capacity lines"
	}
	return string(c.Format) + ": " + strings.Join(p, ", ")
}

// Server is what a log says about the server itself, beyond its KV cache.
// Unlike Capacity, which a new start-up resets, each field is the last
// value the log names: Ollama and llama.cpp print their version before
// the lines that begin a model's start-up.
type Server struct {
	// OllamaVersion is from Ollama's `msg="Listening on 127.0.0.1:11434
	// (version 0.6.5)"` (server/routes.go).
	OllamaVersion string
	// VLLMVersion is from vLLM's "vLLM API server version 0.8.5.post1"
	// (entrypoints/openai/api_server.py) or "Initializing a V1 LLM engine
	// (v0.10.1.1)", the lines Capacity.VLLMVersion is read from.
	VLLMVersion string
	// LlamaCppBuild is "4524 (6171c9d2)" from llama.cpp's "build: 4524
	// (6171c9d2) with cc (GCC) 13.3.0 for x86_64-linux-gnu"
	// (common/common.cpp: "build: %d (%s) with %s for %s").
	LlamaCppBuild string
	// ModelFile is the model file of the last runner Ollama started
	// (server/server.go, v0.6.x): `msg="starting llama server"
	// cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/
	// sha256-… --ctx-size 8192 …"`.
	ModelFile string
}

var (
	reOllamaVersion = regexp.MustCompile(`Listening on \S+ \(version ([^)\s]+)\)`)
	reLlamaCppBuild = regexp.MustCompile(`build: (\d+ \([0-9a-f]+\))`)
	reOllamaRunner  = regexp.MustCompile(`msg="starting llama server" cmd="[^"]*?--model (\S+)`)
)

// Version is the version of the server of family kind that the log
// names ("0.6.5", "0.8.5.post1", "4524 (6171c9d2)"), or "" when no line
// says (or the family prints no version line servebench knows).
func (s *Server) Version(kind backend.Kind) string {
	switch kind {
	case backend.Ollama:
		return s.OllamaVersion
	case backend.VLLM:
		return s.VLLMVersion
	case backend.LlamaCpp:
		return s.LlamaCppBuild
	}
	return ""
}

// parseServer scans a server log for what it says about the server
// (Server). Like parse, it skips lines over 1 MiB, never fails on content
// and returns an error only when reading fails.
func parseServer(r io.Reader) (Server, error) {
	var s Server
	err := scanLines(r, s.parseLine)
	return s, err
}

// parseLine reads one log line into s (the substring tests spare most
// lines the regexps).
func (s *Server) parseLine(line string) {
	switch {
	case strings.Contains(line, "Listening on"):
		if m := reOllamaVersion.FindStringSubmatch(line); m != nil {
			s.OllamaVersion = m[1]
		}
	case strings.Contains(line, "starting llama server"):
		if m := reOllamaRunner.FindStringSubmatch(line); m != nil {
			s.ModelFile = m[1]
		}
	case strings.Contains(line, "build: "):
		if m := reLlamaCppBuild.FindStringSubmatch(line); m != nil {
			s.LlamaCppBuild = m[1]
		}
	case strings.Contains(line, "LLM engine") || strings.Contains(line, "API server version"):
		if v, ok := vllmVersion(line); ok {
			s.VLLMVersion = v
		}
	}
}
