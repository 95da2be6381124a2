package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
)

// The tests run the command itself: the test binary runs main when
// SERVEBENCH_TEST_MAIN is set, so signals and the process's standard
// logger behave as they do for a user.
func TestMain(m *testing.M) {
	if os.Getenv("SERVEBENCH_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// command is servebench with args, as a child process.
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SERVEBENCH_TEST_MAIN=1")
	return cmd
}

func readReport(t *testing.T, path string) document.Document {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d document.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("report %s: %v (%d bytes)", path, err, len(b))
	}
	return d
}

// shortLengthServer is an OpenAI-compatible server, on a raw TCP
// listener, that writes past the Content-Length it declares, as a broken
// proxy does: its answer to GET /v1/models (the probe of the run's
// server, when run identifies it and again before the sweep) is a 404 of
// length 0 followed by a stray chunk. The stray bytes reach the client's
// idle keep-alive connection, and net/http's transport logs them through
// the standard logger. (httptest cannot write past a declared length. The
// probes' connections are the ones to spoil because nothing reuses them:
// on a generation connection the next request may be sent before the
// stray bytes are seen, and they would be read as its answer instead.)
// Streams are answered properly; other paths 404.
func shortLengthServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = bytes.NewBuffer(nil).ReadFrom(req.Body)
					switch {
					case req.Method == http.MethodPost && req.URL.Path == "/v1/chat/completions":
						fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
					case req.URL.Path == "/v1/models":
						fmt.Fprint(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"+
							"data: {\"choices\":[{\"delta\":{\"content\":\"past the declared length\"}}]}\n\n")
					default:
						fmt.Fprint(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestLibraryLogGoesToWarnings: net/http's "Unsolicited response received
// on idle HTTP channel" line, which it writes through the standard logger,
// lands in the run's warnings and not on standard error.
func TestLibraryLogGoesToWarnings(t *testing.T) {
	url := shortLengthServer(t)
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := command("run", "--backend", "openai", "--url", url, "--model", "m", "--concurrency", "1",
		"--requests", "20", "--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "2", "--gpu", "none",
		"--out", report, "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "Unsolicited") {
		t.Errorf("the HTTP library's log reached standard error:\n%s", stderr.String())
	}
	doc := readReport(t, report)
	w := strings.Join(doc.Runs[0].Warnings, "\n")
	if !strings.Contains(w, "library log: Unsolicited response received on idle HTTP channel") {
		t.Errorf("run warnings lack the library's log line:\n%s", w)
	}
}

// signalAndWait sends sig to cmd and returns how it exited; a command
// still running after within is killed and fails the test.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig os.Signal, within time.Duration) error {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		_ = cmd.Process.Kill()
		t.Fatalf("%s did not end within %v of %v", cmd.Args[1], within, sig)
		return nil
	}
}

// TestSIGHUPWritesTheReport: a closed terminal (SIGHUP) ends a run as
// Ctrl-C does: in-flight requests finish, the report is written and marked
// incomplete, and the command exits 0 since requests succeeded.
func TestSIGHUPWritesTheReport(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	cmd := command("run", "--backend", "ollama", "--url", url, "--model", model, "--concurrency", "2",
		"--requests", "100000", "--warmup", "0", "--max-tokens", "16", "--gpu", "none",
		"--out", report, "--records", recs, "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for a few requests to be recorded (header + results).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(recs)
		if bytes.Count(b, []byte("\n")) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no requests recorded in 2 minutes:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := signalAndWait(t, cmd, syscall.SIGHUP, time.Minute); err != nil {
		t.Fatalf("run after SIGHUP: %v\n%s", err, stderr.String())
	}
	doc := readReport(t, report)
	if doc.Complete == nil || *doc.Complete || len(doc.Runs) != 1 || doc.Runs[0].Levels[0].Requests == 0 {
		t.Fatalf("report after SIGHUP: complete %v, runs %d", doc.Complete, len(doc.Runs))
	}
}
