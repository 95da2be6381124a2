package serverlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readFixture returns a testdata log without its "# source:" header.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && bytes.HasPrefix(b, []byte("# source:")) {
		b = b[i+1:]
	}
	return b
}

func TestParseFixtures(t *testing.T) {
	type want struct {
		format                      Format
		tokens, blocks, cells, nseq int
		kvMiB, kMiB, availGiB       float64
		weightsGiB, maxConc         float64
		concTokens                  int
		typeK                       string
	}
	cases := []struct {
		name, file string
		want       want
	}{
		{"vLLM V1 0.10.1.1", "vllm-v1-0.10.1.1.log", want{format: VLLM, tokens: 93872, blocks: 5867, availGiB: 5.01, weightsGiB: 14.2488, maxConc: 5.73, concTokens: 16384}},
		{"vLLM V0 phi-4", "vllm-v0-phi4.log", want{format: VLLM, blocks: 715, availGiB: 2.18, weightsGiB: 8.5107, maxConc: 5.59, concTokens: 2048}},
		{"llama.cpp KV self size", "llamacpp-sycl-kvself.log", want{format: LlamaCpp, cells: 1024, kvMiB: 128, kMiB: 64, typeK: "f16"}},
		{"llama.cpp unified", "llamacpp-vulkan-unified.log", want{format: LlamaCpp, cells: 16384, kvMiB: 2048, kMiB: 1024, typeK: "f16"}},
		{"llama.cpp iSWA sums both caches", "llamacpp-iswa-format.log", want{format: LlamaCpp, cells: 8192, kvMiB: 1264, kMiB: 632, typeK: "f16"}},
		{"Ollama 0.6.5 testbed", "ollama-0.6.5-testbed.log", want{format: LlamaCpp, cells: 8192, nseq: 4, kvMiB: 2, kMiB: 1, typeK: "f16"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(bytes.NewReader(readFixture(t, c.file)))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Found() || got.Format != c.want.format {
				t.Fatalf("found=%v format=%q, want %q", got.Found(), got.Format, c.want.format)
			}
			checkInt(t, "tokens", got.Tokens, c.want.tokens)
			checkInt(t, "blocks", got.Blocks, c.want.blocks)
			checkInt(t, "cells", got.Cells, c.want.cells)
			checkInt(t, "n_seq_max", got.NSeq, c.want.nseq)
			checkInt(t, "concurrency tokens", got.ConcurrencyTokens, c.want.concTokens)
			checkFloat(t, "kv MiB", got.KVMiB, c.want.kvMiB)
			checkFloat(t, "K MiB", got.KMiB, c.want.kMiB)
			checkFloat(t, "available KV GiB", got.AvailableKVGiB, c.want.availGiB)
			checkFloat(t, "weights GiB", got.WeightsGiB, c.want.weightsGiB)
			checkFloat(t, "max concurrency", got.MaxConcurrency, c.want.maxConc)
			if got.TypeK != c.want.typeK {
				t.Errorf("type_k %q, want %q", got.TypeK, c.want.typeK)
			}
			if len(got.Lines) == 0 {
				t.Error("no matched lines kept")
			}
		})
	}
}

// TestTokensFor: V0 logs give blocks only; tokens need the block size.
func TestTokensFor(t *testing.T) {
	c, _ := Parse(bytes.NewReader(readFixture(t, "vllm-v0-phi4.log")))
	if n, ok := c.TokensFor(16); !ok || n != 715*16 {
		t.Errorf("TokensFor(16) = %d, %v", n, ok)
	}
	c, _ = Parse(bytes.NewReader(readFixture(t, "vllm-v1-0.10.1.1.log")))
	if n, _ := c.TokensFor(16); n != 93872 {
		t.Errorf("V1 tokens %d", n)
	}
	if d := c.Document("log"); d == nil || *d.Tokens != 93872 || d.Source != "log" {
		t.Errorf("Document = %+v", d)
	}
}

// TestLastStartupWins: a log with two start-ups reports the second.
func TestLastStartupWins(t *testing.T) {
	log := "INFO GPU KV cache size: 1,000 tokens\nINFO GPU KV cache size: 2,000 tokens\n"
	c, _ := Parse(strings.NewReader(log))
	checkInt(t, "tokens", c.Tokens, 2000)
}

func TestNoCapacity(t *testing.T) {
	c, err := Parse(strings.NewReader("hello\nworld\n"))
	if err != nil || c.Found() || c.Document("x") != nil {
		t.Errorf("found capacity in a log without one: %+v %v", c, err)
	}
	if c.String() != "no capacity lines" {
		t.Errorf("String() = %q", c.String())
	}
}

func TestOverlongLineSkipped(t *testing.T) {
	log := strings.Repeat("x", maxLineLen+10) + "\nINFO GPU KV cache size: 7 tokens\n"
	c, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	checkInt(t, "tokens", c.Tokens, 7)
}

// FuzzParse: any bytes parse without panic; found figures are
// non-negative.
func FuzzParse(f *testing.F) {
	for _, n := range []string{"vllm-v1-0.10.1.1.log", "vllm-v0-phi4.log", "llamacpp-sycl-kvself.log", "llamacpp-vulkan-unified.log", "llamacpp-iswa-format.log", "ollama-0.6.5-testbed.log"} {
		f.Add(readFixture(f, n))
	}
	f.Add([]byte("GPU KV cache size: 99999999999999999999999 tokens\nKV self size = 1e400 MiB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*int{c.Tokens, c.Blocks, c.Cells} {
			if p != nil && *p < 0 {
				t.Fatalf("negative figure %d", *p)
			}
		}
	})
}

func checkInt(t *testing.T, name string, got *int, want int) {
	t.Helper()
	switch {
	case want == 0 && got != nil:
		t.Errorf("%s = %d, want none", name, *got)
	case want != 0 && (got == nil || *got != want):
		t.Errorf("%s = %v, want %d", name, deref(got), want)
	}
}

func checkFloat(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	switch {
	case want == 0 && got != nil:
		t.Errorf("%s = %v, want none", name, *got)
	case want != 0 && (got == nil || *got != want):
		t.Errorf("%s = %v, want %v", name, deref(got), want)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
