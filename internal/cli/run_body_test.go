package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHeaderValueInNoOutput plants a header whose value a server echoes
// (a loopback server in vLLM's shapes that echoes it in every other
// request's error and in its /metrics page, as a misconfigured proxy
// might; a real server does not), and greps every output for it: the
// records, the run's document, its standard output and error, and the
// report in every format. The value must be nowhere; the header's name
// is recorded.
func TestHeaderValueInNoOutput(t *testing.T) {
	const secret = "tenant-9f8e7d6c5b4a"
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tenant") != secret {
			http.Error(w, "no tenant", http.StatusUnauthorized)
			return
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			io.Copy(io.Discard, r.Body)
			if n.Add(1)%2 == 0 {
				http.Error(w, `{"error": "tenant `+secret+` over quota"}`, http.StatusTooManyRequests)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
		default:
			http.Error(w, "tenant "+secret+" may not see "+r.URL.Path, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	doc, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	stdout, stderr, err := cliRun(context.Background(), "run", "--backend", "vllm", "--url", srv.URL, "--model", "m",
		"--header", "X-Tenant: "+secret, "--temperature", "0.5", "--concurrency", "1", "--requests", "6", "--warmup", "0",
		"--prompt-tokens", "0", "--max-tokens", "1", "--gpu", "none", "--out", doc, "--records", recs)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	outputs := map[string]string{"stdout": stdout, "stderr": stderr}
	for _, p := range []string{doc, recs} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(p)] = string(b)
	}
	for _, format := range reportFormats {
		out, errOut, err := cliRun(context.Background(), "report", "--format", format, doc, recs)
		if err != nil {
			t.Fatalf("report --format %s: %v\n%s", format, err, errOut)
		}
		outputs["report "+format] = out + errOut
	}
	for name, text := range outputs {
		if strings.Contains(text, secret) || strings.Contains(text, secret[7:]) {
			t.Errorf("%s holds the header's value", name)
		}
	}
	if !strings.Contains(outputs["records.jsonl"], "[redacted]") {
		t.Error("records: the echoed value is not marked [redacted]")
	}
	run := readDoc(t, doc).Runs[0]
	if !slices.Equal(run.Headers, []string{"X-Tenant: [redacted]"}) || run.Sampling != "temperature=0.5" {
		t.Errorf("run headers %q, sampling %q", run.Headers, run.Sampling)
	}
}

func TestRunBodyFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:9", "--model", "m"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--extra-body", "[1]"}, "--extra-body: want one JSON object"},
		{[]string{"--extra-body", "@/nonexistent/x.json"}, "--extra-body: open"},
		{[]string{"--extra-body", `{"max_tokens": 5}`}, `sets "max_tokens", which servebench sets from --max-tokens`},
		{[]string{"--header", "NoColon"}, `--header "NoColon"`},
		{[]string{"--header", "Authorization: Bearer sk-x"}, "use --api-key"},
		{[]string{"--ignore-eos", "maybe"}, `--ignore-eos "maybe": want auto, on or off`},
		{[]string{"--top-p", "1.5"}, "--top-p 1.5"},
		{[]string{"--top-k", "0"}, "--top-k 0"},
		{[]string{"--temperature", "-1"}, "--temperature -1"},
		{[]string{"--stop", ""}, "empty stop sequence"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := cliRun(context.Background(), append(slices.Clone(base), tc.args...)...)
			if err == nil || ExitCode(err, new(strings.Builder)) != 2 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v; want one line, exit 2, with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk-x") {
				t.Errorf("error shows the header value: %v", err)
			}
		})
	}
}
