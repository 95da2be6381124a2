package trace

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// writeTrace writes a servebench trace of n rows, every tenth a later
// turn of a session with a think time, and returns its path.
func writeTrace(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		if i%10 == 9 {
			fmt.Fprintf(w, `{"t_ms": %d, "input_tokens": %d, "output_tokens": %d, "session": "s%d", "turn": 2, "think_ms": 1500}`+"\n", i*7, 100+i%900, 1+i%300, i/10)
		} else {
			fmt.Fprintf(w, `{"t_ms": %d, "input_tokens": %d, "output_tokens": %d}`+"\n", i*7, 100+i%900, 1+i%300)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// parseHeap reads the trace at path and returns the live heap its Trace
// holds and the bytes allocated while reading it, per row.
func parseHeap(tb testing.TB, path string) (live, alloc float64, rows int) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t, err := ReadFile(path, "")
	if err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	n := len(t.Rows)
	runtime.KeepAlive(t)
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n), n
}

// BenchmarkParseMemory reports what reading a trace of 200,000 rows
// holds (live-B/row) and allocates (alloc-B/row) per row.
func BenchmarkParseMemory(b *testing.B) {
	path := writeTrace(b, 200_000)
	for b.Loop() {
		live, alloc, _ := parseHeap(b, path)
		b.ReportMetric(live, "live-B/row")
		b.ReportMetric(alloc, "alloc-B/row")
	}
}

// TestReadPresizesRows checks that a trace file's rows are sized once
// from the file's size (at most 10% and 16 rows to spare, for lines longer than the first ones) rather than by
// doubling, and that reading it allocates less than 1 KB per row (a JSON
// decoder per line allocated 1.8 KB).
func TestReadPresizesRows(t *testing.T) {
	path := writeTrace(t, 20_000)
	tr, err := ReadFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if n, c := len(tr.Rows), cap(tr.Rows); n != 20_000 || c < n || c > n+n/10+16 {
		t.Fatalf("%d rows in a slice of capacity %d, want at most 10%% spare", n, c)
	}
	if _, alloc, _ := parseHeap(t, path); alloc > 1024 {
		t.Fatalf("reading allocated %.0f bytes per row, want under 1024", alloc)
	}
}

// TestReadFileContextStops checks that a trace stops being read when its
// context ends, with an error that says so.
func TestReadFileContextStops(t *testing.T) {
	path := writeTrace(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFileContext(ctx, path, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if _, err := ReadFileContext(context.Background(), path, Servebench); err != nil {
		t.Fatal(err)
	}
}
