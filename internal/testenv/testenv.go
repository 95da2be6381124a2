// Package testenv gives tests the real parts they need (the Ollama testbed,
// a browser) and decides what happens when a part is missing: skip on a
// laptop, fail under .ci/run (which sets SERVEBENCH_STRICT=1), so CI can
// never pass by skipping.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Ollama returns the URL and model name of the Ollama testbed that
// scripts/ollama-testbed started (SERVEBENCH_OLLAMA_URL and
// SERVEBENCH_OLLAMA_MODEL). Without them the test is skipped, or fails when
// SERVEBENCH_STRICT=1.
func Ollama(t testing.TB) (url, model string) {
	t.Helper()
	url, model = os.Getenv("SERVEBENCH_OLLAMA_URL"), os.Getenv("SERVEBENCH_OLLAMA_MODEL")
	if url == "" || model == "" {
		Missing(t, "integration test needs the Ollama testbed: SERVEBENCH_OLLAMA_URL and SERVEBENCH_OLLAMA_MODEL unset (start scripts/ollama-testbed)")
	}
	return url, model
}

// OllamaBinary returns the path of the testbed's ollama binary
// (SERVEBENCH_OLLAMA_BIN), for tests that start their own servers.
func OllamaBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("SERVEBENCH_OLLAMA_BIN")
	if bin == "" {
		Missing(t, "test needs the testbed's ollama binary: SERVEBENCH_OLLAMA_BIN unset (see scripts/ollama-testbed)")
	}
	return bin
}

// Missing skips the test with why, or fails it when SERVEBENCH_STRICT=1.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("SERVEBENCH_STRICT") == "1" {
		t.Fatal("SERVEBENCH_STRICT=1 forbids skipping: " + why)
	}
	t.Skip(why)
}

// RepoFile returns the path of rel, a slash-separated path from the
// repository root (the folder holding go.mod), such as
// "examples/multi-backend-sweep.json" or another package's testdata file.
// It walks up from the test's working directory, so it finds the
// repository's own files wherever the testing package sits; the test fails
// when there is no go.mod above it.
func RepoFile(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(rel))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test's directory: cannot find %s", rel)
		}
		dir = parent
	}
}
