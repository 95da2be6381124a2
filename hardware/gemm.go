package hardware

import "github.com/servebench/servebench/stats"

// srcZZC is the one benchmark every measured board below ran: the same
// torch.mm script (square N ≤ 10240, random inputs, 10 warm-up and 30
// timed calls, the best size kept), contributed board by board.
const srcZZC = "zzc0721/torch-performance-test-data, database.md (https://github.com/zzc0721/torch-performance-test-data/blob/078586871da31ad6aaaf6fa43bc4ec3f284b151d/database.md) and its per-board issues"

// gemmMeasured are dense BF16 GEMMs with FP32 accumulate (torch.mm, as
// vLLM's and llama.cpp's F16 matrix kernels run them) measured on a
// board, in TFLOPS: one figure per contributed run of srcZZC's script
// (FP16 on the T4, which has no BF16 tensor path). Several runs of one
// board are kept and their median used.
var gemmMeasured = []struct {
	board  string
	tflops []float64
	source string
}{
	{"GeForce RTX 3080 Ti", []float64{76.47}, srcZZC},
	{"GeForce RTX 3090", []float64{76.34, 76.68, 76.58}, srcZZC},
	{"GeForce RTX 4070 SUPER", []float64{76.76, 73.63}, srcZZC},
	{"GeForce RTX 4090", []float64{170.06, 173.31, 162.39, 163.09}, srcZZC + " (24 GB boards; the 48 GB conversions left out)"},
	{"GeForce RTX 5090", []float64{236.03, 242.18}, srcZZC},
	{"RTX A6000", []float64{123.34}, srcZZC},
	{"L4", []float64{70.9}, "zzc0721/torch-performance-test-data issue 120 (https://github.com/zzc0721/torch-performance-test-data/issues/120), best square size"},
	{"L40S", []float64{269.15}, srcZZC},
	{"RTX PRO 6000 Blackwell", []float64{417.98, 409.42}, srcZZC + " (Workstation and Server Edition)"},
	{"Tesla T4", []float64{41.91, 42.71}, srcZZC + " (FP16)"},
	{"A100 40GB", []float64{246.33}, srcZZC},
	{"A100 40GB PCIe", []float64{234.1}, "zzc0721/torch-performance-test-data issue 108 (https://github.com/zzc0721/torch-performance-test-data/issues/108), 4096²"},
	{"A100 80GB", []float64{264.53}, srcZZC},
	{"H100 80GB", []float64{789.24, 783.66}, srcZZC},
	{"H100 PCIe", []float64{495.9}, "zzc0721/torch-performance-test-data issue 95 (https://github.com/zzc0721/torch-performance-test-data/issues/95), 4096²"},
	{"H200", []float64{790.29}, srcZZC},
	{"B200", []float64{1696.03}, srcZZC},
}

// TensorClockRatio is the share of its datasheet tensor rate
// (FP16FP32AccTFLOPS) a long dense GEMM reaches on g, and whether it was
// measured on g. The datasheets state the rate at a boost clock the
// board does not hold under tensor load: boards that run FP32
// accumulate at half rate (GeForce, DGX Spark) stay below their power
// limit and run above that clock (RTX 5090: 1.14, RTX 4090: 1.01), while
// full-rate boards reach their limit and clock down (H100 SXM: 0.79,
// L4: 0.59). An NVIDIA board not measured takes the median ratio of the
// measured boards of its kind; another vendor's board 1 (none measured).
// The ratio scales the board's INT8 and FP8 rates too: the clock is the
// tensor cores' whatever the type.
func (g GPU) TensorClockRatio() (ratio float64, measured bool) {
	if r, ok := gemmRatios()[g.Name]; ok {
		return r, true
	}
	if g.Vendor != "" || !(g.FP16FP32AccTFLOPS > 0) {
		return 1, false
	}
	half, full := gemmMedians()
	if g.halfRateAccumulate() {
		return half, false
	}
	return full, false
}

// SustainedTensorShare is the share of the datasheet tensor rates g
// sustains relative to a board that runs FP32 accumulate at half rate
// (GeForce): TensorClockRatio over the half-rate boards' median, and 1
// for a half-rate board or another vendor's. The simulator's compute
// efficiencies were fitted on GeForce boards (an RTX 5090, an RTX
// 4090), so they hold those boards' clocks already; a full-rate board
// reaches its power limit and runs its tensor cores at this share of
// what the same efficiency gives a GeForce board (H100 SXM 0.74, A100
// SXM 0.79, L4 0.54).
func (g GPU) SustainedTensorShare() float64 {
	if g.Vendor != "" || g.halfRateAccumulate() {
		return 1
	}
	r, _ := g.TensorClockRatio()
	half, _ := gemmMedians()
	return r / half
}

// GEMMSource is the page g's measured GEMM comes from ("" if none).
func (g GPU) GEMMSource() string {
	for _, m := range gemmMeasured {
		if m.board == g.Name {
			return m.source
		}
	}
	return ""
}

// halfRateAccumulate says whether g runs FP16 with FP32 accumulate at
// half its FP16-accumulate rate (GeForce and DGX Spark).
func (g GPU) halfRateAccumulate() bool { return g.FP16FP32AccTFLOPS < g.FP16TFLOPS }

// gemmStats are the measured boards' ratios by catalog name and the
// median ratios of the measured half-rate and full-rate boards, derived
// from gemmMeasured once.
var gemmStats = newGEMMStats()

type gemmSummary struct {
	ratios     map[string]float64
	half, full float64
}

func newGEMMStats() gemmSummary {
	g := gemmSummary{ratios: map[string]float64{}}
	var half, full []float64
	for _, m := range gemmMeasured {
		b, ok := byName(m.board)
		med, some := stats.Percentile(m.tflops, 50)
		if !ok || !some || !(b.FP16FP32AccTFLOPS > 0) {
			continue // TestGEMMMeasured names the row
		}
		r := med / b.FP16FP32AccTFLOPS
		g.ratios[b.Name] = r
		if b.halfRateAccumulate() {
			half = append(half, r)
		} else {
			full = append(full, r)
		}
	}
	g.half, g.full = medianOr1(half), medianOr1(full)
	return g
}

// gemmRatios are the measured boards' ratios, by catalog name.
func gemmRatios() map[string]float64 { return gemmStats.ratios }

// gemmMedians are the median ratios of the measured half-rate and
// full-rate boards.
func gemmMedians() (half, full float64) { return gemmStats.half, gemmStats.full }

// medianOr1 is the median of xs, 1 for none.
func medianOr1(xs []float64) float64 {
	if m, ok := stats.Percentile(xs, 50); ok {
		return m
	}
	return 1
}

// byName is the catalog entry named name exactly.
func byName(name string) (GPU, bool) {
	for _, g := range gpus {
		if g.Name == name {
			return g, true
		}
	}
	return GPU{}, false
}
