package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/limits"
)

// TestCountBounds: every count from a flag or a trace row has a written
// bound, checked before anything is sized from it, refused in one line
// that names the flag or field and the bound (exit 2). The values are
// those that allocated gigabytes, panicked or wrapped around before.
func TestCountBounds(t *testing.T) {
	simRun := []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b"}
	with := func(args ...string) []string { return append(slices.Clone(simRun), args...) }
	dir := t.TempDir()
	trace := func(name, row string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(row+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	maxTok := strconv.Itoa(limits.MaxTokens)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"max tokens 1e9", with("--max-tokens", "1000000000"), "--max-tokens 1000000000: want 1 to " + maxTok},
		{"max tokens 2^62", with("--max-tokens", "4611686018427387904", "--concurrency", "4"), "--max-tokens 4611686018427387904: want 1 to " + maxTok},
		{"prompt tokens 2^31", with("--prompt-tokens", "2147483648"), "--prompt-tokens 2147483648: want 0 to " + maxTok},
		{"prompt tokens max int", with("--prompt-tokens", "9223372036854775807"), "--prompt-tokens 9223372036854775807"},
		{"requests 1e9", with("--requests", "1000000000"), "--requests 1000000000: at most " + strconv.Itoa(limits.MaxRequests)},
		{"warmup max int", with("--warmup", "9223372036854775807"), "--warmup 9223372036854775807: at most"},
		{"repeats 1e9", with("--repeats", "1000000000"), "--repeats 1000000000: want 1 to " + strconv.Itoa(limits.MaxRepeats)},
		{"trace output tokens", with("--method", "rate", "--trace", trace("out.jsonl", `{"t_ms":0,"input_tokens":4,"output_tokens":4611686018427387904}`)), "field output_tokens: 4611686018427387904, want a token count from 0 to " + maxTok},
		{"trace input tokens", with("--method", "rate", "--trace", trace("in.jsonl", `{"t_ms":0,"input_tokens":2147483648,"output_tokens":4}`)), "field input_tokens: 2147483648"},
		{"kv blocks 2^62", with("--kv-blocks", "4611686018427387904"), "--kv-blocks 4611686018427387904: want 0 to 2147483648"},
		{"azure csv tokens", with("--method", "rate", "--trace", trace("az.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,2147483648,4")), "column ContextTokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantUsageLine(t, c.args, c.want) })
	}
}

// TestSimFitBoundsTheDocument: a document's max_tokens (or prompt
// tokens, requests) past the bounds is one line naming the file, not a
// preallocation of its size.
func TestSimFitBoundsTheDocument(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "huge.json")
	os.WriteFile(doc, []byte(`{"gpu":"RTX 4090","runs":[{"label":"r","backend":"vllm","model":"qwen2.5-7b","prompt_tokens":100,"max_tokens":4611686018427387904,"levels":[{"concurrency":1,"requests":8,"errors":0,"throughput_tok_s":100}]}]}`), 0o644)
	code, _, stderr := run(t, "sim", "fit", doc, "--out", filepath.Join(dir, "p.json"))
	_, line, _ := strings.Cut(stderr, "servebench: ")
	if code != 2 || !strings.Contains(line, "huge.json") || !strings.Contains(line, "max_tokens 4611686018427387904: want 0 to") {
		t.Fatalf("exit %d, stderr %q: want 2 and the bound of max_tokens", code, stderr)
	}
}

// TestScheduleBounds: a rate or trace whose schedule would wait for years
// (or overflow a time.Duration) is refused before the first request, in
// one line naming the flag and the bound; a long list flag is not echoed
// whole.
func TestScheduleBounds(t *testing.T) {
	simRun := []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b"}
	with := func(args ...string) []string { return append(slices.Clone(simRun), args...) }
	dir := t.TempDir()
	trace := func(name, rows string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(rows), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := trace("sparse.jsonl", `{"t_ms":0,"input_tokens":4,"output_tokens":4}`+"\n"+`{"t_ms":100000000000,"input_tokens":4,"output_tokens":4}`+"\n")
	dense := trace("dense.jsonl", `{"t_ms":0,"input_tokens":4,"output_tokens":4}`+"\n"+`{"t_ms":1000,"input_tokens":4,"output_tokens":4}`+"\n")
	think := trace("think.jsonl", `{"t_ms":0,"input_tokens":4,"output_tokens":4,"session":"s","turn":1}`+"\n"+`{"t_ms":10,"input_tokens":4,"output_tokens":4,"session":"s","turn":2,"think_ms":900000000000}`+"\n")
	azure := trace("azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n1855-01-01 00:00:00.0000000,4,4\n2145-01-01 00:00:00.0000000,4,4\n")
	levels := make([]string, 10000)
	for i := range levels {
		levels[i] = strconv.Itoa(i%5000 + 1)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"rate 1e-300", with("--method", "rate", "--rate", "1e-300"), "--rate 1e-300: 74 requests would take"},
		{"rate 1e-6", with("--method", "rate", "--rate", "1e-06"), "more than the 30 days a level may take"},
		{"rate over the cap", with("--method", "rate", "--rate", "1e7"), "up to 1e+06 requests/s"},
		{"trace speed 1e-300", with("--method", "rate", "--trace", dense, "--trace-speed", "1e-300"), "arrivals span"},
		{"trace decades apart", with("--method", "rate", "--trace", sparse), "more than the 30 days a run may take"},
		{"azure rows centuries apart", with("--method", "rate", "--trace", azure), "--trace-window or a higher --trace-speed"},
		{"think time of decades", with("--method", "rate", "--trace", think), "a think time is"},
		{"long concurrency list", with("--concurrency", strings.Join(levels, ",")), "--concurrency: level 1 given twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantUsageLine(t, c.args, c.want)
			_, _, err := cliRun(t.Context(), c.args...)
			if len(err.Error()) > 300 {
				t.Errorf("the error is %d bytes long", len(err.Error()))
			}
		})
	}
}

// TestInterruptedBeforeAnyRequest: a run stopped (Ctrl-C) before its first
// request, as while a trace is parsed, says it was interrupted, not that
// no request succeeded.
func TestInterruptedBeforeAnyRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := cliRun(ctx, "run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--requests", "4", "--concurrency", "1", "--quiet")
	if err == nil || !strings.Contains(err.Error(), "interrupted before any request succeeded") {
		t.Fatalf("err %v", err)
	}
}
