package hardware

import (
	"errors"
	"strings"
	"testing"
)

// TestLookupGPU matches device names as nvidia-smi and logs print them.
func TestLookupGPU(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"NVIDIA GeForce RTX 5070 Ti", "GeForce RTX 5070 Ti"},
		{"NVIDIA H100 80GB HBM3", "H100 80GB"},
		{"NVIDIA A100-SXM4-80GB", "A100 80GB"},
		{"NVIDIA A100-SXM4-40GB", "A100 40GB"},
		{"Tesla T4", "Tesla T4"},
		{"NVIDIA L4", "L4"},
		{"NVIDIA L40S", "L40S"},
		{"NVIDIA GeForce RTX 3060", "GeForce RTX 3060 12GB"},
		{"rtx 4090", "GeForce RTX 4090"},
		{"NVIDIA H200", "H200"},
	} {
		g, err := Lookup(c.name)
		if err != nil || g.Name != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.name, g.Name, err, c.want)
		}
	}
	if _, err := Lookup("RTX 9090"); err == nil || !strings.Contains(err.Error(), "closest") {
		t.Errorf("unknown GPU: %v", err)
	}
	for _, g := range gpus {
		if g.MemoryGiB <= 0 || g.BandwidthGBs <= 0 || g.FP16TFLOPS <= 0 {
			t.Errorf("%s: incomplete catalog entry %+v", g.Name, g)
		}
	}
}

// TestUnknownGPUError: the error is typed, so that the CLI can name its
// own flag, and lists the nearest catalog names.
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
		{"NVIDIA A100-SXM4-80GB", "a10080gb"},
		{"NVIDIA H100 80GB HBM3 (MIG 1g.10gb)", "h10080gb"},
	} {
		if got := Key(c.in); got != c.want {
			t.Errorf("Key(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
