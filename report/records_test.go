package report

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/summary"
)

// realRecords are the records files of real testbed runs in
// record/testdata.
func realRecords(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, n := range []string{"pool", "batch", "rate"} {
		out = append(out, testenv.RepoFile(t, "record/testdata/ollama-testbed-"+n+".jsonl"))
	}
	return out
}

// TestReadRecordsCutLastLine (item 11): `report records.jsonl`
// of a file whose last line a crash cut short uses every complete line
// and warns about the cut one, instead of rejecting the file.
func TestReadRecordsCutLastLine(t *testing.T) {
	for _, src := range realRecords(t) {
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			// Keep the header and two request lines whole, then cut the
			// next request line in the middle of its chunk offsets.
			keep := strings.Join(lines[:3], "")
			cutLine := lines[3]
			path := filepath.Join(t.TempDir(), "cut.jsonl")
			os.WriteFile(path, []byte(keep+cutLine[:len(cutLine)/2]), 0o644)

			srcs, err := ReadSources([]string{path})
			if err != nil {
				t.Fatalf("a file with a cut last line is rejected: %v", err)
			}
			doc := srcs[0].Doc
			want, err := record.DecodeFile(strings.NewReader(keep))
			if err != nil {
				t.Fatal(err)
			}
			wantDoc := summary.Document(want)
			if !reflect.DeepEqual(doc.Runs, wantDoc.Runs) {
				t.Errorf("runs differ from those of the complete lines:\n%+v\nwant\n%+v", doc.Runs, wantDoc.Runs)
			}
			if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "line 4 is cut short") || !strings.Contains(doc.Warnings[0], "3 complete lines") {
				t.Errorf("warnings %q, want one about line 4", doc.Warnings)
			}
		})
	}
}

// TestReadRecordsStreamingMatchesFile: the streamed report of each real
// records file is the one summary.Document builds from the file read
// whole.
func TestReadRecordsStreamingMatchesFile(t *testing.T) {
	for _, src := range realRecords(t) {
		srcs, err := ReadSources([]string{src})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(src)
		rf, err := record.DecodeFile(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := summary.Document(rf); !reflect.DeepEqual(*srcs[0].Doc, want) {
			t.Errorf("%s: streamed document differs:\n%+v\nwant\n%+v", src, *srcs[0].Doc, want)
		}
	}
}

// bigRecords writes a records file of n pool requests of out tokens each,
// one chunk per token, over four levels, as `servebench run` writes them.
func bigRecords(t testing.TB, path string, n, out int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := record.NewEncoder(f)
	h := &record.Header{Run: record.Run{Label: "big", Backend: "vllm", Model: "m", Scenario: "text", MaxTokens: out, Method: "pool"}}
	for lv := 1; lv <= 4; lv++ {
		h.Levels = append(h.Levels, record.LevelPlan{Level: lv, Concurrency: lv, Requests: n / 4})
	}
	if err := enc.EncodeHeader(h); err != nil {
		t.Fatal(err)
	}
	offs := make([]int64, out)
	toks := make([]int, out)
	for i := range n {
		ttft := int64(20e6 + i%1000*1e3)
		for k := range offs {
			offs[k] = ttft + int64(k)*7_000_123 + int64(i%97)
			toks[k] = 1
		}
		r := record.Result{Run: "big", Seq: i, Level: 1 + i*4/n, StartNS: int64(i) * 1e6, TTFTNS: &ttft, E2ENS: offs[out-1],
			ChunkOffsetsNS: offs, ChunkTokens: toks, PromptTokens: ptrInt(32), OutputTokens: ptrInt(out), ExpectedOutputTokens: out, Status: 200}
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.EncodeRunEnd(&record.RunEnd{Run: "big", Complete: true}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return st.Size()
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestReadRecordsBoundedMemory (item 12): streaming a records
// file keeps what the summaries need (per request a few figures, per
// token one inter-token gap of 8 bytes), never the file's lines: the heap
// a read of a 20,000-request file holds is under three quarters of the
// file's size and under 60% of what holding its decoded lines takes
// (measured: 21.2 MiB, 33.4 MiB, 45.5 MiB). The figures are a live heap
// after a full collection, the same on a busy machine.
func TestReadRecordsBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	size := bigRecords(t, path, 20000, 128)

	base := liveHeap()
	f, _ := os.Open(path)
	b := summary.NewBuilder(summary.Options{})
	if _, err := record.Scan(f, b.Add); err != nil {
		t.Fatal(err)
	}
	f.Close()
	streamed := liveHeap() - base
	runtime.KeepAlive(b)

	base = liveHeap()
	f, _ = os.Open(path)
	whole, err := record.DecodeFile(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	held := liveHeap() - base
	runtime.KeepAlive(whole)

	t.Logf("file %.1f MiB; streamed builder holds %.1f MiB; the decoded lines hold %.1f MiB", mib(size), mib(int64(streamed)), mib(int64(held)))
	if streamed > uint64(size)*3/4 || streamed > held*6/10 {
		t.Errorf("streaming holds %.1f MiB for a %.1f MiB file (decoded lines: %.1f MiB)", mib(int64(streamed)), mib(size), mib(int64(held)))
	}
	if got, want := b.Document(), summary.Document(whole); !reflect.DeepEqual(got, want) {
		t.Error("the streamed document differs from the one of the whole file")
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkReadRecords reads a records file of 20,000 requests of 128
// tokens (about 57 MiB) through ReadSources and reports the peak heap
// seen by a sampler every millisecond beside the file's size:
//
//	go test ./report -run '^$' -bench ReadRecords -benchtime 3x
func BenchmarkReadRecords(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	size := bigRecords(b, path, 20000, 128)
	base := liveHeap()
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			runtime.Gosched()
		}
	}()
	b.ResetTimer()
	for range b.N {
		if _, err := ReadSources([]string{path}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(mib(size), "file-MiB")
	b.ReportMetric(mib(int64(peak-base)), "peak-heap-MiB")
}
