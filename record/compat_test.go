package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOldRecordsFilesReencode reads the records files of testdata (the
// format as servebench wrote it on the Ollama testbed, see its README),
// writes every line again and holds the result to the original. Result,
// level_end and run_end lines come back byte for byte. A header's run no
// longer carries "levels": it was always null there (the levels are
// rebuilt from the Results), and is the one key compared apart (files
// written since do not have it).
func TestOldRecordsFilesReencode(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no records files in testdata (%v)", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				n++
				line := sc.Bytes()
				f, err := DecodeFile(bytes.NewReader(line))
				if err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				var out bytes.Buffer
				enc := NewEncoder(&out)
				switch {
				case len(f.Headers) == 1:
					err = enc.EncodeHeader(&f.Headers[0])
				case len(f.LevelEnds) == 1:
					err = enc.EncodeLevelEnd(&f.LevelEnds[0])
				case len(f.RunEnds) == 1:
					err = enc.EncodeRunEnd(&f.RunEnds[0])
				case len(f.Results) == 1:
					err = enc.Encode(&f.Results[0])
				default:
					t.Fatalf("line %d decodes to %+v", n, f)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
				if len(f.Headers) == 1 {
					sameHeader(t, n, line, got)
					continue
				}
				if !bytes.Equal(got, line) {
					t.Errorf("line %d re-encodes differently:\n got %s\nwant %s", n, got, line)
				}
			}
			if n < 10 {
				t.Fatalf("%d lines read", n)
			}
		})
	}
}

// sameHeader compares a header line as JSON values, with the old
// always-null "levels" of its run (absent in files written since) left
// out.
func sameHeader(t *testing.T, n int, old, got []byte) {
	t.Helper()
	var o, g map[string]map[string]any
	if err := json.Unmarshal(old, &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	run := o["header"]["run"].(map[string]any)
	// Files written before the change carry "levels": null; later ones
	// do not carry it at all.
	if v, ok := run["levels"]; ok && v != nil {
		t.Errorf("line %d: old header run levels %v, want null", n, v)
	}
	delete(run, "levels")
	if !reflect.DeepEqual(o, g) {
		t.Errorf("line %d: header re-encodes differently:\n got %s\nwant %s", n, got, old)
	}
}
