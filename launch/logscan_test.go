package launch

import (
	"os"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
)

// Lines as the servers print them: the Ollama lines from the v0.6.5
// testbed's log (scripts/ollama-testbed), the vLLM line from vLLM 0.8.5's
// start-up (api_server.py logger.info("vLLM API server version %s")), the
// llama.cpp line from common/common.cpp's "build: %d (%s) with %s for %s".
func TestLogVersion(t *testing.T) {
	tests := []struct {
		name string
		kind backend.Kind
		log  string
		want string
	}{
		{"ollama", backend.Ollama, `time=2026-11-29T18:05:19.759Z level=INFO source=routes.go:1298 msg="Listening on 127.0.0.1:20739 (version 0.6.5)"`, "0.6.5"},
		{"vllm", backend.VLLM, "INFO 05-11 09:41:06 [api_server.py:1043] vLLM API server version 0.8.5.post1\nINFO args", "0.8.5.post1"},
		{"vllm with pid prefix", backend.VLLM, "(APIServer pid=15841) INFO 01-21 14:16:50 [api_server.py:1272] vLLM API server version 0.14.0", "0.14.0"},
		{"llamacpp", backend.LlamaCpp, "build: 4524 (6171c9d2) with cc (GCC) 13.3.0 for x86_64-linux-gnu\nsystem info", "4524 (6171c9d2)"},
		{"no version line", backend.Ollama, "nothing here", ""},
		{"other family's line", backend.LlamaCpp, "vLLM API server version 0.8.5", ""},
		{"tgi not launched", backend.TGI, "anything", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LogVersion(tc.kind, []byte(tc.log)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLogModelFile(t *testing.T) {
	line := `time=2026-11-29T18:05:20.431Z level=INFO source=server.go:405 msg="starting llama server" cmd="/root/.cache/servebench/ollama-v0.6.5/bin/ollama runner --model /tmp/m/blobs/sha256-6a72 --ctx-size 8192 --batch-size 512 --threads 1 --no-mmap --parallel 4 --port 41467"`
	if got := LogModelFile([]byte("x\n" + line + "\n")); got != "/tmp/m/blobs/sha256-6a72" {
		t.Errorf("got %q", got)
	}
	second := strings.ReplaceAll(line, "6a72", "beef")
	if got := LogModelFile([]byte(line + "\n" + second)); got != "/tmp/m/blobs/sha256-beef" {
		t.Errorf("last runner: got %q", got)
	}
	if got := LogModelFile([]byte("no runner")); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestReadLogLarge(t *testing.T) {
	path := t.TempDir() + "/big.log"
	big := "first line\n" + strings.Repeat("x", 20<<20) + "\nlast line\n"
	os.WriteFile(path, []byte(big), 0o644)
	b, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 17<<20 || !strings.HasPrefix(string(b), "first line") || !strings.HasSuffix(string(b), "last line\n") {
		t.Errorf("read %d bytes", len(b))
	}
}

// FuzzLogScan: no log, however garbled, panics the version and model-file
// scanners.
func FuzzLogScan(f *testing.F) {
	f.Add(`msg="Listening on 127.0.0.1:1 (version 0.6.5)"`)
	f.Add(`msg="starting llama server" cmd="ollama runner --model /x --ctx-size 1"`)
	f.Add("build: 1 (ab) with cc")
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range backend.Kinds {
			LogVersion(k, []byte(s))
		}
		if m := LogModelFile([]byte(s)); strings.ContainsAny(m, " \t\n") {
			t.Errorf("model file %q has whitespace", m)
		}
	})
}
