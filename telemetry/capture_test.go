package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capturesDir holds real server outputs published by others, each headed by
// a "# source:" line (see its README.md). Tests read them in place.
const capturesDir = "../../shared/captures"

// readCapture returns a capture without its "# source:" header line.
func readCapture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturesDir, name))
	if err != nil {
		t.Fatalf("capture %s: %v", name, err)
	}
	return stripSource(string(b))
}

// readTestdata returns a fixture of testdata/ without its "# source:" line.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return stripSource(string(b))
}

func stripSource(s string) string {
	if strings.HasPrefix(s, "# source:") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return s[i+1:]
		}
		return ""
	}
	return s
}
