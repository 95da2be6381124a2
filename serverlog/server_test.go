package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
)

// Lines as the servers print them: the Ollama lines from the v0.6.5
// testbed's log (scripts/ollama-testbed), the vLLM line from vLLM 0.8.5's
// start-up (api_server.py logger.info("vLLM API server version %s")), the
// llama.cpp line from common/common.cpp's "build: %d (%s) with %s for %s".
func TestServerVersion(t *testing.T) {
	tests := []struct {
		name string
		kind backend.Kind
		log  string
		want string
	}{
		{"ollama", backend.Ollama, `time=2026-11-29T18:05:19.759Z level=INFO source=routes.go:1298 msg="Listening on 127.0.0.1:20739 (version 0.6.5)"`, "0.6.5"},
		{"vllm", backend.VLLM, "INFO 05-11 09:41:06 [api_server.py:1043] vLLM API server version 0.8.5.post1\nINFO args", "0.8.5.post1"},
		{"vllm with pid prefix", backend.VLLM, "(APIServer pid=15841) INFO 01-21 14:16:50 [api_server.py:1272] vLLM API server version 0.14.0", "0.14.0"},
		{"vllm engine line", backend.VLLM, lineEngineV1, "0.10.1.1"},
		{"llamacpp", backend.LlamaCpp, "build: 4524 (6171c9d2) with cc (GCC) 13.3.0 for x86_64-linux-gnu\nsystem info", "4524 (6171c9d2)"},
		{"no version line", backend.Ollama, "nothing here", ""},
		{"other family's line", backend.LlamaCpp, "vLLM API server version 0.8.5", ""},
		{"tgi not launched", backend.TGI, "anything", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseServer(strings.NewReader(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Version(tc.kind); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestServerVersionSameAsCapacity: the vLLM version of a start-up is read
// by one pattern, whether asked of the server or of its capacity.
func TestServerVersionSameAsCapacity(t *testing.T) {
	for _, n := range allFixtures {
		b := readFixture(t, n)
		s, _ := parseServer(bytes.NewReader(b))
		c, _ := parse(bytes.NewReader(b))
		if s.VLLMVersion != c.VLLMVersion {
			t.Errorf("%s: server says vLLM %q, capacity %q", n, s.VLLMVersion, c.VLLMVersion)
		}
	}
}

func TestServerModelFile(t *testing.T) {
	line := `time=2026-11-29T18:05:20.431Z level=INFO source=server.go:405 msg="starting llama server" cmd="/root/.cache/servebench/ollama-v0.6.5/bin/ollama runner --model /tmp/m/blobs/sha256-6a72 --ctx-size 8192 --batch-size 512 --threads 1 --no-mmap --parallel 4 --port 41467"`
	second := strings.ReplaceAll(line, "6a72", "beef")
	for _, c := range []struct{ name, log, want string }{
		{"one runner", "x\n" + line + "\n", "/tmp/m/blobs/sha256-6a72"},
		{"last runner", line + "\n" + second, "/tmp/m/blobs/sha256-beef"},
		{"no runner", "no runner", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := parseServer(strings.NewReader(c.log))
			if s.ModelFile != c.want {
				t.Errorf("got %q, want %q", s.ModelFile, c.want)
			}
		})
	}
	lg, err := ReadFile(filepath.Join("testdata", "ollama-0.6.5-testbed.log"))
	s := lg.Server
	if err != nil || !strings.Contains(s.ModelFile, "/blobs/sha256-6a7223") {
		t.Errorf("testbed log: model file %q, %v", s.ModelFile, err)
	}
}

// TestParseServerLargeLog: a log of more than 20 MiB is read line by line,
// its overlong lines skipped, and what its first and last lines say is
// found.
func TestParseServerLargeLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.log")
	big := `msg="Listening on 127.0.0.1:1 (version 0.6.5)"` + "\n" + strings.Repeat("x", 20<<20) + "\n" +
		strings.Repeat("request line\n", 1<<16) +
		`msg="starting llama server" cmd="ollama runner --model /last --ctx-size 1"` + "\n"
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	lg, err := ReadFile(path)
	s := lg.Server
	if err != nil || s.OllamaVersion != "0.6.5" || s.ModelFile != "/last" {
		t.Errorf("%+v %v", s, err)
	}
}

// FuzzParseServer: no log, however garbled, panics the server scanner, and
// nothing it finds has whitespace.
func FuzzParseServer(f *testing.F) {
	f.Add(`msg="Listening on 127.0.0.1:1 (version 0.6.5)"`)
	f.Add(`msg="starting llama server" cmd="ollama runner --model /x --ctx-size 1"`)
	f.Add("build: 1 (ab) with cc")
	f.Add(lineAPIVersion)
	f.Fuzz(func(t *testing.T, log string) {
		s, err := parseServer(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{s.OllamaVersion, s.VLLMVersion, s.ModelFile} {
			if strings.ContainsAny(v, " \t\n") {
				t.Errorf("%q has whitespace", v)
			}
		}
	})
}

// TestReadFileOnePass: ReadFile's one pass over a log finds what the
// capacity scanner and the server scanner find, each over it alone, for
// every log of testdata/ (the "# source:" header included, as a file on
// disk has it).
func TestReadFileOnePass(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join("testdata", "*.log"))
	if err != nil || len(logs) < 5 {
		t.Fatalf("testdata logs: %v %v", logs, err)
	}
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			lg, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := parseServer(bytes.NewReader(b))
			if !reflect.DeepEqual(lg.Capacity, c) {
				t.Errorf("capacity\n got %+v\nwant %+v", lg.Capacity, c)
			}
			if lg.Server != s {
				t.Errorf("server\n got %+v\nwant %+v", lg.Server, s)
			}
		})
	}
	if _, err := ReadFile(filepath.Join("testdata", "no-such.log")); err == nil {
		t.Error("missing log: no error")
	}
}
