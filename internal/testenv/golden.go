package testenv

import (
	"bytes"
	"os"
	"testing"
)

// Golden compares got with the golden file at path. With update set it
// rewrites the file instead; regen is the command that does that (for
// example "go test ./report -update"), named in every failure so a reader
// knows how to accept an intended change.
func Golden(t testing.TB, path string, got []byte, update bool, regen string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s creates it)", err, regen)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s rewrites it)\n--- got\n%s\n--- want\n%s", path, regen, got, want)
	}
}
