package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

// TestSimServeCommand runs `servebench sim serve` as a process: it prints
// its URL, serves a llama.cpp adapter a whole stream with the server's
// timings, and on Ctrl-C (SIGINT) says what it served and exits 0.
func TestSimServeCommand(t *testing.T) {
	cmd := command("sim", "serve", "--as", "llamacpp", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--quant", "q4_k_m",
		"--parallel", "2", "--addr", "127.0.0.1:0", "--seed", "7")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var url string
	select {
	case line := <-lines:
		url = regexp.MustCompile(`http://\S+`).FindString(line)
	case <-time.After(60 * time.Second):
		t.Fatalf("no URL on stdout in 60s; stderr %q", stderr.String())
	}
	if url == "" {
		t.Fatalf("no URL on stdout; stderr %q", stderr.String())
	}
	c, err := backend.New(backend.Config{Kind: backend.LlamaCpp, BaseURL: url, Model: "qwen2.5-7b", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var r record.Result
	c.Do(t.Context(), &backend.Request{Prompt: "hello there", MaxTokens: 20}, &r)
	if !r.OK() || r.OutputTokens == nil || *r.OutputTokens != 20 || r.Server == nil || r.Server.EvalNS == nil {
		t.Errorf("request: %s %s, output %v, server timings %+v", r.Reason, r.Error, r.OutputTokens, r.Server)
	}
	if err := signalAndWait(t, cmd, os.Interrupt, 30*time.Second); err != nil {
		t.Errorf("exit: %v; stderr %q", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "served 1 requests (1 finished, 0 aborted), 20 tokens") {
		t.Errorf("stderr %q: want the summary of the one request", stderr.String())
	}
}

// TestSimServeUsageExit: an unknown GPU is one error line and exit 2.
func TestSimServeUsageExit(t *testing.T) {
	cmd := command("sim", "serve", "--as", "vllm", "--gpu", "RTX 9999", "--model", "qwen2.5-7b")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2", err)
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, `--gpu: unknown GPU "RTX 9999"`) {
		t.Errorf("stderr %q: want one line naming --gpu", msg)
	}
}
