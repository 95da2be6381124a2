package sim

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// GPU classes, the grouping the accuracy targets (docs/accuracy.md) use.
const (
	ClassConsumer    = "consumer"    // GeForce
	ClassWorkstation = "workstation" // RTX A-series, RTX Ada, RTX PRO, L40/L40S, A40
	ClassDatacenter  = "datacenter"  // T4, L4, A10, A100, H100, H200, B200, MI300X...
)

// workstationPrefixes are the (lower-case) names of NVIDIA's professional
// visualisation boards, the workstation class.
var workstationPrefixes = []string{"rtx a", "rtx 6000 ada", "rtx 5000 ada", "rtx 4000 ada", "rtx 4500 ada", "rtx 2000 ada", "rtx pro", "l40", "a40", "quadro"}

// GPUClass is the class of a board named as NVIDIA (or the catalog)
// names it.
func GPUClass(gpu string) string {
	g := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(gpu), "NVIDIA "))
	// The workstation names first: "RTX 4000 Ada" begins as "RTX 40…" does.
	for _, p := range workstationPrefixes {
		if strings.HasPrefix(g, p) {
			return ClassWorkstation
		}
	}
	if strings.HasPrefix(g, "geforce") || strings.HasPrefix(g, "rtx 30") || strings.HasPrefix(g, "rtx 40") || strings.HasPrefix(g, "rtx 50") {
		return ClassConsumer
	}
	return ClassDatacenter
}

// CVMetric is one metric's cross-validated error over a group: points,
// median |error| and bias (median signed error).
type CVMetric struct {
	N      int     `json:"n"`
	MedAbs float64 `json:"median_abs_error"`
	Bias   float64 `json:"bias"`
}

// CVGroup is the cross-validated accuracy of one GPU class and load
// regime (either empty: all of them) on the public calibration corpus.
type CVGroup struct {
	Class      string   `json:"class,omitempty"`
	Regime     string   `json:"regime,omitempty"`
	Cases      int      `json:"cases"`
	Throughput CVMetric `json:"throughput"`
	TPOT       CVMetric `json:"tpot"`
	TTFT       CVMetric `json:"ttft"`
	Validated  bool     `json:"validated"`
}

// CVFigures is the file `go run ./sim/accuracy` writes beside
// docs/accuracy.md (sim/accuracy_cv.json, held current by its test).
type CVFigures struct {
	GeneratedBy string    `json:"generated_by"`
	Groups      []CVGroup `json:"groups"`
}

//go:embed accuracy_cv.json
var cvJSON []byte

// AccuracyClaim is the sentence every printed prediction carries about
// its accuracy: the leave-one-source-out figures of its GPU class and
// load regime ("single_stream", "closed_loop", "rate", "burst") from the
// generated file, and "outside the validated range" where that pair has
// fewer than five cases or misses the target.
func AccuracyClaim(gpu, regime string) string {
	class := GPUClass(gpu)
	var f CVFigures
	if err := json.Unmarshal(cvJSON, &f); err != nil {
		return "accuracy unknown (sim/accuracy_cv.json: " + err.Error() + "): outside the validated range"
	}
	for _, g := range f.Groups {
		if g.Class != class || g.Regime != regime || g.Cases == 0 {
			continue
		}
		s := fmt.Sprintf("cross-validated on %d published %s-GPU %s cases (docs/accuracy.md): throughput %s, TPOT %s, TTFT %s",
			g.Cases, class, strings.ReplaceAll(regime, "_", " "), claimCell(g.Throughput), claimCell(g.TPOT), claimCell(g.TTFT))
		if !g.Validated {
			s += "; outside the validated range"
		}
		return s
	}
	return fmt.Sprintf("no published %s-GPU %s case in docs/accuracy.md: outside the validated range", class, strings.ReplaceAll(regime, "_", " "))
}

// claimCell is a metric as "median |error| 22%, bias +18%", or "–".
func claimCell(m CVMetric) string {
	if m.N == 0 {
		return "–"
	}
	return fmt.Sprintf("median |error| %.0f%% bias %+.0f%%", 100*m.MedAbs, 100*m.Bias)
}
