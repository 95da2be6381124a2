package summary

import (
	"bytes"
	"os"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
)

// FuzzStreamRecords streams arbitrary bytes as a records file through
// record.Scan into a Builder, as `servebench report records.jsonl` does:
// no panic, counts consistent, and the streamed document equal to the one
// of the whole file read into memory.
func FuzzStreamRecords(f *testing.F) {
	for _, n := range []string{"pool", "batch", "rate"} {
		b, err := os.ReadFile(testenv.RepoFile(f, "record/testdata/ollama-testbed-"+n+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"run":"a","seq":0,"level":1,"start_ns":0,"e2e_ns":5,"chunk_offsets_ns":[1,2,3],"chunk_tokens":[1,2,3],"output_tokens":6}` + "\n{\"seq\":"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := NewBuilder(Options{})
		_, err := record.Scan(bytes.NewReader(data), b.Add)
		if err != nil {
			return
		}
		doc := b.Document()
		for _, r := range doc.Runs {
			for _, l := range r.Levels {
				if l.Errors < 0 || l.Errors > l.Requests {
					t.Fatalf("level %+v: errors outside 0..requests", l)
				}
			}
		}
		whole, err := record.DecodeFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Scan succeeded, DecodeFile failed: %v", err)
		}
		if got, want := len(doc.Runs), len(Document(whole).Runs); got != want {
			t.Fatalf("streamed %d runs, whole file %d", got, want)
		}
	})
}
