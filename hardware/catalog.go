// Package hardware is servebench's catalog of GPUs: the memory, memory
// bandwidth and tensor throughput of each board as its vendor's datasheet
// or architecture whitepaper gives them, and the lookup that matches the
// names people, nvidia-smi and server logs use to exactly one entry.
package hardware

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/servebench/servebench/internal/suggest"
)

// GPU is one catalog entry. Throughput figures are dense (without 2:4
// sparsity), at the boost clock the vendor's figure is stated for.
type GPU struct {
	// Name is the catalog's name for the board, as nvidia-smi prints it
	// without "NVIDIA".
	Name string `json:"name"`
	// Aliases are the other names the board goes by: the exact names
	// nvidia-smi prints ("NVIDIA A100-SXM4-80GB") and the common short
	// ones. Lookup compares them by Key; no key belongs to two entries.
	Aliases []string `json:"aliases,omitempty"`
	// MemoryGiB is the total memory the CUDA driver reports (what vLLM
	// multiplies by gpu_memory_utilization). Where a published log gives
	// it (MemorySource "log"), that value; else the board's nominal
	// memory in GB ("nominal"), a few hundred MiB above what the driver
	// reports.
	//
	// On a unified-memory board (Unified: the CPU and the GPU share one
	// pool) MemoryGiB is what the GPU may use by default (MemorySource
	// "unified"; MemoryNote says how much of the pool that is and why).
	MemoryGiB    float64 `json:"memory_gib"`
	MemorySource string  `json:"memory_source"`
	Unified      bool    `json:"unified_memory,omitempty"`
	MemoryNote   string  `json:"memory_note,omitempty"`
	// Vendor is the board's maker: "" is NVIDIA; "AMD" and "Apple"
	// entries count compute units or GPU cores as SMs.
	Vendor string `json:"vendor,omitempty"`
	// BandwidthGBs is the memory bandwidth in GB/s (10^9 bytes/s); it
	// bounds decode speed.
	BandwidthGBs float64 `json:"bandwidth_gb_s"`
	// FP16TFLOPS is dense FP16 tensor throughput with FP16 accumulate,
	// the datasheets' headline FP16 figure.
	FP16TFLOPS float64 `json:"fp16_dense_tflops"`
	// FP16FP32AccTFLOPS is dense FP16/BF16 tensor throughput with FP32
	// accumulate, what vLLM's and llama.cpp's matrix kernels get; it
	// bounds prefill speed. GeForce boards and the L40 run it at half
	// their FP16-accumulate rate (the GA102, Ada and RTX Blackwell
	// whitepapers' "Peak FP16 Tensor TFLOPS with FP32 Accumulate");
	// datacenter and professional boards at the full rate.
	FP16FP32AccTFLOPS float64 `json:"fp16_fp32acc_dense_tflops"`
	// FP8TFLOPS is dense FP8 tensor throughput with FP32 accumulate (0
	// where the board has no FP8 tensor cores: Volta, Turing, Ampere).
	FP8TFLOPS float64 `json:"fp8_dense_tflops,omitempty"`
	// INT8TOPS is dense INT8 tensor throughput (0 on Volta).
	INT8TOPS float64 `json:"int8_dense_tops,omitempty"`
	// FP32TFLOPS is non-tensor FP32 throughput.
	FP32TFLOPS float64 `json:"fp32_tflops"`
	// PowerW is the board's power limit (TDP, TGP or total board power).
	PowerW float64 `json:"power_w"`
	// Interconnect is the fastest GPU-to-GPU link the board has and
	// InterconnectGBs its bandwidth in GB/s as the vendor states it
	// (NVLink: total of both directions; PCIe: per direction).
	Interconnect    string  `json:"interconnect"`
	InterconnectGBs float64 `json:"interconnect_gb_s"`
	// HostPCIe is the board's PCIe link (pcie3, pcie4, pcie5) where
	// Interconnect is another link (NVLink, a bridge, Infinity Fabric):
	// what tensor-parallel ranks share when that link is absent. Empty
	// where Interconnect is the PCIe link, and on systems on a chip.
	HostPCIe string `json:"host_pcie,omitempty"`
	// SMs, TensorCoresPerSM, FLOPPerClock (dense FP16 with FP32
	// accumulate, per tensor core and clock) and BoostMHz are the
	// composition the FP16FP32AccTFLOPS figure follows from; a test holds
	// the product to the figure.
	SMs              int     `json:"sms"`
	TensorCoresPerSM int     `json:"tensor_cores_per_sm"`
	FLOPPerClock     int     `json:"fp16_fp32acc_flop_per_clock"`
	BoostMHz         float64 `json:"boost_mhz"`
	// INT32LanesPerSM is the SM's INT32 lanes: 64 from Volta to Hopper
	// (the GA102 whitepaper: 16 INT32 cores in each of 4 partitions), 128
	// on RTX Blackwell (its whitepaper: twice Ada's integer throughput per
	// clock). ggml's small-batch kernels (MMVQ) run on them, by dp4a.
	INT32LanesPerSM int `json:"int32_lanes_per_sm"`
	// Source is the vendor document the figures are from.
	Source string `json:"source"`
}

// DP4AOPS is the board's dp4a rate in operations per second: every
// INT32 lane issuing one 4-way int8 dot product with accumulate (8
// operations) per clock, what ggml's quantized vector kernels run on.
func (g GPU) DP4AOPS() float64 {
	return float64(g.SMs*g.INT32LanesPerSM) * g.BoostMHz * 1e6 * 8
}

// SMCyclesPerS is the board's SM cycles per second at its boost clock
// (SMs × BoostMHz), what per-SM limits of ggml's CUDA kernels scale with;
// 0 for other vendors, whose compute units run other kernels.
func (g GPU) SMCyclesPerS() float64 {
	if g.Vendor != "" {
		return 0
	}
	return float64(g.SMs) * g.BoostMHz * 1e6
}

// PCIeGBs is the board's PCIe bandwidth per direction in GB/s: its
// Interconnect's where that is PCIe, else its HostPCIe generation's
// (16, 32, 64 GB/s for x16 PCIe 3.0, 4.0, 5.0); 0 on a system on a chip.
func (g GPU) PCIeGBs() float64 {
	if strings.HasPrefix(g.Interconnect, "PCIe") {
		return g.InterconnectGBs
	}
	return pcieGBs[g.HostPCIe]
}

// pcieGBs is each x16 PCIe generation's bandwidth per direction, GB/s.
var pcieGBs = map[string]float64{pcie3: 16, pcie4: 32, pcie5: 64}

// SwitchedNVLink says whether every GPU of the board's systems reaches
// every other over NVLink at the board's full NVLink bandwidth: the SXM
// boards of HGX and DGX systems (NVSwitch; Volta's hybrid cube mesh) and
// AMD's Infinity Fabric boards, as against an NVLink bridge, which joins
// a pair of PCIe boards when a system has one.
func (g GPU) SwitchedNVLink() bool { return g.Interconnect == nvl || g.Interconnect == xgmi }

// NVLinkGBs is the board's NVLink (or bridge, or Infinity Fabric)
// bandwidth per direction in GB/s, half the total the vendor states; 0
// where it has none.
func (g GPU) NVLinkGBs() float64 {
	if strings.HasPrefix(g.Interconnect, "PCIe") || g.Interconnect == noLink || strings.HasPrefix(g.Interconnect, "NVLink-C2C") {
		return 0
	}
	return g.InterconnectGBs / 2
}

// GeForce says whether the board is a GeForce card, on which NVIDIA's
// driver offers no peer-to-peer access over PCIe.
func (g GPU) GeForce() bool { return strings.HasPrefix(g.Name, "GeForce") }

// Interconnects.
const (
	pcie3 = "PCIe 3.0 x16"
	pcie4 = "PCIe 4.0 x16"
	pcie5 = "PCIe 5.0 x16"
	nvl   = "NVLink"
	// nvlBridge is an NVLink bridge between a pair of PCIe boards: an
	// accessory a system may or may not have (its PCIe link is HostPCIe).
	nvlBridge = "NVLink bridge (2 GPUs)"
	// noLink is a system on a chip: no GPU-to-GPU link
	// (InterconnectGBs 0).
	noLink = "none (system on a chip)"
	xgmi   = "AMD Infinity Fabric"
)

// Vendors other than NVIDIA.
const (
	vendorAMD   = "AMD"
	vendorApple = "Apple"
)

// Vendor documents, cited per entry.
const (
	srcGA102   = "NVIDIA Ampere GA102 GPU Architecture whitepaper v2 (nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf): RTX 3090, 3080, 3070 and RTX A6000 tables; other GA10x boards from NVIDIA's GeForce RTX 30 specification pages (nvidia.com/en-us/geforce/graphics-cards/30-series/)"
	srcGA100   = "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf) and NVIDIA A100 Tensor Core GPU Architecture whitepaper (images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf); both quoted at glennklockwood.com/garden/processors/A100"
	srcAda     = "NVIDIA Ada GPU Architecture whitepaper v2.01 (images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf), RTX 4090 / 4080 / 4070 Ti (ex-4080 12GB), RTX 6000 Ada, L40 and L4 tables; other AD10x boards from NVIDIA's GeForce RTX 40 specification pages"
	srcRTXBW   = "NVIDIA RTX Blackwell GPU Architecture whitepaper (images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf), RTX 5090 / 5080 / 5070 Ti / 5070 tables; RTX 5060 Ti from NVIDIA's GeForce RTX 50 specification page"
	srcH100    = "NVIDIA H100 Tensor Core GPU datasheet (resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet) and Hopper architecture whitepaper (1.83 GHz tensor clock, 132 SMs; quoted at glennklockwood.com/garden/processors/h100); H100 PCIe product brief PB-11133-001 (manuals.plus/m/56b0c3ef7d0a1c470c0af8f05a0bd1f29a778007472ba941201fbbb185c9bccd); the H100 80GB's 79.18 GiB total is what vLLM logs on it (\"Free memory on device (78.57/79.18 GiB) on startup\", llm-d/llm-d-benchmark@87ab01be config_explorer/empirical-vllm-memory-results.md)"
	srcH200    = "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200/)"
	srcL40     = "NVIDIA L40 and L40S datasheets (nvidia.com/en-us/data-center/l40/, nvidia.com/en-us/data-center/l40s/; table quoted at mullet.se/product.html?product_id=355414) and the Ada whitepaper's L40 table"
	srcL4      = "NVIDIA L4 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/l4/) and the Ada whitepaper's L4 table"
	srcT4      = "NVIDIA T4 Tensor Core GPU datasheet (nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf) and Turing architecture whitepaper"
	srcV100    = "NVIDIA V100 Tensor Core GPU datasheet (images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf) and Volta architecture whitepaper"
	srcA10     = "NVIDIA A10 Tensor Core GPU datasheet (nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf)"
	srcRTXAmp  = "NVIDIA RTX A4000 / A5000 / A6000 datasheets (nvidia.com/en-us/design-visualization/rtx-a4000/, /rtx-a5000/, /rtx-a6000/) and the GA102 whitepaper's RTX A6000 table"
	srcB200    = "NVIDIA HGX B200 specifications, per GPU at 1,000 W (nvidia.com/en-us/data-center/hgx/; table quoted at zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html and glennklockwood.com/garden/processors/B200): 180 GB HBM3E, 7.7 TB/s, FP16/BF16 4.5 PFLOPS sparse (2.25 dense), FP8 and INT8 9 sparse (4.5 dense), FP32 75 TFLOPS, NVLink 5 1.8 TB/s; 148 SMs; the 1.856 GHz tensor clock follows from 2.25 PFLOPS at 2,048 dense FP16 FLOP per tensor core and clock (twice Hopper's)"
	srcGH200   = "NVIDIA GH200 Grace Hopper Superchip datasheet (nvidia.com/en-us/data-center/grace-hopper-superchip/): the GPU is an H100 SXM5's (132 SMs, FP16 989 TFLOPS dense, FP8 1,979), with 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s, NVLink-C2C 900 GB/s to the Grace CPU, module power up to 1,000 W (CPU, GPU and memory); names as nvidia-smi prints them from published logs (NVIDIA GH200 480GB: 97,871 MiB; NVIDIA GH200 144G HBM3e: 146,831 MiB)"
	srcRTXPRO  = "NVIDIA RTX PRO 6000 Blackwell datasheet (nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/): 188 SMs (24,064 CUDA cores), 96 GB GDDR7, 1,792 GB/s, FP32 125 TFLOPS, 4,000 AI TOPS (FP4 sparse), 600 W; dense FP16 500 TFLOPS = 4,000 / 8 (FP4 sparse to FP16 dense), and the 2.6 GHz clock follows from 125 TFLOPS FP32; FP32 accumulate at the full rate as on the RTX A6000 and RTX 6000 Ada"
	srcOrin    = "NVIDIA Jetson AGX Orin Series technical brief v1.2 (nvidia.com/content/dam/en-zz/Solutions/gtcf21/jetson-orin/nvidia-jetson-agx-orin-technical-brief.pdf): 64 GB LPDDR5 at 204.8 GB/s shared by CPU and GPU, GPU of 16 SMs with 64 third-generation tensor cores at up to 1.3 GHz, 170 sparse INT8 TOPS (85 dense), 5.3 FP32 TFLOPS, 15-60 W; dense FP16 (42.5 TFLOPS) is half the dense INT8 rate, as on every Ampere tensor core, 512 FLOP per tensor core and clock; the brief states no FP32-accumulate rate (taken at the full rate)"
	srcThor    = "NVIDIA Jetson AGX Thor (T5000) datasheet (nvidia.com/en-us/autonomous-machines/embedded-systems/jetson-thor/): 128 GB LPDDR5X at 273 GB/s shared by CPU and GPU, Blackwell GPU at up to 1.57 GHz, 2,070 FP4 TFLOPS sparse, 40-130 W; CUDA reports 20 SMs (2,560 cores; forums.developer.nvidia.com/t/356355); NVIDIA states FP4 only: dense FP8 (517.5) and FP16 (258.75) are 1/4 and 1/8 of the sparse FP4 figure, as on every Blackwell tensor core, FP32 accumulate taken at the full rate"
	srcSpark   = "NVIDIA DGX Spark specifications (nvidia.com/en-us/products/workstations/dgx-spark/; quoted at ai-infrastructure.net/dgx-spark): GB10 with 6,144 CUDA cores (48 SMs), 128 GB LPDDR5x at 273 GB/s shared by CPU and GPU, 1 PFLOP FP4 sparse, 140 W GB10 TDP, two ConnectX-7 200 GbE ports; FP32 31 TFLOPS as NVIDIA gave it at Hot Chips 2025 (theregister.com, quoted at meterpreter.org), from which the 2.52 GHz clock follows; NVIDIA states FP4 only: dense FP16 with FP16 accumulate (125) is 1/8 of the sparse FP4 figure; FP32 accumulate taken at half that, as on the RTX Blackwell (sm_120) GeForce boards GB10 (sm_121) shares its SM with, not stated by NVIDIA"
	srcMI300X  = "AMD Instinct MI300X data sheet (amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf) and CDNA 3 architecture whitepaper: 304 CUs at 2,100 MHz peak engine clock, 4 matrix cores per CU, 192 GB HBM3 at 5.3 TB/s, FP16/BF16 1,307.4 TFLOPS dense, FP8 and INT8 2,614.9, FP32 vector 163.4, 750 W, Infinity Fabric 896 GB/s aggregate (7 links of 128 GB/s)"
	srcMI250   = "AMD Instinct MI250 and MI250X data sheets (amd.com/en/products/accelerators/instinct/mi200/mi250.html, /mi250x.html) and CDNA 2 architecture whitepaper: the OAM board holds two GCDs, each of which ROCm, vLLM and llama.cpp see as one GPU; the figures are one GCD's, half the board's: MI250 208 CUs (104 per GCD), MI250X 220 (110) at 1,700 MHz, 128 GB HBM2e (64 per GCD) at 3.2768 TB/s (1.6384 per GCD), FP16 362.1 / 383 TFLOPS (181.05 / 191.5 per GCD), FP32 vector 45.3 / 47.9, 560 W board; the two GCDs share an in-package Infinity Fabric of 400 GB/s"
	srcApple   = "Apple's technical specifications (support.apple.com/en-us/111838 MacBook Pro M2 Max, /111835 Mac Studio M2 Ultra, /117736 MacBook Pro M3 Max, /122211 Mac Studio M3 Ultra, /121553 MacBook Pro M4 Max): GPU cores, memory bandwidth, the largest memory; Apple publishes no FLOP figure: FP32 = GPU cores × 128 ALUs × 2 × clock, FP16 at the same rate (no separate matrix unit; llama.cpp's Metal kernels use simdgroup matrices on the ALUs), clocks 1,398 MHz (M2, M3) and 1,678 MHz (M4) as hmc-tech.com/gpu lists them, not Apple figures. The GPU may use recommendedMaxWorkingSetSize of Metal's MTLDevice (developer.apple.com/documentation/metal/mtldevice/recommendedmaxworkingsetsize), 75% of the memory on machines with more than 36 GB (96 GB of 128, as Ollama and llama.cpp report it: stencel.io/posts/apple-silicon-limitations-with-usage-on-local-llm%20.html); sudo sysctl iogpu.wired_limit_mb raises it"
	srcRTX6Ada = "NVIDIA RTX 6000 Ada Generation datasheet (nvidia.com/en-us/design-visualization/rtx-6000/) and the Ada whitepaper's RTX 6000 table"
)

// gpus is the built-in catalog. Lookup compares names by Key.
var gpus = []GPU{
	// Ampere GA10x GeForce: 4 third-generation tensor cores per SM, 256
	// dense FP16 FLOP per clock each with FP16 accumulate, 128 with FP32.
	{Name: "GeForce RTX 3060 12GB", Aliases: []string{"RTX 3060", "RTX 3060 12GB", "NVIDIA GeForce RTX 3060"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 360, FP16TFLOPS: 51, FP16FP32AccTFLOPS: 25.5, INT8TOPS: 101.9, FP32TFLOPS: 12.7, PowerW: 170, Interconnect: pcie4, InterconnectGBs: 32, SMs: 28, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1777, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3060 Ti", Aliases: []string{"RTX 3060 Ti"}, MemoryGiB: 8, MemorySource: "nominal", BandwidthGBs: 448, FP16TFLOPS: 64.8, FP16FP32AccTFLOPS: 32.4, INT8TOPS: 129.6, FP32TFLOPS: 16.2, PowerW: 200, Interconnect: pcie4, InterconnectGBs: 32, SMs: 38, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1665, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3070", Aliases: []string{"RTX 3070"}, MemoryGiB: 8, MemorySource: "nominal", BandwidthGBs: 448, FP16TFLOPS: 81.3, FP16FP32AccTFLOPS: 40.6, INT8TOPS: 162.6, FP32TFLOPS: 20.3, PowerW: 220, Interconnect: pcie4, InterconnectGBs: 32, SMs: 46, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1725, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3070 Ti", Aliases: []string{"RTX 3070 Ti"}, MemoryGiB: 8, MemorySource: "nominal", BandwidthGBs: 608, FP16TFLOPS: 87, FP16FP32AccTFLOPS: 43.5, INT8TOPS: 174, FP32TFLOPS: 21.7, PowerW: 290, Interconnect: pcie4, InterconnectGBs: 32, SMs: 48, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1770, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3080", Aliases: []string{"RTX 3080", "RTX 3080 10GB"}, MemoryGiB: 10, MemorySource: "nominal", BandwidthGBs: 760, FP16TFLOPS: 119, FP16FP32AccTFLOPS: 59.5, INT8TOPS: 238, FP32TFLOPS: 29.8, PowerW: 320, Interconnect: pcie4, InterconnectGBs: 32, SMs: 68, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1710, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3080 12GB", Aliases: []string{"RTX 3080 12GB"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 912, FP16TFLOPS: 122.6, FP16FP32AccTFLOPS: 61.3, INT8TOPS: 245.1, FP32TFLOPS: 30.6, PowerW: 350, Interconnect: pcie4, InterconnectGBs: 32, SMs: 70, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1710, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3080 Ti", Aliases: []string{"RTX 3080 Ti"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 912, FP16TFLOPS: 136.4, FP16FP32AccTFLOPS: 68.2, INT8TOPS: 272.8, FP32TFLOPS: 34.1, PowerW: 350, Interconnect: pcie4, InterconnectGBs: 32, SMs: 80, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1665, INT32LanesPerSM: 64, Source: srcGA102},
	// RTX 3090: GA102 whitepaper appendix A, FP16 tensor 142 / 284 with
	// FP16 accumulate and 71 / 142 with FP32 accumulate (dense / sparse);
	// 35.6 is its FP32 (non-tensor) rate.
	{Name: "GeForce RTX 3090", Aliases: []string{"RTX 3090", "RTX 3090 24GB"}, MemoryGiB: 24, MemorySource: "nominal", BandwidthGBs: 936, FP16TFLOPS: 142, FP16FP32AccTFLOPS: 71, INT8TOPS: 284, FP32TFLOPS: 35.6, PowerW: 350, Interconnect: nvlBridge, InterconnectGBs: 112.5, HostPCIe: pcie4, SMs: 82, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1695, INT32LanesPerSM: 64, Source: srcGA102},
	{Name: "GeForce RTX 3090 Ti", Aliases: []string{"RTX 3090 Ti", "RTX 3090 Ti 24GB"}, MemoryGiB: 24, MemorySource: "nominal", BandwidthGBs: 1008, FP16TFLOPS: 160, FP16FP32AccTFLOPS: 80, INT8TOPS: 320, FP32TFLOPS: 40, PowerW: 450, Interconnect: nvlBridge, InterconnectGBs: 112.5, HostPCIe: pcie4, SMs: 84, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 1860, INT32LanesPerSM: 64, Source: srcGA102},
	// Ampere professional and datacenter GA10x: full-rate FP32 accumulate.
	{Name: "RTX A4000", Aliases: []string{"NVIDIA RTX A4000"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 448, FP16TFLOPS: 76.7, FP16FP32AccTFLOPS: 76.7, INT8TOPS: 153.4, FP32TFLOPS: 19.2, PowerW: 140, Interconnect: pcie4, InterconnectGBs: 32, SMs: 48, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1560, INT32LanesPerSM: 64, Source: srcRTXAmp},
	{Name: "RTX A5000", Aliases: []string{"NVIDIA RTX A5000"}, MemoryGiB: 24, MemorySource: "nominal", BandwidthGBs: 768, FP16TFLOPS: 111.1, FP16FP32AccTFLOPS: 111.1, INT8TOPS: 222.2, FP32TFLOPS: 27.8, PowerW: 230, Interconnect: nvlBridge, InterconnectGBs: 112.5, HostPCIe: pcie4, SMs: 64, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1695, INT32LanesPerSM: 64, Source: srcRTXAmp},
	{Name: "RTX A6000", Aliases: []string{"NVIDIA RTX A6000"}, MemoryGiB: 48, MemorySource: "nominal", BandwidthGBs: 768, FP16TFLOPS: 154.8, FP16FP32AccTFLOPS: 154.8, INT8TOPS: 309.7, FP32TFLOPS: 38.7, PowerW: 300, Interconnect: nvlBridge, InterconnectGBs: 112.5, HostPCIe: pcie4, SMs: 84, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1800, INT32LanesPerSM: 64, Source: srcRTXAmp},
	{Name: "A10", Aliases: []string{"NVIDIA A10", "A10 24GB"}, MemoryGiB: 24, MemorySource: "nominal", BandwidthGBs: 600, FP16TFLOPS: 125, FP16FP32AccTFLOPS: 125, INT8TOPS: 250, FP32TFLOPS: 31.2, PowerW: 150, Interconnect: pcie4, InterconnectGBs: 32, SMs: 72, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1695, INT32LanesPerSM: 64, Source: srcA10},
	// Ada GeForce: 4 fourth-generation tensor cores per SM, 256 dense FP16
	// FLOP per clock with FP16 accumulate, 128 with FP32.
	{Name: "GeForce RTX 4060 Ti 16GB", Aliases: []string{"RTX 4060 Ti 16GB", "NVIDIA GeForce RTX 4060 Ti"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 288, FP16TFLOPS: 88.4, FP16FP32AccTFLOPS: 44.2, FP8TFLOPS: 88.4, INT8TOPS: 176.8, FP32TFLOPS: 22.1, PowerW: 165, Interconnect: "PCIe 4.0 x8", InterconnectGBs: 16, SMs: 34, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2535, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4070", Aliases: []string{"RTX 4070"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 504, FP16TFLOPS: 116.6, FP16FP32AccTFLOPS: 58.3, FP8TFLOPS: 116.6, INT8TOPS: 233.2, FP32TFLOPS: 29.1, PowerW: 200, Interconnect: pcie4, InterconnectGBs: 32, SMs: 46, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2475, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4070 SUPER", Aliases: []string{"RTX 4070 SUPER"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 504, FP16TFLOPS: 141.9, FP16FP32AccTFLOPS: 71, FP8TFLOPS: 141.9, INT8TOPS: 283.9, FP32TFLOPS: 35.5, PowerW: 220, Interconnect: pcie4, InterconnectGBs: 32, SMs: 56, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2475, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4070 Ti", Aliases: []string{"RTX 4070 Ti"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 504, FP16TFLOPS: 160.4, FP16FP32AccTFLOPS: 80.2, FP8TFLOPS: 160.4, INT8TOPS: 320.8, FP32TFLOPS: 40.1, PowerW: 285, Interconnect: pcie4, InterconnectGBs: 32, SMs: 60, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2610, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4070 Ti SUPER", Aliases: []string{"RTX 4070 Ti SUPER"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 672, FP16TFLOPS: 176.4, FP16FP32AccTFLOPS: 88.2, FP8TFLOPS: 176.4, INT8TOPS: 352.8, FP32TFLOPS: 44.1, PowerW: 285, Interconnect: pcie4, InterconnectGBs: 32, SMs: 66, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2610, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4080", Aliases: []string{"RTX 4080"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 716.8, FP16TFLOPS: 194.9, FP16FP32AccTFLOPS: 97.5, FP8TFLOPS: 194.9, INT8TOPS: 389.9, FP32TFLOPS: 48.7, PowerW: 320, Interconnect: pcie4, InterconnectGBs: 32, SMs: 76, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2505, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4080 SUPER", Aliases: []string{"RTX 4080 SUPER"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 736, FP16TFLOPS: 208.9, FP16FP32AccTFLOPS: 104.4, FP8TFLOPS: 208.9, INT8TOPS: 417.8, FP32TFLOPS: 52.2, PowerW: 320, Interconnect: pcie4, InterconnectGBs: 32, SMs: 80, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2550, INT32LanesPerSM: 64, Source: srcAda},
	{Name: "GeForce RTX 4090", Aliases: []string{"RTX 4090", "RTX 4090 24GB"}, MemoryGiB: 23.63, MemorySource: "log", BandwidthGBs: 1008, FP16TFLOPS: 330.3, FP16FP32AccTFLOPS: 165.2, FP8TFLOPS: 330.3, INT8TOPS: 660.6, FP32TFLOPS: 82.6, PowerW: 450, Interconnect: pcie4, InterconnectGBs: 32, SMs: 128, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2520, INT32LanesPerSM: 64, Source: srcAda},
	// Ada professional and datacenter: full-rate FP32 accumulate but for
	// the L40, whose datasheet gives FP16 tensor at half the L40S's.
	{Name: "RTX 6000 Ada Generation", Aliases: []string{"RTX 6000 Ada", "NVIDIA RTX 6000 Ada Generation"}, MemoryGiB: 48, MemorySource: "nominal", BandwidthGBs: 960, FP16TFLOPS: 364.2, FP16FP32AccTFLOPS: 364.2, FP8TFLOPS: 728.5, INT8TOPS: 728.5, FP32TFLOPS: 91.1, PowerW: 300, Interconnect: pcie4, InterconnectGBs: 32, SMs: 142, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 2505, INT32LanesPerSM: 64, Source: srcRTX6Ada},
	{Name: "L4", Aliases: []string{"NVIDIA L4", "L4 24GB"}, MemoryGiB: 22.16, MemorySource: "log", BandwidthGBs: 300, FP16TFLOPS: 121, FP16FP32AccTFLOPS: 121, FP8TFLOPS: 242.5, INT8TOPS: 242.5, FP32TFLOPS: 30.3, PowerW: 72, Interconnect: pcie4, InterconnectGBs: 32, SMs: 58, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 2040, INT32LanesPerSM: 64, Source: srcL4},
	{Name: "L40", Aliases: []string{"NVIDIA L40"}, MemoryGiB: 48, MemorySource: "nominal", BandwidthGBs: 864, FP16TFLOPS: 181.05, FP16FP32AccTFLOPS: 181.05, FP8TFLOPS: 362, INT8TOPS: 362, FP32TFLOPS: 90.5, PowerW: 300, Interconnect: pcie4, InterconnectGBs: 32, SMs: 142, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2490, INT32LanesPerSM: 64, Source: srcL40},
	{Name: "L40S", Aliases: []string{"NVIDIA L40S", "L40S 48GB"}, MemoryGiB: 48, MemorySource: "nominal", BandwidthGBs: 864, FP16TFLOPS: 362.05, FP16FP32AccTFLOPS: 362.05, FP8TFLOPS: 733, INT8TOPS: 733, FP32TFLOPS: 91.6, PowerW: 350, Interconnect: pcie4, InterconnectGBs: 32, SMs: 142, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 2520, INT32LanesPerSM: 64, Source: srcL40},
	// Blackwell GeForce: 4 fifth-generation tensor cores per SM, 256
	// dense FP16 FLOP per clock with FP16 accumulate, 128 with FP32.
	{Name: "GeForce RTX 5060 Ti", Aliases: []string{"RTX 5060 Ti", "RTX 5060 Ti 16GB"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 448, FP16TFLOPS: 94.8, FP16FP32AccTFLOPS: 47.4, FP8TFLOPS: 94.8, INT8TOPS: 189.7, FP32TFLOPS: 23.7, PowerW: 180, Interconnect: "PCIe 5.0 x8", InterconnectGBs: 32, SMs: 36, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2572, INT32LanesPerSM: 128, Source: srcRTXBW},
	{Name: "GeForce RTX 5070", Aliases: []string{"RTX 5070"}, MemoryGiB: 12, MemorySource: "nominal", BandwidthGBs: 672, FP16TFLOPS: 123.5, FP16FP32AccTFLOPS: 61.7, FP8TFLOPS: 123.5, INT8TOPS: 246.9, FP32TFLOPS: 30.9, PowerW: 250, Interconnect: pcie5, InterconnectGBs: 64, SMs: 48, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2512, INT32LanesPerSM: 128, Source: srcRTXBW},
	{Name: "GeForce RTX 5070 Ti", Aliases: []string{"RTX 5070 Ti"}, MemoryGiB: 15.92, MemorySource: "log", BandwidthGBs: 896, FP16TFLOPS: 175.8, FP16FP32AccTFLOPS: 87.9, FP8TFLOPS: 175.8, INT8TOPS: 351.5, FP32TFLOPS: 43.9, PowerW: 300, Interconnect: pcie5, InterconnectGBs: 64, SMs: 70, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2452, INT32LanesPerSM: 128, Source: srcRTXBW},
	{Name: "GeForce RTX 5080", Aliases: []string{"RTX 5080"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 960, FP16TFLOPS: 225.1, FP16FP32AccTFLOPS: 112.6, FP8TFLOPS: 225.1, INT8TOPS: 450.2, FP32TFLOPS: 56.3, PowerW: 360, Interconnect: pcie5, InterconnectGBs: 64, SMs: 84, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2617, INT32LanesPerSM: 128, Source: srcRTXBW},
	{Name: "GeForce RTX 5090", Aliases: []string{"RTX 5090", "RTX 5090 32GB"}, MemoryGiB: 32, MemorySource: "nominal", BandwidthGBs: 1792, FP16TFLOPS: 419, FP16FP32AccTFLOPS: 209.5, FP8TFLOPS: 419, INT8TOPS: 838, FP32TFLOPS: 104.8, PowerW: 575, Interconnect: pcie5, InterconnectGBs: 64, SMs: 170, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2407, INT32LanesPerSM: 128, Source: srcRTXBW},
	// Volta and Turing: 8 tensor cores per SM, 128 dense FP16 FLOP per
	// clock each (FP32 accumulate at the full rate).
	{Name: "Tesla V100 SXM2 16GB", Aliases: []string{"V100 SXM2 16GB", "Tesla V100-SXM2-16GB"}, MemoryGiB: 16, MemorySource: "nominal", BandwidthGBs: 900, FP16TFLOPS: 125, FP16FP32AccTFLOPS: 125, FP32TFLOPS: 15.7, PowerW: 300, Interconnect: nvl, InterconnectGBs: 300, HostPCIe: pcie3, SMs: 80, TensorCoresPerSM: 8, FLOPPerClock: 128, BoostMHz: 1530, INT32LanesPerSM: 64, Source: srcV100},
	{Name: "Tesla V100 SXM2 32GB", Aliases: []string{"V100 SXM2 32GB", "Tesla V100-SXM2-32GB"}, MemoryGiB: 32, MemorySource: "nominal", BandwidthGBs: 900, FP16TFLOPS: 125, FP16FP32AccTFLOPS: 125, FP32TFLOPS: 15.7, PowerW: 300, Interconnect: nvl, InterconnectGBs: 300, HostPCIe: pcie3, SMs: 80, TensorCoresPerSM: 8, FLOPPerClock: 128, BoostMHz: 1530, INT32LanesPerSM: 64, Source: srcV100},
	{Name: "Tesla V100 PCIe 32GB", Aliases: []string{"V100 PCIe 32GB", "Tesla V100-PCIE-32GB"}, MemoryGiB: 32, MemorySource: "nominal", BandwidthGBs: 900, FP16TFLOPS: 112, FP16FP32AccTFLOPS: 112, FP32TFLOPS: 14, PowerW: 250, Interconnect: pcie3, InterconnectGBs: 16, SMs: 80, TensorCoresPerSM: 8, FLOPPerClock: 128, BoostMHz: 1380, INT32LanesPerSM: 64, Source: srcV100},
	{Name: "Tesla T4", Aliases: []string{"T4", "NVIDIA T4", "T4 16GB"}, MemoryGiB: 14.74, MemorySource: "log", BandwidthGBs: 320, FP16TFLOPS: 65, FP16FP32AccTFLOPS: 65, INT8TOPS: 130, FP32TFLOPS: 8.1, PowerW: 70, Interconnect: pcie3, InterconnectGBs: 16, SMs: 40, TensorCoresPerSM: 8, FLOPPerClock: 128, BoostMHz: 1590, INT32LanesPerSM: 64, Source: srcT4},
	// GA100: 4 tensor cores per SM, 512 dense FP16 FLOP per clock each.
	{Name: "A100 40GB", Aliases: []string{"A100 SXM4 40GB", "A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"}, MemoryGiB: 39.56, MemorySource: "log", BandwidthGBs: 1555, FP16TFLOPS: 312, FP16FP32AccTFLOPS: 312, INT8TOPS: 624, FP32TFLOPS: 19.5, PowerW: 400, Interconnect: nvl, InterconnectGBs: 600, HostPCIe: pcie4, SMs: 108, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 1410, INT32LanesPerSM: 64, Source: srcGA100},
	{Name: "A100 40GB PCIe", Aliases: []string{"A100 PCIe 40GB", "A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB"}, MemoryGiB: 40, MemorySource: "nominal", BandwidthGBs: 1555, FP16TFLOPS: 312, FP16FP32AccTFLOPS: 312, INT8TOPS: 624, FP32TFLOPS: 19.5, PowerW: 250, Interconnect: nvlBridge, InterconnectGBs: 600, HostPCIe: pcie4, SMs: 108, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 1410, INT32LanesPerSM: 64, Source: srcGA100},
	{Name: "A100 80GB", Aliases: []string{"A100 SXM4 80GB", "A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"}, MemoryGiB: 79.15, MemorySource: "log", BandwidthGBs: 2039, FP16TFLOPS: 312, FP16FP32AccTFLOPS: 312, INT8TOPS: 624, FP32TFLOPS: 19.5, PowerW: 400, Interconnect: nvl, InterconnectGBs: 600, HostPCIe: pcie4, SMs: 108, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 1410, INT32LanesPerSM: 64, Source: srcGA100},
	{Name: "A100 80GB PCIe", Aliases: []string{"A100 PCIe 80GB", "NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"}, MemoryGiB: 80, MemorySource: "nominal", BandwidthGBs: 1935, FP16TFLOPS: 312, FP16FP32AccTFLOPS: 312, INT8TOPS: 624, FP32TFLOPS: 19.5, PowerW: 300, Interconnect: nvlBridge, InterconnectGBs: 600, HostPCIe: pcie4, SMs: 108, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 1410, INT32LanesPerSM: 64, Source: srcGA100},
	// GH100: 4 tensor cores per SM, 1024 dense FP16 FLOP per clock each.
	// The datasheets state tensor figures at a clock below the maximum
	// boost: 1.83 GHz on SXM5 (Hopper whitepaper); the PCIe and NVL
	// figures (756 and 835.5 TFLOPS) follow from 1.62 and 1.545 GHz.
	{Name: "H100 80GB", Aliases: []string{"H100 SXM", "H100 SXM5", "H100 SXM5 80GB", "H100 SXM 80GB", "NVIDIA H100 80GB HBM3"}, MemoryGiB: 79.18, MemorySource: "log", BandwidthGBs: 3350, FP16TFLOPS: 989.4, FP16FP32AccTFLOPS: 989.4, FP8TFLOPS: 1978.9, INT8TOPS: 1978.9, FP32TFLOPS: 66.9, PowerW: 700, Interconnect: nvl, InterconnectGBs: 900, HostPCIe: pcie5, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1830, INT32LanesPerSM: 64, Source: srcH100},
	{Name: "H100 PCIe", Aliases: []string{"H100 PCIe 80GB", "NVIDIA H100 PCIe"}, MemoryGiB: 80, MemorySource: "nominal", BandwidthGBs: 2000, FP16TFLOPS: 756, FP16FP32AccTFLOPS: 756, FP8TFLOPS: 1513, INT8TOPS: 1513, FP32TFLOPS: 51, PowerW: 350, Interconnect: nvlBridge, InterconnectGBs: 600, HostPCIe: pcie5, SMs: 114, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1620, INT32LanesPerSM: 64, Source: srcH100},
	{Name: "H100 NVL", Aliases: []string{"H100 NVL 94GB", "NVIDIA H100 NVL"}, MemoryGiB: 94, MemorySource: "nominal", BandwidthGBs: 3900, FP16TFLOPS: 835.5, FP16FP32AccTFLOPS: 835.5, FP8TFLOPS: 1670.5, INT8TOPS: 1670.5, FP32TFLOPS: 60, PowerW: 400, Interconnect: nvlBridge, InterconnectGBs: 600, HostPCIe: pcie5, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1545, INT32LanesPerSM: 64, Source: srcH100},
	{Name: "H200", Aliases: []string{"H200 SXM", "H200 141GB", "NVIDIA H200"}, MemoryGiB: 141, MemorySource: "nominal", BandwidthGBs: 4800, FP16TFLOPS: 989.4, FP16FP32AccTFLOPS: 989.4, FP8TFLOPS: 1978.9, INT8TOPS: 1978.9, FP32TFLOPS: 67, PowerW: 700, Interconnect: nvl, InterconnectGBs: 900, HostPCIe: pcie5, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1830, INT32LanesPerSM: 64, Source: srcH200},
	{Name: "H200 NVL", Aliases: []string{"NVIDIA H200 NVL"}, MemoryGiB: 141, MemorySource: "nominal", BandwidthGBs: 4800, FP16TFLOPS: 835.5, FP16FP32AccTFLOPS: 835.5, FP8TFLOPS: 1670.5, INT8TOPS: 1670.5, FP32TFLOPS: 60, PowerW: 600, Interconnect: "NVLink bridge (2 or 4 GPUs)", InterconnectGBs: 900, HostPCIe: pcie5, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1545, INT32LanesPerSM: 64, Source: srcH200},
	// GB100 (HGX B200): 4 fifth-generation tensor cores per SM, 2,048
	// dense FP16 FLOP per clock each.
	{Name: "B200", Aliases: []string{"B200 SXM", "B200 180GB", "HGX B200", "NVIDIA B200"}, MemoryGiB: 180, MemorySource: "nominal", BandwidthGBs: 7700, FP16TFLOPS: 2250, FP16FP32AccTFLOPS: 2250, FP8TFLOPS: 4500, INT8TOPS: 4500, FP32TFLOPS: 75, PowerW: 1000, Interconnect: nvl, InterconnectGBs: 1800, HostPCIe: pcie5, SMs: 148, TensorCoresPerSM: 4, FLOPPerClock: 2048, BoostMHz: 1856, INT32LanesPerSM: 64, Source: srcB200},
	// GH200: an H100 SXM5 GPU beside a Grace CPU.
	{Name: "GH200 96GB", Aliases: []string{"GH200 480GB", "NVIDIA GH200 480GB", "GH200 HBM3", "NVIDIA GH200 96GB"}, MemoryGiB: 95.58, MemorySource: "log", BandwidthGBs: 4000, FP16TFLOPS: 989.4, FP16FP32AccTFLOPS: 989.4, FP8TFLOPS: 1978.9, INT8TOPS: 1978.9, FP32TFLOPS: 67, PowerW: 1000, Interconnect: "NVLink-C2C (to the Grace CPU)", InterconnectGBs: 900, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1830, INT32LanesPerSM: 64, Source: srcGH200},
	{Name: "GH200 144GB", Aliases: []string{"GH200 144G HBM3e", "NVIDIA GH200 144G HBM3e", "GH200 HBM3e"}, MemoryGiB: 143.39, MemorySource: "log", BandwidthGBs: 4900, FP16TFLOPS: 989.4, FP16FP32AccTFLOPS: 989.4, FP8TFLOPS: 1978.9, INT8TOPS: 1978.9, FP32TFLOPS: 67, PowerW: 1000, Interconnect: "NVLink-C2C (to the Grace CPU)", InterconnectGBs: 900, SMs: 132, TensorCoresPerSM: 4, FLOPPerClock: 1024, BoostMHz: 1830, INT32LanesPerSM: 64, Source: srcGH200},
	// Blackwell professional (GB202): full-rate FP32 accumulate.
	{Name: "RTX PRO 6000 Blackwell", Aliases: []string{"RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Workstation Edition"}, MemoryGiB: 95.59, MemorySource: "log", BandwidthGBs: 1792, FP16TFLOPS: 500, FP16FP32AccTFLOPS: 500, FP8TFLOPS: 1000, INT8TOPS: 1000, FP32TFLOPS: 125, PowerW: 600, Interconnect: pcie5, InterconnectGBs: 64, SMs: 188, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 2597, INT32LanesPerSM: 128, Source: srcRTXPRO},
	// NVIDIA systems on a chip: the GPU shares LPDDR memory with the CPU;
	// CUDA reports the whole pool, which vLLM's gpu_memory_utilization
	// takes a fraction of like a discrete board's.
	{Name: "Jetson AGX Orin 64GB", Aliases: []string{"Jetson AGX Orin", "AGX Orin 64GB", "Orin"}, MemoryGiB: 64, MemorySource: "nominal", Unified: true, MemoryNote: "64 GB shared by CPU and GPU; CUDA reports the whole pool", BandwidthGBs: 204.8, FP16TFLOPS: 42.5, FP16FP32AccTFLOPS: 42.5, INT8TOPS: 85, FP32TFLOPS: 5.3, PowerW: 60, Interconnect: noLink, SMs: 16, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 1300, INT32LanesPerSM: 64, Source: srcOrin},
	{Name: "Jetson AGX Thor", Aliases: []string{"Jetson Thor", "Jetson AGX Thor T5000", "NVIDIA Thor", "Thor"}, MemoryGiB: 128, MemorySource: "nominal", Unified: true, MemoryNote: "128 GB shared by CPU and GPU; CUDA reports the whole pool", BandwidthGBs: 273, FP16TFLOPS: 258.75, FP16FP32AccTFLOPS: 258.75, FP8TFLOPS: 517.5, FP32TFLOPS: 8, PowerW: 130, Interconnect: noLink, SMs: 20, TensorCoresPerSM: 4, FLOPPerClock: 2048, BoostMHz: 1570, INT32LanesPerSM: 128, Source: srcThor},
	{Name: "DGX Spark", Aliases: []string{"GB10", "NVIDIA GB10", "DGX Spark GB10"}, MemoryGiB: 128, MemorySource: "nominal", Unified: true, MemoryNote: "128 GB shared by CPU and GPU; CUDA reports the whole pool", BandwidthGBs: 273, FP16TFLOPS: 125, FP16FP32AccTFLOPS: 62.5, FP8TFLOPS: 250, INT8TOPS: 250, FP32TFLOPS: 31, PowerW: 140, Interconnect: "ConnectX-7 (2 × 200 GbE)", InterconnectGBs: 50, SMs: 48, TensorCoresPerSM: 4, FLOPPerClock: 128, BoostMHz: 2520, INT32LanesPerSM: 128, Source: srcSpark},
	// AMD Instinct, where vLLM runs on ROCm: compute units count as SMs,
	// 4 matrix cores per CU, 256 (CDNA 2) or 512 (CDNA 3) dense FP16 FLOP
	// per matrix core and clock, FP32 accumulate at the full rate.
	{Name: "Instinct MI300X", Aliases: []string{"MI300X", "AMD Instinct MI300X", "AMD Instinct MI300X OAM", "MI300X OAM"}, Vendor: vendorAMD, MemoryGiB: 192, MemorySource: "nominal", BandwidthGBs: 5300, FP16TFLOPS: 1307.4, FP16FP32AccTFLOPS: 1307.4, FP8TFLOPS: 2614.9, INT8TOPS: 2614.9, FP32TFLOPS: 163.4, PowerW: 750, Interconnect: xgmi, InterconnectGBs: 896, HostPCIe: pcie5, SMs: 304, TensorCoresPerSM: 4, FLOPPerClock: 512, BoostMHz: 2100, INT32LanesPerSM: 64, Source: srcMI300X},
	{Name: "Instinct MI250 GCD", Aliases: []string{"MI250", "AMD Instinct MI250", "Instinct MI250"}, Vendor: vendorAMD, MemoryGiB: 64, MemorySource: "nominal", BandwidthGBs: 1638.4, FP16TFLOPS: 181.05, FP16FP32AccTFLOPS: 181.05, INT8TOPS: 181.05, FP32TFLOPS: 22.65, PowerW: 280, Interconnect: xgmi, InterconnectGBs: 400, HostPCIe: pcie4, SMs: 104, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1700, INT32LanesPerSM: 64, Source: srcMI250},
	{Name: "Instinct MI250X GCD", Aliases: []string{"MI250X", "AMD Instinct MI250X", "Instinct MI250X"}, Vendor: vendorAMD, MemoryGiB: 64, MemorySource: "nominal", BandwidthGBs: 1638.4, FP16TFLOPS: 191.5, FP16FP32AccTFLOPS: 191.5, INT8TOPS: 191.5, FP32TFLOPS: 23.95, PowerW: 280, Interconnect: xgmi, InterconnectGBs: 400, HostPCIe: pcie4, SMs: 110, TensorCoresPerSM: 4, FLOPPerClock: 256, BoostMHz: 1700, INT32LanesPerSM: 64, Source: srcMI250},
	// Apple silicon, for llama.cpp and Ollama on Metal: GPU cores count as
	// SMs, one 128-lane FP32 array each (256 FLOP per clock with FMA), FP16
	// at the FP32 rate; MemoryGiB is Metal's default working set, 75% of
	// the unified memory; Apple states no power limit for the GPU.
	{Name: "Apple M2 Max", Aliases: []string{"M2 Max", "M2 Max 96GB"}, Vendor: vendorApple, MemoryGiB: 72, MemorySource: "unified", Unified: true, MemoryNote: "75% of 96 GB, Metal's recommendedMaxWorkingSetSize", BandwidthGBs: 400, FP16TFLOPS: 13.6, FP16FP32AccTFLOPS: 13.6, FP32TFLOPS: 13.6, Interconnect: noLink, SMs: 38, TensorCoresPerSM: 1, FLOPPerClock: 256, BoostMHz: 1398, Source: srcApple},
	{Name: "Apple M2 Ultra", Aliases: []string{"M2 Ultra", "M2 Ultra 192GB"}, Vendor: vendorApple, MemoryGiB: 144, MemorySource: "unified", Unified: true, MemoryNote: "75% of 192 GB, Metal's recommendedMaxWorkingSetSize", BandwidthGBs: 800, FP16TFLOPS: 27.2, FP16FP32AccTFLOPS: 27.2, FP32TFLOPS: 27.2, Interconnect: noLink, SMs: 76, TensorCoresPerSM: 1, FLOPPerClock: 256, BoostMHz: 1398, Source: srcApple},
	{Name: "Apple M3 Max", Aliases: []string{"M3 Max", "M3 Max 128GB"}, Vendor: vendorApple, MemoryGiB: 96, MemorySource: "unified", Unified: true, MemoryNote: "75% of 128 GB, Metal's recommendedMaxWorkingSetSize; the 40-core GPU part (the 30-core one has 300 GB/s)", BandwidthGBs: 400, FP16TFLOPS: 14.3, FP16FP32AccTFLOPS: 14.3, FP32TFLOPS: 14.3, Interconnect: noLink, SMs: 40, TensorCoresPerSM: 1, FLOPPerClock: 256, BoostMHz: 1398, Source: srcApple},
	{Name: "Apple M3 Ultra", Aliases: []string{"M3 Ultra", "M3 Ultra 512GB"}, Vendor: vendorApple, MemoryGiB: 384, MemorySource: "unified", Unified: true, MemoryNote: "75% of 512 GB, Metal's recommendedMaxWorkingSetSize; the 80-core GPU part", BandwidthGBs: 819, FP16TFLOPS: 28.6, FP16FP32AccTFLOPS: 28.6, FP32TFLOPS: 28.6, Interconnect: noLink, SMs: 80, TensorCoresPerSM: 1, FLOPPerClock: 256, BoostMHz: 1398, Source: srcApple},
	{Name: "Apple M4 Max", Aliases: []string{"M4 Max", "M4 Max 128GB"}, Vendor: vendorApple, MemoryGiB: 96, MemorySource: "unified", Unified: true, MemoryNote: "75% of 128 GB, Metal's recommendedMaxWorkingSetSize; the 40-core GPU part (the 32-core one has 410 GB/s)", BandwidthGBs: 546, FP16TFLOPS: 17.2, FP16FP32AccTFLOPS: 17.2, FP32TFLOPS: 17.2, Interconnect: noLink, SMs: 40, TensorCoresPerSM: 1, FLOPPerClock: 256, BoostMHz: 1678, Source: srcApple},
}

// vendorWords are dropped before names are compared: nvidia-smi prints
// "NVIDIA GeForce RTX 4090", people write "RTX 4090".
var vendorWords = map[string]bool{"nvidia": true, "geforce": true, "tesla": true}

// tokens splits a GPU name into lowercase words, without a parenthetical
// remark ("(MIG 1g.10gb)") and the vendor words.
func tokens(s string) []string {
	if i := strings.IndexByte(s, '('); i > 0 {
		s = s[:i]
	}
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '-' || r == '_' || r == '\t' })
	out := f[:0]
	for _, w := range f {
		if !vendorWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// Key is the name s as Lookup compares it whole: its tokens joined, so
// that spelling does not matter ("NVIDIA GeForce RTX 5070 Ti", "RTX
// 5070 Ti" and "rtx5070ti" are all "rtx5070ti") while every word that
// tells boards apart ("sxm4", "pcie", "ti", "super") is kept.
func Key(s string) string { return strings.Join(tokens(s), "") }

// CanonicalKey is the Key of the catalog entry name resolves to, else of
// name itself: the key under which a figure fitted on one spelling of a
// board applies again to every other spelling.
func CanonicalKey(name string) string {
	if g, err := Lookup(name); err == nil {
		return Key(g.Name)
	}
	return Key(name)
}

// UnknownGPUError is Lookup's error for a name that matches no catalog
// entry (Ambiguous false; Closest are the nearest names) or several
// (Ambiguous true; Closest are those entries).
type UnknownGPUError struct {
	Name      string
	Ambiguous bool
	Closest   []string
}

// Error names the GPU and the candidates in one line.
func (e *UnknownGPUError) Error() string {
	if e.Ambiguous {
		return fmt.Sprintf("GPU %q matches several boards: %s", e.Name, strings.Join(e.Closest, ", "))
	}
	return fmt.Sprintf("unknown GPU %q; closest: %s", e.Name, strings.Join(e.Closest, ", "))
}

// names is every spelling of g Lookup accepts.
func (g GPU) names() []string { return append([]string{g.Name}, g.Aliases...) }

// Lookup finds the one catalog entry name means, in three steps, each
// of which answers as soon as it finds anything:
//  1. the Key of name equals the Key of an entry's name or alias
//     ("NVIDIA A100-SXM4-80GB", "rtx4090");
//  2. name's words end one of an entry's names ("4090" ends "RTX 4090",
//     "4070 Ti" ends "RTX 4070 Ti" but not "RTX 4070 Ti SUPER");
//  3. name's words appear, consecutive and whole, in one of an entry's
//     names ("A100" in "A100 80GB PCIe").
//
// Steps 2 and 3 skip a name with a word that sets a board apart ("Ti",
// "SUPER", "NVL") the query lacks: "RTX 4060" is not the RTX 4060 Ti.
//
// A step that matches several entries refuses the name and lists them;
// a name no step matches gets the three nearest names. The error is an
// *UnknownGPUError either way: a lookup never picks a board by guess.
func Lookup(name string) (GPU, error) {
	k, q := Key(name), tokens(name)
	if k == "" {
		return GPU{}, &UnknownGPUError{Name: name, Closest: closestGPU(name)}
	}
	steps := []func(n string) bool{
		func(n string) bool { return Key(n) == k },
		func(n string) bool {
			t := tokens(n)
			return len(t) >= len(q) && equalWords(t[len(t)-len(q):], q) && !namesOtherSKU(t, q)
		},
		func(n string) bool { t := tokens(n); return containsRun(t, q) && !namesOtherSKU(t, q) },
	}
	for _, match := range steps {
		var hits []GPU
		for _, g := range gpus {
			for _, n := range g.names() {
				if match(n) {
					hits = append(hits, g)
					break
				}
			}
		}
		switch {
		case len(hits) == 1:
			return hits[0], nil
		case len(hits) > 1:
			c := make([]string, len(hits))
			for i, h := range hits {
				c[i] = h.Name
			}
			return GPU{}, &UnknownGPUError{Name: name, Ambiguous: true, Closest: c}
		}
	}
	return GPU{}, &UnknownGPUError{Name: name, Closest: closestGPU(name)}
}

// skuWords tell one board from another of the same number: "RTX 4060"
// is not the "RTX 4060 Ti", "H100" not the "H100 NVL".
var skuWords = map[string]bool{"ti": true, "super": true, "nvl": true, "d": true}

// namesOtherSKU reports whether the entry name t has a SKU word the query
// q lacks.
func namesOtherSKU(t, q []string) bool {
	for _, w := range t {
		if skuWords[w] && !slices.Contains(q, w) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// containsRun reports whether q occurs in t as consecutive whole words.
func containsRun(t, q []string) bool {
	for i := 0; i+len(q) <= len(t); i++ {
		if equalWords(t[i:i+len(q)], q) {
			return true
		}
	}
	return false
}

// All returns a copy of the catalog, in its order.
func All() []GPU {
	out := make([]GPU, len(gpus))
	copy(out, gpus)
	return out
}

// closestGPU returns the three catalog names nearest to name, compared
// by Key.
func closestGPU(name string) []string {
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	sort.Strings(names)
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
