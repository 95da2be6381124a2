package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestGPUClass(t *testing.T) {
	for gpu, want := range map[string]string{
		"GeForce RTX 4090": ClassConsumer, "NVIDIA GeForce RTX 3090": ClassConsumer, "RTX 5090": ClassConsumer,
		"RTX A6000": ClassWorkstation, "RTX 6000 Ada Generation": ClassWorkstation, "L40S": ClassWorkstation,
		"RTX 4000 Ada Generation": ClassWorkstation, "NVIDIA RTX 5000 Ada": ClassWorkstation, "RTX 4500 Ada": ClassWorkstation, "RTX 4070 Ti": ClassConsumer,
		"H100 80GB": ClassDatacenter, "A100 40GB": ClassDatacenter, "Tesla T4": ClassDatacenter,
	} {
		if got := GPUClass(gpu); got != want {
			t.Errorf("GPUClass(%q) = %s, want %s", gpu, got, want)
		}
	}
}

// TestAccuracyClaim: the claim of every class and regime quotes that
// pair's figures from the generated file, and is marked outside the
// validated range exactly where the file says the pair is not validated
// (fewer than five cases, or a missed target).
func TestAccuracyClaim(t *testing.T) {
	var f CVFigures
	if err := json.Unmarshal(cvJSON, &f); err != nil {
		t.Fatal(err)
	}
	board := map[string]string{ClassConsumer: "GeForce RTX 4090", ClassWorkstation: "RTX A6000", ClassDatacenter: "H100 80GB"}
	pairs := 0
	for _, g := range f.Groups {
		if g.Class == "" || g.Regime == "" {
			continue
		}
		pairs++
		claim := AccuracyClaim(board[g.Class], g.Regime)
		want := fmt.Sprintf("%d published %s-GPU", g.Cases, g.Class)
		if g.Cases == 0 {
			want = fmt.Sprintf("no published %s-GPU", g.Class)
		}
		if !strings.Contains(claim, want) {
			t.Errorf("%s/%s: claim %q lacks %q", g.Class, g.Regime, claim, want)
		}
		if g.Throughput.N > 0 && !strings.Contains(claim, fmt.Sprintf("throughput median |error| %.0f%%", 100*g.Throughput.MedAbs)) {
			t.Errorf("%s/%s: claim %q does not quote throughput %.0f%%", g.Class, g.Regime, claim, 100*g.Throughput.MedAbs)
		}
		if marked := strings.Contains(claim, "outside the validated range"); marked == g.Validated {
			t.Errorf("%s/%s: validated %v, claim %q", g.Class, g.Regime, g.Validated, claim)
		}
		if g.Cases < 5 && g.Validated {
			t.Errorf("%s/%s: %d cases marked validated", g.Class, g.Regime, g.Cases)
		}
	}
	if pairs != 12 {
		t.Errorf("%d class/regime pairs in the file, want 3 classes x 4 regimes", pairs)
	}
	if c := AccuracyClaim("H100 80GB", "no_such_regime"); !strings.Contains(c, "outside the validated range") {
		t.Errorf("unknown regime: %q", c)
	}
}
