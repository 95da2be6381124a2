package filecap

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("12345"), 0o644)
	if b, err := ReadFile(small, 5, "a test file"); err != nil || string(b) != "12345" {
		t.Fatalf("at the cap: %q, %v", b, err)
	}
	_, err := ReadFile(small, 4, "a test file")
	if !IsTooLarge(err) || !strings.Contains(err.Error(), "the most a test file may be") {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 4, "x"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if got := Size(Document); got != "512 MiB" {
		t.Errorf("Size(Document) = %q", got)
	}
}

// TestReadFileSizesItsBuffer: a file is read into one buffer of its size,
// not grown by doubling (which allocated several times the file).
func TestReadFileSizesItsBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations would count")
	}
	const size = 8 << 20
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := ReadFile(path, Document, "a result document")
	runtime.ReadMemStats(&after)
	if err != nil || len(b) != size {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size+size/8 {
		t.Fatalf("allocated %d bytes to read %d", alloc, size)
	}
}
