package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunInterruptedReadingTrace: Ctrl-C while a trace is read (here, a
// context ended before run starts) says so, rather than "no request
// succeeded" after the whole file was read.
func TestRunInterruptedReadingTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `{"t_ms": %d, "input_tokens": 50, "output_tokens": 4}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := Run(ctx, []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--trace", path}, &out, &errb)
	want := "run: interrupted while reading the trace " + path
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	if code := ExitCode(err, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
}
