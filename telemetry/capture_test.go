package telemetry

import (
	"os"
	"path/filepath"
	"testing"
)

// readTestdata returns a fixture of testdata/ as it is, byte for byte: a
// server's or tool's published output, or one built from the server's source
// (each /metrics page names its source in its own comment lines, the others
// in testdata/SOURCES.md).
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	return readFixture(t, filepath.Join("testdata", name))
}

// readBackendTestdata returns a fixture the backend package owns (its
// testdata/SOURCES.md names the source), for outputs both packages parse.
func readBackendTestdata(t testing.TB, name string) string {
	t.Helper()
	return readFixture(t, filepath.Join("..", "backend", "testdata", name))
}

func readFixture(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
