package telemetry

import (
	"context"
	"fmt"
	"github.com/servebench/servebench/internal/ptr"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenGPUNothingThere: no NVML library and no nvidia-smi on PATH give a
// nil sampler and exactly one warning, and the nil sampler is usable.
func TestOpenGPUNothingThere(t *testing.T) {
	if src, err := openNVML(0); err == nil {
		// A machine with a GPU: the same call must find it through NVML.
		src.close()
		g, warns := OpenGPU(context.Background(), GPUConfig{Mode: GPUAuto})
		if g == nil {
			t.Fatalf("NVML loads but OpenGPU found no GPU: %q", warns)
		}
		defer g.Close()
		if dev, ok := g.Device(); !ok {
			t.Fatalf("NVML sampler (%s) reports no device", g.Source())
		} else {
			t.Logf("GPU through %s: %+v", g.Source(), dev)
		}
		return
	}
	t.Setenv("PATH", t.TempDir())
	g, warns := OpenGPU(context.Background(), GPUConfig{Mode: GPUAuto})
	if g != nil {
		t.Fatalf("got a sampler (%s) with no GPU", g.Source())
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "NVML") || !strings.Contains(warns[0], "nvidia-smi") {
		t.Fatalf("warnings = %q, want one naming NVML and nvidia-smi", warns)
	}
	if _, ok := g.Device(); ok {
		t.Fatal("nil sampler reports a device")
	}
	s := g.Begin(context.Background()).End(context.Background())
	if s.PeakUsedMiB != nil || s.AfterMiB != nil || s.Samples != 0 {
		t.Fatalf("nil sampler observed %+v", s)
	}
	g.Close()
}

func TestOpenGPUNone(t *testing.T) {
	g, warns := OpenGPU(context.Background(), GPUConfig{Mode: GPUNone})
	if g != nil || len(warns) != 0 {
		t.Fatalf("--gpu none: sampler %v, warnings %q", g, warns)
	}
}

// fakeSMI writes an nvidia-smi stand-in on PATH: with -lms it prints the
// stream lines (then repeats the last one until killed), with
// --query-compute-apps it prints apps, otherwise the one-shot line. Every
// call's arguments are appended to the returned log file.
func fakeSMI(t *testing.T, stream []string, oneShot string, apps string) (logFile, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	logFile, pidFile = filepath.Join(dir, "args.log"), filepath.Join(dir, "lms.pid")
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	streamFile := write("stream.txt", strings.Join(stream, "\n")+"\n")
	oneFile := write("one.txt", oneShot+"\n")
	appsFile := write("apps.txt", apps)
	last := stream[len(stream)-1]
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> %[1]q
case "$*" in
*--query-compute-apps*) cat %[2]q ;;
*-lms*) echo $$ > %[3]q; cat %[4]q; while :; do sleep 0.05; echo %[5]q; done ;;
*) cat %[6]q ;;
esac
`, logFile, appsFile, pidFile, streamFile, last, oneFile)
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return logFile, pidFile
}

// TestNvidiaSMISampler drives the child-process sampler with a fake
// nvidia-smi whose device (name, total, used) comes from the real H100
// capture testdata/nvidia-smi-query-gpu-h100.csv.
func TestNvidiaSMISampler(t *testing.T) {
	rs, err := ParseQueryGPU(readTestdata(t, "nvidia-smi-query-gpu-h100.csv"))
	if err != nil || len(rs) != 1 {
		t.Fatalf("capture: %v %v", rs, err)
	}
	dev := rs[0]
	line := func(used float64) string {
		return fmt.Sprintf("%d, %s, %g, %g", dev.Index, dev.Name, used, dev.TotalMiB)
	}
	used := dev.UsedMiB
	stream := []string{line(used), line(used + 700), line(used + 1200), line(used + 300)}
	after := used + 100

	// The server's process tree: this test process and a child of it.
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	apps := fmt.Sprintf("%d, 700\n%d, 5000\n", child.Process.Pid, 1) // pid 1 is not in the tree
	logFile, pidFile := fakeSMI(t, stream, line(after), apps)

	ctx := context.Background()
	g, warns := OpenGPU(ctx, GPUConfig{Mode: GPUNvidiaSMI, Index: 0, Interval: 50 * time.Millisecond, ServerPID: os.Getpid()})
	if g == nil {
		t.Fatalf("no sampler: %q", warns)
	}
	defer g.Close()
	got, _ := g.Device()
	if got.Name != dev.Name || got.TotalMiB != dev.TotalMiB {
		t.Fatalf("device = %+v, want name %q total %g", got, dev.Name, dev.TotalMiB)
	}
	l := g.Begin(ctx)
	waitSamples(t, l, len(stream))
	s := l.End(ctx)
	if len(s.Warnings) != 0 {
		t.Fatalf("warnings: %q", s.Warnings)
	}
	if !ptr.Equal(s.PeakUsedMiB, f64(used+1200)) {
		t.Errorf("PeakUsedMiB = %s, want %g", show(s.PeakUsedMiB), used+1200)
	}
	if !ptr.Equal(s.AfterMiB, f64(after)) {
		t.Errorf("AfterMiB = %s, want %g", show(s.AfterMiB), after)
	}
	if !ptr.Equal(s.PeakServerMiB, f64(700)) {
		t.Errorf("PeakServerMiB = %s, want 700 (the child's, not pid 1's)", show(s.PeakServerMiB))
	}
	if s.Samples < len(stream) {
		t.Errorf("Samples = %d, want ≥ %d", s.Samples, len(stream))
	}
	args, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--query-gpu=index,name,memory.used,memory.total,power.draw --format=csv,noheader,nounits -i 0 -lms 50"; !strings.Contains(string(args), want) {
		t.Errorf("nvidia-smi calls:\n%s\nwant one with %q", args, want)
	}
	// The -lms child was stopped with the level.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
		t.Errorf("nvidia-smi -lms (pid %s) still running after End", pid)
	}
}

// TestNvidiaSMIFailing: an nvidia-smi that fails (driver gone) gives no
// sampler and one warning carrying its message.
func TestNvidiaSMIFailing(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	g, warns := OpenGPU(context.Background(), GPUConfig{Mode: GPUNvidiaSMI})
	if g != nil {
		t.Fatal("got a sampler from a failing nvidia-smi")
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "couldn't communicate") {
		t.Fatalf("warnings = %q", warns)
	}
}

func TestProcessTree(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	tree, err := processTree(procRoot, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !tree[os.Getpid()] || !tree[child.Process.Pid] {
		t.Fatalf("tree of %d = %v, want it and child %d", os.Getpid(), tree, child.Process.Pid)
	}
	if tree[1] && os.Getpid() != 1 {
		t.Fatal("tree holds pid 1, an ancestor")
	}
	if _, err := processTree(procRoot, 1<<30); err == nil {
		t.Fatal("no error for a pid that does not exist")
	}
}

func TestParentPID(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int
		ok         bool
	}{
		{"plain", "1234 (vllm) S 77 1234 1234 0 -1", 77, true},
		{"comm with spaces and parens", "99 (python3 (engine) x) R 12 99 99", 12, true},
		{"truncated", "5 (x)", 0, false},
		{"garbage", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parentPID(tc.stat)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("parentPID = %d %v, want %d %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseGPUMode(t *testing.T) {
	for _, m := range GPUModes {
		if got, err := ParseGPUMode(string(m)); err != nil || got != m {
			t.Errorf("ParseGPUMode(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseGPUMode("cuda"); err == nil || !strings.Contains(err.Error(), "nvidia-smi") {
		t.Errorf("ParseGPUMode(cuda) error = %v, want one listing the modes", err)
	}
}

// waitSamples waits (up to 10 s, for a loaded machine) until l has folded
// n device readings.
func waitSamples(t *testing.T, l *LevelGPU, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		got := l.sum.Samples
		l.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d GPU samples after 10 s", n)
}
