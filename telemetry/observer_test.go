package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
)

// serve answers GET path with body (status 200) and everything else with
// the given status; a loopback stand-in replaying captured outputs.
func serve(t *testing.T, bodies map[string]string, otherwise int) *httptest.Server {
	srv, _ := serveCounting(t, bodies, otherwise)
	return srv
}

// serveCounting is serve that also counts the requests.
func serveCounting(t *testing.T, bodies map[string]string, otherwise int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if b, ok := bodies[r.URL.Path]; ok {
			w.Write([]byte(b))
			return
		}
		w.WriteHeader(otherwise)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestObserverVLLM: the run gets vLLM's KV-cache settings and capacity from
// the real page, each level its KV usage and preemption delta.
func TestObserverVLLM(t *testing.T) {
	srv, hits := serveCounting(t, map[string]string{"/metrics": readTestdata(t, "vllm-v1-metrics-opt125m-cpu.txt")}, http.StatusNotFound)
	ctx := context.Background()
	o, info := Start(ctx, Config{Kind: backend.VLLM, BaseURL: srv.URL + "/v1", ScrapeInterval: 20 * time.Millisecond, GPU: GPUConfig{Mode: GPUNone}})
	defer o.Close()
	if len(info.Warnings) != 0 {
		t.Fatalf("warnings %q", info.Warnings)
	}
	kv := info.KVCache
	if !ptr.Equal(kv.Dtype, ptr.To("auto")) || !ptr.Equal(kv.Blocks, ptr.To(910)) || !ptr.Equal(kv.BlockSize, ptr.To(128)) || !ptr.Equal(kv.GPUMemoryUtilization, f64(0.92)) {
		t.Fatalf("kv_cache %s %s %s %s", show(kv.Dtype), show(kv.Blocks), show(kv.BlockSize), show(kv.GPUMemoryUtilization))
	}
	if info.Capacity == nil || !ptr.Equal(info.Capacity.Tokens, ptr.To(910*128)) {
		t.Fatalf("capacity %+v, want 116480 tokens", info.Capacity)
	}
	if info.GPU != nil || info.GPUGiB != nil {
		t.Fatalf("gpu %s with --gpu none", show(info.GPU))
	}
	o.Begin(ctx)
	for deadline := time.Now().Add(10 * time.Second); hits.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // Start's scrape, then the level's first
	}
	l := o.End(ctx)
	if l == nil || !ptr.Equal(l.PeakKVCacheUsage, f64(0.0011001100110010764)) || !ptr.Equal(l.Preemptions, f64(0)) || !ptr.Equal(l.PeakRequestsRunning, f64(1)) || l.PeakVRAMGiB != nil {
		t.Fatalf("level %+v", l)
	}
}

// TestObserverOllama: no metrics endpoint, no GPU asked: one warning, and
// levels carry nothing.
func TestObserverOllama(t *testing.T) {
	ctx := context.Background()
	o, info := Start(ctx, Config{Kind: backend.Ollama, BaseURL: "http://127.0.0.1:1", GPU: GPUConfig{Mode: GPUNone}})
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "ollama exports no Prometheus metrics") {
		t.Fatalf("warnings %q", info.Warnings)
	}
	o.Begin(ctx)
	if l := o.End(ctx); l != nil {
		t.Fatalf("level %+v from nothing", l)
	}
}

// TestObserverLlamaCppSlots: llama-server without --metrics answers 501;
// busy slots come from the real /slots capture.
func TestObserverLlamaCppSlots(t *testing.T) {
	srv := serve(t, map[string]string{"/slots": readBackendTestdata(t, "llamacpp-b9014-slots.json")}, http.StatusNotImplemented)
	ctx := context.Background()
	o, info := Start(ctx, Config{Kind: backend.LlamaCpp, BaseURL: srv.URL, ScrapeInterval: 20 * time.Millisecond, GPU: GPUConfig{Mode: GPUNone}})
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "--metrics") || !strings.Contains(info.Warnings[0], "/slots") {
		t.Fatalf("warnings %q", info.Warnings)
	}
	o.Begin(ctx)
	time.Sleep(50 * time.Millisecond)
	l := o.End(ctx)
	if l == nil || !ptr.Equal(l.PeakRequestsRunning, f64(1)) || l.PeakKVCacheUsage != nil {
		t.Fatalf("level %+v", l)
	}
}

// TestObserverMetricsAbsent: a vLLM URL whose /metrics is 404 gives one
// warning and no scraping.
func TestObserverMetricsAbsent(t *testing.T) {
	srv := serve(t, nil, http.StatusNotFound)
	o, info := Start(context.Background(), Config{Kind: backend.VLLM, BaseURL: srv.URL, GPU: GPUConfig{Mode: GPUNone}})
	if o.scraper != nil || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "404") {
		t.Fatalf("scraper %v warnings %q", o.scraper, info.Warnings)
	}
}

// TestObserverGPU: the GPU fields from a fake nvidia-smi (device from the
// H100 capture), device-wide and attributed to a server process tree.
func TestObserverGPU(t *testing.T) {
	rs, err := ParseQueryGPU(readTestdata(t, "nvidia-smi-query-gpu-h100.csv"))
	if err != nil {
		t.Fatal(err)
	}
	dev := rs[0]
	line := func(used float64) string { return fmt.Sprintf("0, %s, %g, %g", dev.Name, used, dev.TotalMiB) }
	fakeSMI(t, []string{line(dev.UsedMiB), line(dev.UsedMiB + 1024)}, line(dev.UsedMiB), fmt.Sprintf("%d, 2048\n", os.Getpid()))
	ctx := context.Background()
	other := exec.Command("sleep", "30") // alive, holds no GPU memory
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	tests := []struct {
		name    string
		pid     int
		wantGiB float64
		warn    string
	}{
		{"device", 0, round2((dev.UsedMiB + 1024) / 1024), ""},
		{"server tree", os.Getpid(), 2, ""},
		{"server not on the GPU", other.Process.Pid, round2((dev.UsedMiB + 1024) / 1024), fmt.Sprintf("no GPU memory found for server pid %d", other.Process.Pid)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, info := Start(ctx, Config{Kind: backend.Ollama, MetricsURL: MetricsOff, ScrapeInterval: 30 * time.Millisecond,
				GPU: GPUConfig{Mode: GPUNvidiaSMI, ServerPID: tc.pid}})
			defer o.Close()
			if !ptr.Equal(info.GPU, &dev.Name) || !ptr.Equal(info.GPUGiB, f64(79.65)) || len(info.Warnings) != 0 {
				t.Fatalf("gpu %s %s warnings %q, want %q 79.65 (81559 MiB)", show(info.GPU), show(info.GPUGiB), info.Warnings, dev.Name)
			}
			o.Begin(ctx)
			waitSamples(t, o.levelGPU, 2)
			l := o.End(ctx)
			if l == nil || !ptr.Equal(l.PeakVRAMGiB, f64(tc.wantGiB)) {
				t.Fatalf("level %+v, want peak %g GiB", l, tc.wantGiB)
			}
			if tc.warn == "" && len(l.Warnings) != 0 || tc.warn != "" && (len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], tc.warn)) {
				t.Fatalf("warnings %q, want %q", l.Warnings, tc.warn)
			}
			if m := o.GPUMemoryMiB(ctx); !ptr.Equal(m, f64(dev.UsedMiB)) {
				t.Fatalf("GPUMemoryMiB = %s, want %g", show(m), dev.UsedMiB)
			}
		})
	}
}
