// Package serverlog reads the KV-cache capacity an LLM server reports in
// its start-up log: vLLM's "GPU KV cache size: N tokens" (V1), "# GPU
// blocks: N" (V0), "Maximum concurrency for L tokens per request: Xx" and
// its memory-profiling lines; llama.cpp's (and Ollama's, which runs
// llama.cpp) "KV self size = X MiB" and "llama_kv_cache…: size = X MiB
// (N cells, …)". The launch code and `servebench calibrate` both use it.
package serverlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
)

// Format is the log family a capacity line came from.
type Format string

// Log families.
const (
	VLLM     Format = "vllm"
	LlamaCpp Format = "llamacpp"
)

// Capacity is everything the log said about KV-cache capacity. Nil fields
// were not in the log. When a log holds several start-ups, the last one
// wins.
type Capacity struct {
	Format Format
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
	// summary where printed.
	WeightsGiB, ActivationGiB, NonTorchGiB, TotalGPUGiB, Utilization *float64
	// KVMiB is llama.cpp's KV buffer in MiB (summed over the full and
	// sliding-window caches of an iSWA model); Cells its cell count;
	// KMiB and VMiB the halves; TypeK/TypeV the element types.
	KVMiB, KMiB, VMiB *float64
	Cells             *int
	TypeK, TypeV      string
	// NCtx and NSeq are llama.cpp's n_ctx and n_seq_max (slots).
	NCtx, NSeq *int
	// Lines are the matched lines, verbatim, for the record.
	Lines []string
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
func (c *Capacity) Document(source string) *document.Capacity {
	if !c.Found() {
		return nil
	}
	return &document.Capacity{
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
)

// Parse scans a server log for capacity lines. It reads lines of up to 1
// MiB (longer ones are skipped), never fails on content, and returns an
// error only when reading fails.
func Parse(r io.Reader) (Capacity, error) {
	var c Capacity
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineLen)
	iswa, prev := "", ""
	for {
		if !sc.Scan() {
			if err := sc.Err(); err == bufio.ErrTooLong {
				// skip the rest of an overlong line and go on
				sc = bufio.NewScanner(r)
				sc.Buffer(make([]byte, 64<<10), maxLineLen)
				continue
			} else if err != nil {
				return c, err
			}
			break
		}
		line := sc.Text()
		if strings.HasSuffix(strings.TrimSpace(prev), "num_gpu_blocks is") {
			// a log file hard-wrapped at a fixed width split this line
			line = strings.TrimSpace(prev) + line
		}
		prev = line
		if m := reISWA.FindStringSubmatch(line); m != nil {
			iswa = m[1]
		}
		if c.parseVLLM(line) || c.parseLlama(line, &iswa) {
			c.Lines = append(c.Lines, strings.TrimSpace(line))
		}
	}
	return c, nil
}

// ParseFile parses the log at path.
func ParseFile(path string) (Capacity, error) {
	f, err := os.Open(path)
	if err != nil {
		return Capacity{}, err
	}
	defer f.Close()
	return Parse(f)
}

func (c *Capacity) parseVLLM(line string) bool {
	hit := false
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
	if hit {
		c.Format = VLLM
	}
	return hit
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
		c.Format = LlamaCpp
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
