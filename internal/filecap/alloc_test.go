//go:build !race

package filecap

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// This file is left out under the race detector, whose own allocations
// would count.

// TestReadFileSizesItsBuffer: a file is read into one buffer of its size,
// not grown by doubling (which allocated several times the file).
func TestReadFileSizesItsBuffer(t *testing.T) {
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
