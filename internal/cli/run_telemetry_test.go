package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/stats"
)

func TestRunTelemetryFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:1", "--model", "m"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"gpu mode", []string{"--gpu", "cuda"}, `--gpu: unknown GPU mode "cuda"`},
		{"interval", []string{"--scrape-interval", "1ms"}, "--scrape-interval 1ms"},
		{"gpu index", []string{"--gpu-index", "-1"}, "--gpu-index -1"},
		{"server pid", []string{"--server-pid", "-2"}, "--server-pid -2"},
		{"metrics url", []string{"--metrics-url", "localhost:8000/metrics"}, "--metrics-url:"},
		{"metrics url credentials", []string{"--metrics-url", "http://u:pw@h/metrics"}, "--metrics-url:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := Run(context.Background(), append(slices.Clone(base), c.args...), &out, &errb)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want a one-line *UsageError naming %q", err, c.want)
			}
		})
	}
}

// getJSON reads a JSON answer of the testbed, independently of the code
// under test.
func getJSON(t *testing.T, method, url, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
}

// TestRunTelemetryOnOllama is the acceptance run: against the real Ollama
// testbed the report's run carries the server identity (as the testbed
// itself reports it) and, on a machine without a GPU, null GPU fields with
// one warning; Ollama's lack of metrics is one warning, not an error.
func TestRunTelemetryOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	var ver struct{ Version string }
	getJSON(t, http.MethodGet, url+"/api/version", "", &ver)
	var show struct {
		ModelInfo map[string]any `json:"model_info"`
	}
	getJSON(t, http.MethodPost, url+"/api/show", `{"model":"`+model+`"}`, &show)
	arch, _ := show.ModelInfo["general.architecture"].(string)
	ctxLen, _ := show.ModelInfo[arch+".context_length"].(float64)

	out := filepath.Join(t.TempDir(), "report.json")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--concurrency", "2", "--requests", "4", "--warmup", "1", "--max-tokens", "8", "--quiet", "--out", out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	doc := readDoc(t, out)
	run := doc.Runs[0]
	s := run.Server
	if s == nil || s.Version == nil || *s.Version != ver.Version || run.Runtime == nil || *run.Runtime != "Ollama "+ver.Version {
		t.Fatalf("server %+v runtime %v, want version %q", s, run.Runtime, ver.Version)
	}
	if s.Model == nil || *s.Model != model || s.ContextLength == nil || float64(*s.ContextLength) != ctxLen {
		t.Fatalf("model %v context %v, want %q %v", s.Model, s.ContextLength, model, ctxLen)
	}
	if s.SizeBytes == nil || *s.SizeBytes <= 0 || s.SizeVRAMBytes == nil {
		t.Fatalf("loaded size %v size_vram %v", s.SizeBytes, s.SizeVRAMBytes)
	}
	var gpuWarn, metricsWarn int
	for _, w := range run.Warnings {
		if strings.HasPrefix(w, "gpu:") {
			gpuWarn++
		}
		if strings.Contains(w, "ollama exports no Prometheus metrics") {
			metricsWarn++
		}
	}
	if metricsWarn != 1 {
		t.Errorf("warnings %q: want one about Ollama's missing metrics", run.Warnings)
	}
	if run.GPU == nil {
		if gpuWarn != 1 || run.GPUGiB != nil || doc.GPU != nil {
			t.Errorf("no GPU: gpu_gib %v doc gpu %v, warnings %q; want nulls and one gpu warning", run.GPUGiB, doc.GPU, run.Warnings)
		}
		for _, l := range run.Levels {
			if l.PeakVRAMGiB != nil {
				t.Errorf("level %d peak_vram_gib %v without a GPU", l.Concurrency, *l.PeakVRAMGiB)
			}
		}
	} else if run.GPUGiB == nil || *run.GPUGiB <= 0 || gpuWarn != 0 {
		t.Errorf("GPU %q: gpu_gib %v warnings %q", *run.GPU, run.GPUGiB, run.Warnings)
	}
	for _, l := range run.Levels {
		if l.PeakKVCacheUsage != nil || l.Preemptions != nil {
			t.Errorf("level %d has server metrics Ollama does not export", l.Concurrency)
		}
	}
}

// fakeVLLM is a loopback stand-in for a vLLM server for the overhead
// benchmark: a chat stream in the shape of vLLM's (first content chunk
// after prefill, then one chunk per token every itl), its real /metrics
// page (telemetry/testdata/vllm-v1-metrics-qwen27b-gpu.txt, 58 KB) and
// /v1/models (backend/testdata/vllm-v1-models.json), both as published.
func fakeVLLM(tb testing.TB, prefill, itl time.Duration, tokens int) (*httptest.Server, *atomic.Int64) {
	tb.Helper()
	page, err := os.ReadFile(testenv.RepoFile(tb, "telemetry/testdata/vllm-v1-metrics-qwen27b-gpu.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	models, err := os.ReadFile(testenv.RepoFile(tb, "backend/testdata/vllm-v1-models.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var scrapes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		w.Write(page)
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) { w.Write(models) })
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"version":"loopback"}`)) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		chunk := func(content string, n int, finish string) {
			fin := "null"
			if finish != "" {
				fin = `"` + finish + `"`
			}
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"facebook/opt-125m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":%d,\"completion_tokens\":%d}}\n\n", content, fin, 12+n, n)
			fl.Flush()
		}
		time.Sleep(prefill)
		for i := 1; i <= tokens; i++ {
			if i > 1 {
				time.Sleep(itl)
			}
			fin := ""
			if i == tokens {
				fin = "length"
			}
			chunk(" t", i, fin)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv, &scrapes
}

// BenchmarkScrapeOverhead runs `servebench run` against the loopback vLLM
// stand-in with scraping off and at 250 ms (and 10 ms, 25× more often than
// the default, to make any effect visible), alternating, and reports the
// median over rounds of each setting's TTFT p50 and p95. Run:
//
//	go test ./internal/cli -run '^$' -bench ScrapeOverhead -benchtime 1x
func BenchmarkScrapeOverhead(b *testing.B) {
	const prefill, itl, tokens = 20 * time.Millisecond, 2 * time.Millisecond, 16
	srv, scrapes := fakeVLLM(b, prefill, itl, tokens)
	settings := []struct {
		name string
		args []string
	}{
		{"off", []string{"--metrics-url", "none"}},
		{"250ms", []string{"--scrape-interval", "250ms"}},
		{"10ms", []string{"--scrape-interval", "10ms"}},
	}
	const rounds = 3
	p50 := map[string][]float64{}
	p95 := map[string][]float64{}
	n := map[string]int64{}
	dir := b.TempDir()
	for b.Loop() {
		for r := range rounds {
			for _, s := range settings {
				out := filepath.Join(dir, fmt.Sprintf("%s-%d.json", s.name, r))
				before := scrapes.Load()
				args := append([]string{"run", "--backend", "vllm", "--url", srv.URL, "--model", "facebook/opt-125m",
					"--prompt-tokens", "0", "--max-tokens", fmt.Sprint(tokens), "--concurrency", "8", "--requests", "320",
					"--warmup", "8", "--gpu", "none", "--quiet", "--out", out}, s.args...)
				if _, stderr, err := cliRun(context.Background(), args...); err != nil {
					b.Fatalf("%s: %v\n%s", s.name, err, stderr)
				}
				n[s.name] += scrapes.Load() - before
				doc := readDoc(b, out)
				if len(doc.Runs) == 0 || len(doc.Runs[0].Levels) == 0 {
					b.Fatalf("%s: report %s has no level", s.name, out)
				}
				l := doc.Runs[0].Levels[0]
				p50[s.name] = append(p50[s.name], *l.TTFTP50Ms)
				p95[s.name] = append(p95[s.name], *l.TTFTP95Ms)
			}
		}
	}
	for _, s := range settings {
		b.ReportMetric(median(p50[s.name]), "ttft_p50_ms_"+s.name)
		b.ReportMetric(median(p95[s.name]), "ttft_p95_ms_"+s.name)
		b.Logf("%-6s scrapes %4d  ttft p50 %v  p95 %v", s.name, n[s.name], p50[s.name], p95[s.name])
	}
}

func median(xs []float64) float64 {
	m, _ := stats.Percentile(xs, 50)
	return m
}
