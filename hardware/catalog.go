// Package hardware is servebench's catalog of GPUs: the memory the CUDA
// driver reports for each board, its memory bandwidth and its dense FP16
// throughput, and the lookup that matches the names nvidia-smi and server
// logs print to the catalog's.
package hardware

import (
	"fmt"
	"sort"
	"strings"

	"github.com/servebench/servebench/internal/suggest"
)

// GPU is one catalog entry.
type GPU struct {
	// Name is the marketing name, as nvidia-smi prints it without "NVIDIA".
	Name string `json:"name"`
	// MemoryGiB is the total memory the CUDA driver reports (what vLLM
	// multiplies by gpu_memory_utilization). Where a published log gives
	// it (MemorySource "log"), that value; else the board's nominal
	// memory ("nominal"), which is a few hundred MiB above what the
	// driver reports.
	MemoryGiB    float64 `json:"memory_gib"`
	MemorySource string  `json:"memory_source"`
	// BandwidthGBs is the memory bandwidth in GB/s (10^9 bytes/s), from
	// the spec sheet; it bounds decode speed.
	BandwidthGBs float64 `json:"bandwidth_gb_s"`
	// FP16TFLOPS is dense FP16 tensor-core throughput in TFLOPS (no
	// sparsity), from the spec sheet; it bounds prefill speed.
	FP16TFLOPS float64 `json:"fp16_dense_tflops"`
	// FP16FP32AccTFLOPS is dense FP16 tensor-core throughput with FP32
	// accumulate in TFLOPS, what vLLM's and llama.cpp's matrix kernels
	// get. GeForce cards run it at half their FP16-accumulate rate
	// (NVIDIA's Ampere GA102, Ada Lovelace and Blackwell GeForce RTX 50
	// whitepapers, "Peak FP16 Tensor TFLOPS with FP32 Accumulate": RTX 3090
	// 35.6, 4080 97.5, 4090 165.2, 5070 Ti 87.9, 5080 112.6, 5090 209.5;
	// the 3060, 4060 Ti and 4070 Ti SUPER, absent from those tables, are
	// half their FP16-accumulate spec figure by the same rule).
	// Datacenter and professional parts (T4, A10, L4, L40S, A100, H100,
	// H200) run it at the full rate of their datasheets' dense FP16
	// tensor figure.
	FP16FP32AccTFLOPS float64 `json:"fp16_fp32acc_dense_tflops"`
}

// gpus is the built-in catalog. Lookup compares names by Key.
var gpus = []GPU{
	{"GeForce RTX 3060 12GB", 12.0, "nominal", 360, 51, 25.6},
	{"GeForce RTX 3090", 24.0, "nominal", 936, 71, 35.6},
	{"GeForce RTX 4060 Ti 16GB", 16.0, "nominal", 288, 88, 44},
	{"GeForce RTX 4070 Ti SUPER", 16.0, "nominal", 672, 176, 88},
	{"GeForce RTX 4080", 16.0, "nominal", 717, 195, 97.5},
	{"GeForce RTX 4090", 23.63, "log", 1008, 330, 165.2},
	{"GeForce RTX 5070 Ti", 15.92, "log", 896, 176, 87.9},
	{"GeForce RTX 5080", 16.0, "nominal", 960, 225, 112.6},
	{"GeForce RTX 5090", 32.0, "nominal", 1792, 419, 209.5},
	{"Tesla T4", 14.74, "log", 320, 65, 65},
	{"A10", 24.0, "nominal", 600, 125, 125},
	{"L4", 22.16, "log", 300, 121, 121},
	{"L40S", 48.0, "nominal", 864, 362, 362},
	{"A100 40GB", 39.56, "log", 1555, 312, 312},
	{"A100 80GB", 79.15, "log", 2039, 312, 312},
	{"H100 80GB", 80.0, "nominal", 3350, 989, 989},
	{"H200", 141.0, "nominal", 4800, 989, 989},
}

// Key is the name s as Lookup compares it: without a parenthetical
// remark, lowercase, without "nvidia", "geforce", "tesla", spaces, dashes
// and "sxm4"/"pcie", so that nvidia-smi names match catalog names
// ("NVIDIA GeForce RTX 5070 Ti" and "RTX 5070 Ti" are both "rtx5070ti").
func Key(s string) string {
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	for _, w := range []string{"nvidia", "geforce", "tesla", "-sxm4", "-sxm5", "-pcie", "sxm", "pcie", "hbm3", " ", "-", "_"} {
		s = strings.ReplaceAll(s, w, "")
	}
	return s
}

// UnknownGPUError is Lookup's error for a name the catalog does not hold;
// Closest are the nearest catalog names.
type UnknownGPUError struct {
	Name    string
	Closest []string
}

// Error names the GPU and the closest catalog names.
func (e *UnknownGPUError) Error() string {
	return fmt.Sprintf("unknown GPU %q; closest: %s", e.Name, strings.Join(e.Closest, ", "))
}

// Lookup finds a GPU by name (case and vendor words ignored, "A100-SXM4-40GB"
// matches "A100 40GB"), or returns an *UnknownGPUError listing the closest
// names.
func Lookup(name string) (GPU, error) {
	k := Key(name)
	for _, g := range gpus {
		if Key(g.Name) == k {
			return g, nil
		}
	}
	// Device names without the memory size ("NVIDIA H100 80GB HBM3" vs
	// "H100 80GB", "RTX 3060" vs "RTX 3060 12GB"): accept a unique prefix.
	var hits []GPU
	for _, g := range gpus {
		gk := Key(g.Name)
		if strings.HasPrefix(gk, k) || strings.HasPrefix(k, gk) {
			hits = append(hits, g)
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	sort.Strings(names)
	return GPU{}, &UnknownGPUError{Name: name, Closest: closestGPU(name, names)}
}

// closestGPU returns the three catalog names nearest to name, compared
// by Key.
func closestGPU(name string, names []string) []string {
	keys := make([]string, len(names))
	byKey := map[string]string{}
	for i, n := range names {
		keys[i] = Key(n)
		byKey[keys[i]] = n
	}
	var out []string
	for _, k := range suggest.Closest(Key(name), keys, 3) {
		out = append(out, byKey[k])
	}
	return out
}
