package launch

import (
	"os"
	"regexp"

	"github.com/servebench/servebench/backend"
)

// Start-up lines that name a server's version, one pattern per family:
//
//	Ollama    `msg="Listening on 127.0.0.1:11434 (version 0.6.5)"` (server/routes.go)
//	vLLM      `vLLM API server version 0.8.5.post1` (entrypoints/openai/api_server.py)
//	llama.cpp `build: 4524 (6171c9d2) with cc (GCC) 13.3.0 for x86_64-linux-gnu`
//	          (common/common.cpp: "build: %d (%s) with %s for %s")
var versionPatterns = map[backend.Kind]*regexp.Regexp{
	backend.Ollama:   regexp.MustCompile(`Listening on \S+ \(version ([^)\s]+)\)`),
	backend.VLLM:     regexp.MustCompile(`vLLM API server version (\S+)`),
	backend.LlamaCpp: regexp.MustCompile(`build: (\d+ \([0-9a-f]+\))`),
}

// LogVersion returns the server version its start-up log names ("0.6.5",
// "0.8.5.post1", "4524 (6171c9d2)"), or "" when no line says.
func LogVersion(kind backend.Kind, log []byte) string {
	re := versionPatterns[kind]
	if re == nil {
		return ""
	}
	if m := re.FindSubmatch(log); m != nil {
		return string(m[1])
	}
	return ""
}

// ollamaRunner matches the line in which Ollama starts its llama.cpp
// runner for a model (server/server.go, v0.6.x):
//
//	msg="starting llama server" cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-… --ctx-size 8192 …"
var ollamaRunner = regexp.MustCompile(`msg="starting llama server" cmd="[^"]*?--model (\S+)`)

// LogModelFile returns the model file of the last runner Ollama started,
// from its log, or "" when none was started.
func LogModelFile(log []byte) string {
	ms := ollamaRunner.FindAllSubmatch(log, -1)
	if len(ms) == 0 {
		return ""
	}
	return string(ms[len(ms)-1][1])
}

// ReadLog reads a server log, at most its first and last 8 MiB (start-up
// lines are at the start; a model loaded late is near the end).
func ReadLog(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const half = 8 << 20
	if st.Size() <= 2*half {
		return os.ReadFile(path)
	}
	head := make([]byte, half)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	tail := make([]byte, half)
	if _, err := f.ReadAt(tail, st.Size()-half); err != nil {
		return nil, err
	}
	return append(append(head, '\n'), tail...), nil
}
