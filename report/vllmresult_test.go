package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readForeign(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "foreign", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadVLLM(t *testing.T) {
	for _, tc := range []struct {
		file, label, method string
		c                   int
		rate                float64
		tput, ttft50        float64
	}{
		{"vllm-bench-c4.json", "qwen-h100", "pool", 4, 0, 596.3, 48.2},
		{"vllm-bench-c16.json", "qwen-h100", "pool", 16, 0, 1820.4, 95.7},
		{"vllm-bench-rate8.json", "Qwen/Qwen2.5-7B-Instruct", "rate", 8000, 8, 1500, 120},
		{"sglang-style-infinity.json", "sglang-burst", "burst", 200, 0, 2100, 300},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readForeign(t, tc.file)
			if !IsVLLMResult(data) {
				t.Fatal("not recognised")
			}
			doc, err := ReadVLLM(tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			run := doc.Runs[0]
			l := run.Levels[0]
			if run.Label != tc.label || run.Method != tc.method || l.Concurrency != tc.c || *l.ThroughputTokS != tc.tput || *l.TTFTP50Ms != tc.ttft50 {
				t.Fatalf("run %q %s c=%d tput %v ttft %v", run.Label, run.Method, l.Concurrency, *l.ThroughputTokS, *l.TTFTP50Ms)
			}
			if l.Requests != 200 || l.Errors != 2 || *l.TTFTP99Ms != tc.ttft50*2.5 || l.TTFTP95Ms != nil || l.PeakVRAMGiB != nil {
				t.Errorf("level %+v", l)
			}
			if (tc.rate > 0) != (l.RequestedRate != nil) || l.RequestedRate != nil && *l.RequestedRate != tc.rate {
				t.Errorf("requested rate %v, want %v", l.RequestedRate, tc.rate)
			}
			w := strings.Join(run.Warnings, "|")
			for _, want := range []string{"start before the connection is opened", "client tokenizer", "no server telemetry", "lacks [p90_e2el_ms p90_itl_ms p90_tpot_ms p90_ttft_ms p95_e2el_ms"} {
				if !strings.Contains(w, want) {
					t.Errorf("warnings lack %q: %s", want, w)
				}
			}
		})
	}
}

func TestIsVLLMResultRefusesOthers(t *testing.T) {
	for _, s := range []string{`{"runs": []}`, `[1]`, `{"output_throughput": 1}`, `not json`,
		`{"output_throughput": 1, "completed": 2, "model_id": "m", "runs": []}`} {
		if IsVLLMResult([]byte(s)) {
			t.Errorf("%s taken for a vLLM result", s)
		}
	}
	if _, err := ReadVLLM("x.json", []byte(`{"output_throughput": 1, "completed": 2, "model_id": "m", "request_rate": "fast"}`)); err == nil || !strings.Contains(err.Error(), "request_rate") {
		t.Errorf("bad request_rate: %v", err)
	}
}

func FuzzReadVLLM(f *testing.F) {
	for _, n := range []string{"vllm-bench-c4.json", "vllm-bench-rate8.json", "sglang-style-infinity.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "foreign", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !IsVLLMResult(data) {
			return
		}
		doc, err := ReadVLLM("fuzz.json", data)
		if err != nil {
			return
		}
		if len(doc.Runs) != 1 || len(doc.Runs[0].Levels) != 1 || doc.Runs[0].Levels[0].Concurrency < 1 {
			t.Fatalf("doc %+v", doc)
		}
	})
}
