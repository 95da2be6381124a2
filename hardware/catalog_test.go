package hardware

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestLookupGPU matches device names as nvidia-smi, logs and people
// print them to exactly one board.
func TestLookupGPU(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"NVIDIA GeForce RTX 5070 Ti", "GeForce RTX 5070 Ti"},
		{"NVIDIA H100 80GB HBM3", "H100 80GB"},
		{"NVIDIA H100 80GB HBM3 (MIG 1g.10gb)", "H100 80GB"},
		{"H100 80GB", "H100 80GB"},
		{"NVIDIA H100 PCIe", "H100 PCIe"},
		{"H100 PCIe", "H100 PCIe"},
		{"NVIDIA H100 NVL", "H100 NVL"},
		{"NVIDIA A100-SXM4-80GB", "A100 80GB"},
		{"A100 SXM4 80GB", "A100 80GB"},
		{"NVIDIA A100-SXM4-40GB", "A100 40GB"},
		{"NVIDIA A100 80GB PCIe", "A100 80GB PCIe"},
		{"A100 80GB", "A100 80GB"},
		{"A100 40GB", "A100 40GB"},
		{"A10", "A10"},
		{"Tesla T4", "Tesla T4"},
		{"NVIDIA L4", "L4"},
		{"NVIDIA L40S", "L40S"},
		{"L40", "L40"},
		{"NVIDIA GeForce RTX 3060", "GeForce RTX 3060 12GB"},
		{"rtx 4090", "GeForce RTX 4090"},
		{"RTX 4090", "GeForce RTX 4090"},
		{"rtx4090", "GeForce RTX 4090"},
		{"4090", "GeForce RTX 4090"},
		{"3090", "GeForce RTX 3090"},
		{"RTX 4070 Ti", "GeForce RTX 4070 Ti"},
		{"4070 Ti", "GeForce RTX 4070 Ti"},
		{"RTX 4070 Ti SUPER", "GeForce RTX 4070 Ti SUPER"},
		{"NVIDIA H200", "H200"},
		{"H200", "H200"},
		{"RTX A6000", "RTX A6000"},
		{"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada Generation"},
		{"Tesla V100-SXM2-32GB", "Tesla V100 SXM2 32GB"},
	} {
		g, err := Lookup(c.name)
		if err != nil || g.Name != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.name, g.Name, err, c.want)
		}
	}
}

// TestLookupRefuses: a name that matches several boards, or none, is
// refused with the candidates; a lookup never picks another board.
func TestLookupRefuses(t *testing.T) {
	for _, c := range []struct {
		name      string
		ambiguous bool
		want      []string
	}{
		{"A100", true, []string{"A100 40GB", "A100 40GB PCIe", "A100 80GB", "A100 80GB PCIe"}},
		{"H100", true, []string{"H100 80GB", "H100 PCIe"}},
		{"V100", true, []string{"Tesla V100 SXM2 16GB", "Tesla V100 SXM2 32GB", "Tesla V100 PCIe 32GB"}},
		{"RTX 4060", false, nil},
		{"RTX 9090", false, nil},
		{"", false, nil},
	} {
		_, err := Lookup(c.name)
		var ue *UnknownGPUError
		if !errors.As(err, &ue) || ue.Ambiguous != c.ambiguous {
			t.Errorf("Lookup(%q): err %v, want an *UnknownGPUError (ambiguous %v)", c.name, err, c.ambiguous)
			continue
		}
		for _, w := range c.want {
			if !slices.Contains(ue.Closest, w) {
				t.Errorf("Lookup(%q): candidates %q lack %q", c.name, ue.Closest, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Lookup(%q): error %q is more than one line", c.name, err)
		}
	}
}

// TestAliasesUnique: every name and alias resolves to its own entry, and
// no key belongs to two entries.
func TestAliasesUnique(t *testing.T) {
	owner := map[string]string{}
	for _, g := range gpus {
		for _, n := range g.names() {
			k := Key(n)
			if o, ok := owner[k]; ok && o != g.Name {
				t.Errorf("key %q (%q) belongs to %q and %q", k, n, o, g.Name)
			}
			owner[k] = g.Name
			if r, err := Lookup(n); err != nil || r.Name != g.Name {
				t.Errorf("Lookup(%q) = %q, %v; want %q", n, r.Name, err, g.Name)
			}
		}
	}
}

// TestTensorFigures: every entry is complete and its dense FP16 tensor
// figure with FP32 accumulate is SMs × tensor cores per SM × dense FLOP
// per clock × boost clock within 3%; the FP16-accumulate rate is the
// same or twice it, FP8 twice the FP16-accumulate rate where the board
// has FP8.
func TestTensorFigures(t *testing.T) {
	for _, g := range gpus {
		// A system on a chip has no GPU-to-GPU link; Apple states no GPU
		// power limit; a unified-memory board says how much the GPU may use.
		link := g.InterconnectGBs > 0 || g.Interconnect == noLink
		power := g.PowerW > 0 || g.Vendor == vendorApple
		mem := g.MemorySource == "log" || g.MemorySource == "nominal" || (g.MemorySource == "unified" && g.Unified)
		if g.MemoryGiB <= 0 || g.BandwidthGBs <= 0 || g.FP16TFLOPS <= 0 || g.FP32TFLOPS <= 0 || !power ||
			g.Interconnect == "" || !link || g.Source == "" || !mem || (g.Unified && g.MemoryNote == "") {
			t.Errorf("%s: incomplete catalog entry %+v", g.Name, g)
		}
		// every board but a unified-memory one and the Grace-joined GH200
		// has a PCIe link its tensor-parallel ranks may share
		if g.PCIeGBs() <= 0 && !g.Unified && !strings.HasPrefix(g.Interconnect, "NVLink-C2C") {
			t.Errorf("%s: no PCIe bandwidth (interconnect %q, host_pcie %q)", g.Name, g.Interconnect, g.HostPCIe)
		}
		want := float64(g.SMs*g.TensorCoresPerSM*g.FLOPPerClock) * g.BoostMHz * 1e6 / 1e12
		if math.Abs(g.FP16FP32AccTFLOPS/want-1) > 0.03 {
			t.Errorf("%s: FP16 tensor (FP32 accumulate) %.1f TFLOPS, composition gives %.1f", g.Name, g.FP16FP32AccTFLOPS, want)
		}
		if r := g.FP16TFLOPS / g.FP16FP32AccTFLOPS; math.Abs(r-1) > 0.01 && math.Abs(r-2) > 0.02 {
			t.Errorf("%s: FP16 accumulate %.1f is %.2f× the FP32-accumulate rate, want 1× or 2×", g.Name, g.FP16TFLOPS, r)
		}
		if g.FP8TFLOPS > 0 && math.Abs(g.FP8TFLOPS/g.FP16TFLOPS-2) > 0.05 && math.Abs(g.FP8TFLOPS/g.FP16TFLOPS-1) > 0.02 {
			t.Errorf("%s: FP8 %.1f against FP16 %.1f", g.Name, g.FP8TFLOPS, g.FP16TFLOPS)
		}
		if g.FP16FP32AccTFLOPS > 0 && g.FP32TFLOPS > g.FP16FP32AccTFLOPS {
			t.Errorf("%s: FP32 %.1f above tensor %.1f", g.Name, g.FP32TFLOPS, g.FP16FP32AccTFLOPS)
		}
	}
}

// TestNonNVIDIAFigures: the composition AMD's and Apple's own documents
// give. AMD: FP32 vector = CUs × FP32 FLOP per CU and clock (128 on
// CDNA 2, 256 on CDNA 3 with its dual-issue) × peak engine clock, FP8
// twice FP16 where the board has it (CDNA 3). Apple: FP16 and FP32 at
// the one rate of the ALUs, and the memory the GPU may use 75% of the
// unified memory the note names (Metal's recommendedMaxWorkingSetSize).
func TestNonNVIDIAFigures(t *testing.T) {
	n := 0
	for _, g := range gpus {
		switch g.Vendor {
		case vendorAMD:
			n++
			perCU := 128.0
			if g.FP8TFLOPS > 0 {
				perCU = 256
			}
			if want := float64(g.SMs) * perCU * g.BoostMHz * 1e6 / 1e12; math.Abs(g.FP32TFLOPS/want-1) > 0.03 {
				t.Errorf("%s: FP32 %.1f TFLOPS, CUs × %g × clock gives %.1f", g.Name, g.FP32TFLOPS, perCU, want)
			}
		case vendorApple:
			n++
			if g.FP16TFLOPS != g.FP32TFLOPS || g.FP16FP32AccTFLOPS != g.FP32TFLOPS {
				t.Errorf("%s: FP16 %.1f / %.1f, FP32 %.1f; want one rate", g.Name, g.FP16TFLOPS, g.FP16FP32AccTFLOPS, g.FP32TFLOPS)
			}
			var total float64
			if _, err := fmt.Sscanf(g.MemoryNote, "75%% of %g GB", &total); err != nil || math.Abs(g.MemoryGiB-0.75*total) > 0.01 {
				t.Errorf("%s: memory %.1f GiB, note %q: want 75%% of the unified memory", g.Name, g.MemoryGiB, g.MemoryNote)
			}
		}
	}
	if n == 0 {
		t.Fatal("no AMD or Apple entry")
	}
}

// TestRTX3090: the GA102 whitepaper's figures, which an earlier catalog
// halved (it took the FP32 rate, 35.6, for the FP32-accumulate one).
func TestRTX3090(t *testing.T) {
	g, err := Lookup("RTX 3090")
	if err != nil || g.FP16TFLOPS != 142 || g.FP16FP32AccTFLOPS != 71 || g.FP32TFLOPS != 35.6 {
		t.Errorf("RTX 3090 = %+v, %v; want 142 / 71 / 35.6", g, err)
	}
}

// TestUnknownGPUError: the error is typed, so that the CLI can name its
// own flags, and lists the nearest catalog names.
func TestUnknownGPUError(t *testing.T) {
	_, err := Lookup("RTX 9999")
	var ue *UnknownGPUError
	if !errors.As(err, &ue) || ue.Name != "RTX 9999" || len(ue.Closest) != 3 {
		t.Fatalf("err %v, want an *UnknownGPUError with three names", err)
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("error %q names a command-line flag", err)
	}
}

func TestKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"NVIDIA GeForce RTX 5070 Ti", "rtx5070ti"},
		{"GeForce RTX 5070 Ti", "rtx5070ti"},
		{"NVIDIA A100-SXM4-80GB", "a100sxm480gb"},
		{"NVIDIA H100 80GB HBM3 (MIG 1g.10gb)", "h10080gbhbm3"},
	} {
		if got := Key(c.in); got != c.want {
			t.Errorf("Key(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if CanonicalKey("NVIDIA A100-SXM4-80GB") != CanonicalKey("A100 80GB") {
		t.Error("CanonicalKey differs between spellings of one board")
	}
}

// FuzzLookup: any name either resolves to a catalog entry whose own name
// resolves to itself, or is refused with an *UnknownGPUError.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"A100", "rtx4090", "NVIDIA H100 80GB HBM3", "4070 Ti", "(", "--", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := Lookup(s)
		var ue *UnknownGPUError
		if err != nil {
			if !errors.As(err, &ue) {
				t.Fatalf("Lookup(%q): %v", s, err)
			}
			return
		}
		if r, err := Lookup(g.Name); err != nil || r.Name != g.Name {
			t.Fatalf("Lookup(%q) = %q, which does not resolve to itself", s, g.Name)
		}
	})
}
