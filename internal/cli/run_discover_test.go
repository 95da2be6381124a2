package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
)

// quickSweep is a short sweep for the tests of finding the server: they
// check what was found and where the result went, not the figures.
var quickSweep = []string{"--concurrency", "1,2", "--requests", "4", "--warmup", "1", "--max-tokens", "8"}

// deadURL is a loopback address where nothing listens.
func deadURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// replayServer answers GETs with bodies by path (404 for the rest); it
// stands in for the servers that cannot run here (vLLM), answering as
// their identity endpoints do (bodies named in backend/discover_test.go).
func replayServer(t *testing.T, bodies map[string]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if r.Method != http.MethodGet || !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// vllmBodies are a vLLM's identity answers: the published /v1/models of
// backend/testdata/vllm-v1-models.json (trimmed to its id and owned_by)
// and /version as vLLM's api_server writes it.
var vllmBodies = map[string]string{
	"/version":   `{"version":"0.10.1"}`,
	"/v1/models": `{"object":"list","data":[{"id":"facebook/opt-125m","object":"model","owned_by":"vllm"}]}`,
}

// runDeps runs servebench in-process with deps, returning stdout, stderr
// and the error.
func runDeps(ctx context.Context, deps Deps, args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := deps.Run(ctx, args, &out, &errb)
	return out.String(), errb.String(), err
}

// TestRunFindsBackendAndModel: `run --url` alone on the real testbed
// recognises Ollama, takes its only model, says so once and records it.
func TestRunFindsBackendAndModel(t *testing.T) {
	url, model := testenv.Ollama(t)
	report := filepath.Join(t.TempDir(), "report.json")
	_, stderr, err := cliRun(context.Background(), append([]string{"run", "--url", url, "--out", report}, quickSweep...)...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	line := "servebench: found Ollama 0.6.5 at " + url + " serving " + model + "\n"
	if strings.Count(stderr, "servebench: found ") != 1 || !strings.Contains(stderr, line) {
		t.Errorf("stderr does not say once %q:\n%s", line, stderr)
	}
	run := readDoc(t, report).Runs[0]
	if run.Backend != "ollama" || run.Model != model || run.Label != "ollama-text" || len(run.Levels) != 2 || run.Levels[1].Errors != 0 {
		t.Fatalf("run %s backend %s model %s, %d levels", run.Label, run.Backend, run.Model, len(run.Levels))
	}
	want := record.Discovery{Server: "Ollama 0.6.5", Backend: "ollama", BackendBy: "GET /api/version", Model: model, ModelBy: "GET /api/tags"}
	if run.Server == nil || run.Server.Discovered == nil || !equalDiscovery(*run.Server.Discovered, want) {
		t.Fatalf("server.discovered %+v, want %+v", run.Server, want)
	}
}

func equalDiscovery(a, b record.Discovery) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestRunScansLocalPorts: without --url, run looks at Deps.LocalServers
// (here a dead port and the testbed's, so the test does not depend on
// what else listens on this machine's usual ports).
func TestRunScansLocalPorts(t *testing.T) {
	url, model := testenv.Ollama(t)
	dead := deadURL(t)
	deps := Deps{LocalServers: []backend.Candidate{{URL: dead, Kinds: []backend.Kind{backend.VLLM}}, {URL: url, Kinds: []backend.Kind{backend.Ollama}}}}
	report := filepath.Join(t.TempDir(), "report.json")
	_, stderr, err := runDeps(context.Background(), deps, append([]string{"run", "--out", report}, quickSweep...)...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	d := readDoc(t, report).Runs[0].Server.Discovered
	if d == nil || d.URL != url || strings.Join(d.Scanned, " ") != dead+" "+url || d.Backend != "ollama" || d.Model != model {
		t.Fatalf("discovered %+v", d)
	}
}

func TestRunScanErrors(t *testing.T) {
	url, _ := testenv.Ollama(t)
	dead1, dead2 := deadURL(t), deadURL(t)
	vllm := replayServer(t, vllmBodies)
	cases := []struct {
		name  string
		local []backend.Candidate
		args  []string
		code  int
		want  string
	}{
		{"nothing listens", []backend.Candidate{{URL: dead1, Kinds: []backend.Kind{backend.VLLM}}, {URL: dead2, Kinds: []backend.Kind{backend.LlamaCpp, backend.TGI}}}, nil, 1,
			"no LLM server found on this machine: looked for vLLM at " + hostPort(dead1) + ", llama.cpp or TGI at " + hostPort(dead2) + " (connection refused everywhere); start one, or give --url"},
		{"two servers", []backend.Candidate{{URL: vllm}, {URL: url}}, nil, 2,
			"found 2 servers on this machine: vLLM 0.10.1 at " + vllm + ", Ollama 0.6.5 at " + url + "; choose one with --url"},
		{"only other families", []backend.Candidate{{URL: vllm}, {URL: dead1}}, []string{"--backend", "ollama"}, 1,
			"looked for Ollama at " + hostPort(vllm) + " (vLLM 0.10.1, not Ollama), Ollama at " + hostPort(dead1) + " (connection refused)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			_, _, err := runDeps(context.Background(), Deps{LocalServers: c.local}, append([]string{"run", "--out", report}, c.args...)...)
			if err == nil || ExitCode(err, io.Discard) != c.code || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v (exit %d), want one line with exit %d containing %q", err, ExitCode(err, io.Discard), c.code, c.want)
			}
			if _, err := os.Stat(report); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a report was written: %v", err)
			}
		})
	}
	// Told the family, the scan picks the one server of that family.
	report := filepath.Join(t.TempDir(), "report.json")
	_, stderr, err := runDeps(context.Background(), Deps{LocalServers: []backend.Candidate{{URL: vllm}, {URL: url}}},
		append([]string{"run", "--backend", "ollama", "--out", report}, quickSweep...)...)
	if err != nil {
		t.Fatalf("--backend ollama with a vLLM beside it: %v\n%s", err, stderr)
	}
	if d := readDoc(t, report).Runs[0].Server.Discovered; d == nil || d.URL != url || d.Backend != "" {
		t.Fatalf("discovered %+v, want the testbed's URL and no backend (it was given)", d)
	}
}

// TestRunModelErrors: a wrong --model lists the served ones; a server with
// several models asks for --model and lists them.
func TestRunModelErrors(t *testing.T) {
	url, model := testenv.Ollama(t)
	several := replayServer(t, map[string]string{
		"/v1/models": `{"object":"list","data":[{"id":"model-id-0","object":"model","owned_by":"organization-owner"},{"id":"model-id-1","object":"model","owned_by":"organization-owner"}]}`,
	})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"wrong model, backend found", []string{"--url", url, "--model", "nope"}, `--model "nope": Ollama 0.6.5 at ` + url + " does not serve it; it serves " + model},
		{"wrong model, ollama given", []string{"--url", url, "--backend", "ollama", "--model", "nope:7b"}, "it serves " + model},
		{"wrong model, OpenAI API of Ollama", []string{"--url", url + "/v1", "--backend", "openai", "--model", "nope"}, "it serves " + model + ":latest"},
		{"several models", []string{"--url", several}, "--model is required: an OpenAI-compatible server at " + several + " serves 2 models: model-id-0, model-id-1"},
		{"completions on ollama", []string{"--url", url, "--backend", "ollama", "--api", "completions"}, `--api "completions": backend ollama takes chat or generate`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := cliRun(context.Background(), append([]string{"run"}, c.args...)...)
			if err == nil || ExitCode(err, io.Discard) != 2 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want exit 2 containing %q", err, c.want)
			}
		})
	}
}

// TestRunRefusedURL: nothing at --url says what was looked for there.
func TestRunRefusedURL(t *testing.T) {
	dead := deadURL(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--url", dead}, "no server at " + dead + " (connection refused): looked there for vLLM, SGLang, llama.cpp, TGI, Ollama or any OpenAI-compatible server; start the server or check --url"},
		{[]string{"--url", dead, "--backend", "sglang", "--model", "m"}, "no server at " + dead + " (connection refused): looked there for SGLang;"},
	}
	for _, c := range cases {
		_, _, err := cliRun(context.Background(), append([]string{"run"}, c.args...)...)
		if err == nil || ExitCode(err, io.Discard) != 1 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
		}
	}
}

// TestRunOnTerminalEndsWithTable runs servebench as on a terminal (its
// standard output and error a real pseudo-terminal) in an empty folder: it
// must end with exactly the table `servebench report FILE --slo ...`
// prints, write the document to servebench-YYYYMMDD-HHMMSS.json there and
// say so.
func TestRunOnTerminalEndsWithTable(t *testing.T) {
	url, _ := testenv.Ollama(t)
	controller, term := testenv.PTY(t)
	dir := t.TempDir()
	t.Chdir(dir)
	var shown bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&shown, controller) // until the terminal side closes (EIO)
	}()
	args := append([]string{"run", "--url", url, "--slo", "ttft_p95=10s"}, quickSweep...)
	err := Run(context.Background(), args, term, term)
	term.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the pseudo-terminal did not close")
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, shown.String())
	}
	files, _ := filepath.Glob("*")
	if len(files) != 1 || !regexp.MustCompile(`^servebench-\d{8}-\d{6}\.json$`).MatchString(files[0]) {
		t.Fatalf("files in the folder: %q, want one servebench-YYYYMMDD-HHMMSS.json", files)
	}
	doc := readDoc(t, files[0])
	if len(doc.Runs) != 1 || doc.Runs[0].Server.Discovered == nil {
		t.Fatalf("the default file holds %d runs, discovered %+v", len(doc.Runs), doc.Runs[0].Server)
	}
	// report fits its text to $COLUMNS off a terminal: the terminal's
	// 160 (testenv.PTY).
	t.Setenv("COLUMNS", "160")
	var table bytes.Buffer
	if err := Run(context.Background(), []string{"report", files[0], "--slo", "ttft_p95=10s"}, &table, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The terminal turns each "\n" into "\r\n".
	got := strings.ReplaceAll(shown.String(), "\r\n", "\n")
	tail := table.String() + "\nservebench: the full result is in " + files[0] + " (servebench report " + files[0] + " shows it again; --wide for every column)\n"
	if !strings.HasSuffix(got, tail) {
		t.Fatalf("the terminal does not end with report's table and the file's name:\n--- terminal\n%s\n--- want at its end\n%s", got, tail)
	}
	for _, want := range []string{"servebench: found Ollama", "c=2", "ETA", "ttft_p95"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal shows no %q", want)
		}
	}
}

// TestRunPipedWritesJSON: with standard output a pipe, the document goes
// there alone, as before, and no file is written.
func TestRunPipedWritesJSON(t *testing.T) {
	url, model := testenv.Ollama(t)
	t.Chdir(t.TempDir())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&out, r)
	}()
	var stderr bytes.Buffer
	err = Run(context.Background(), append([]string{"run", "--url", url, "--slo", "ttft_p95=10s"}, quickSweep...), w, &stderr)
	w.Close()
	<-read
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(&out)
	var doc document.Document
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a document: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than the document: %v", err)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Model != model || len(doc.Runs[0].Levels) != 2 {
		t.Fatalf("document %+v", doc.Runs)
	}
	if files, _ := filepath.Glob("*"); len(files) != 0 {
		t.Fatalf("a piped run wrote %q", files)
	}
}

func TestResultOutput(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 5, 0, time.Local)
	cases := []struct {
		name      string
		out       string
		terminal  bool
		wantPath  string
		wantTable bool
	}{
		{"terminal, no --out", "", true, "servebench-20261201-093005.json", true},
		{"pipe, no --out", "", false, "-", false},
		{"terminal, --out file", "r.json", true, "r.json", true},
		{"pipe, --out file", "r.json", false, "r.json", false},
		{"terminal, --out -", "-", true, "-", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, table := resultOutput(c.out, c.terminal, now)
			if path != c.wantPath || table != c.wantTable {
				t.Errorf("resultOutput(%q, %v) = %q, %v; want %q, %v", c.out, c.terminal, path, table, c.wantPath, c.wantTable)
			}
		})
	}
}
