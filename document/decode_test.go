package document

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// seeds are the reference documents of the repository's examples/ (see
// examples/README.md).
var seeds = []string{
	"../examples/multi-backend-sweep.json",
	"../examples/vllm-text-image-example.json",
}

func TestDecodeSeeds(t *testing.T) {
	for _, p := range seeds {
		t.Run(filepath.Base(p), func(t *testing.T) {
			doc, err := ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs)+len(doc.Records) == 0 {
				t.Fatalf("no runs or records decoded")
			}
		})
	}
	doc, err := ReadFile(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := *doc.Runs[7].Levels[2].ThroughputTokS; doc.Runs[7].Label != "vllm-fp8kv-chat" || got != 1209.9 {
		t.Errorf("runs[7] = %s c=%d %v, want vllm-fp8kv-chat 1209.9", doc.Runs[7].Label, doc.Runs[7].Levels[2].Concurrency, got)
	}
	if doc.Runs[0].Levels[0].PeakKVCacheUsage != nil {
		t.Errorf("null peak_kv_cache_usage decoded as %v, want nil", *doc.Runs[0].Levels[0].PeakKVCacheUsage)
	}
}

// TestDecodeErrors checks that each bad input gives one error naming the
// file and the JSON path of the bad value.
func TestDecodeErrors(t *testing.T) {
	sweep, err := os.ReadFile(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	// mutate decodes the sweep seed, applies f and re-encodes it.
	mutate := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(sweep, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	level := func(m map[string]any, run, lvl int) map[string]any {
		return m["runs"].([]any)[run].(map[string]any)["levels"].([]any)[lvl].(map[string]any)
	}
	tests := []struct {
		name, in, want string
	}{
		{"string for number", mutate(func(m map[string]any) { level(m, 2, 0)["ttft_p50_ms"] = "143.3" }),
			"sweep.json: runs[2].levels[0].ttft_p50_ms: want number, got string"},
		{"fraction for integer", mutate(func(m map[string]any) { level(m, 0, 1)["requests"] = 4.5 }),
			"sweep.json: runs[0].levels[1].requests: want integer, got 4.5"},
		{"object for array", mutate(func(m map[string]any) { m["runs"].([]any)[1].(map[string]any)["levels"] = map[string]any{} }),
			"sweep.json: runs[1].levels: want array, got object"},
		{"null concurrency", mutate(func(m map[string]any) { level(m, 3, 2)["concurrency"] = nil }),
			"sweep.json: runs[3].levels[2].concurrency: want integer, got null"},
		{"zero concurrency", mutate(func(m map[string]any) { level(m, 3, 2)["concurrency"] = 0 }),
			"sweep.json: runs[3].levels[2].concurrency: want an integer ≥ 1, got 0"},
		{"map value", mutate(func(m map[string]any) { m["planner"].(map[string]any)["kv_bytes"].(map[string]any)["fp8"] = true }),
			"sweep.json: planner.kv_bytes.fp8: want number, got boolean"},
		// Fields of embedded structs are the outer struct's: record.Run's
		// in a run, record.Observations' in a level.
		{"embedded run field", mutate(func(m map[string]any) { m["runs"].([]any)[1].(map[string]any)["method"] = 5 }),
			"sweep.json: runs[1].method: want string, got number"},
		{"embedded run object", mutate(func(m map[string]any) {
			m["runs"].([]any)[0].(map[string]any)["kv_cache"].(map[string]any)["blocks"] = "many"
		}), "sweep.json: runs[0].kv_cache.blocks: want integer, got string"},
		{"embedded level field", mutate(func(m map[string]any) { level(m, 2, 1)["peak_vram_gib"] = true }),
			"sweep.json: runs[2].levels[1].peak_vram_gib: want number, got boolean"},
		{"shadowed level warnings", mutate(func(m map[string]any) { level(m, 0, 0)["warnings"] = []any{"ok", 7} }),
			"sweep.json: runs[0].levels[0].warnings[1]: want string, got number"},
		{"not json", "gpu: RTX\n", "sweep.json: not JSON: invalid character 'g' looking for beginning of value at line 1, column 2"},
		{"truncated", `{"runs": [`, "sweep.json: not JSON: unexpected end of file"},
		{"empty", "", "sweep.json: not JSON: empty file"},
		{"trailing", `{"runs": []} {}`, "sweep.json: not JSON: more than one value (trailing data after the document)"},
		{"array", `[1,2]`, `sweep.json: not a servebench result document: top level is array, want an object with "runs" or "records"`},
		{"other object", `{"name": "x", "version": 2}`, `sweep.json: not a servebench result document: no "runs" or "records" (top-level keys: "name", "version")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("sweep.json", []byte(tc.in))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestDecodeEmbedded checks that the members of embedded structs decode
// into them (record.Run in a run, record.Observations in a level), that a
// level's warnings land in its own field and not in the shadowed
// Observations.Warnings, and that unknown members beside them are still
// allowed.
func TestDecodeEmbedded(t *testing.T) {
	in := `{"runs": [{"label": "a", "method": "rate", "kv_cache": {"blocks": 9}, "newer_run_field": 1, "levels": [
		{"concurrency": 2, "peak_vram_gib": 3.5, "requests_waiting_rise": 0.25, "warnings": ["w"], "newer_level_field": {"x": 1}}]}]}`
	doc, err := Decode("e.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if r.Label != "a" || r.Method != "rate" || r.KVCache.Blocks == nil || *r.KVCache.Blocks != 9 {
		t.Errorf("run = %q %q %v, want a rate 9 blocks", r.Label, r.Method, r.KVCache.Blocks)
	}
	l := r.Levels[0]
	if l.PeakVRAMGiB == nil || *l.PeakVRAMGiB != 3.5 || l.RequestsWaitingRise == nil || *l.RequestsWaitingRise != 0.25 {
		t.Errorf("level observations = %v %v, want 3.5 0.25", l.PeakVRAMGiB, l.RequestsWaitingRise)
	}
	if len(l.Warnings) != 1 || l.Warnings[0] != "w" || l.Observations.Warnings != nil {
		t.Errorf("level warnings = %q, observations' = %q; want [w] and none", l.Warnings, l.Observations.Warnings)
	}
}

// TestJSONFields checks the members check walks against encoding/json's
// rules for embedded structs: promoted in field order, the shallowest of
// one name wins, a tagged one beats an untagged one at its depth, a tie
// leaves none, and "-" and unexported fields are not members.
func TestJSONFields(t *testing.T) {
	type inner struct {
		A int      `json:"a"`
		W []string `json:"w"`
		B string
		T int
	}
	type other struct {
		T string
		V bool
	}
	type tagged struct {
		X int `json:"V"`
	}
	type outer struct {
		inner
		other
		tagged
		W []int `json:"w,omitempty"`
		D int   `json:"-"`
		e int
	}
	_ = outer{}.e
	var got []string
	for _, f := range jsonFields(reflect.TypeFor[outer]()) {
		got = append(got, f.name+":"+f.typ.String())
	}
	want := []string{"a:int", "B:string", "V:int", "w:[]int"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("jsonFields = %v, want %v", got, want)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile("testdata/no-such-file.json")
	if err == nil || err.Error() != "testdata/no-such-file.json: cannot read: no such file or directory" {
		t.Errorf("err = %v", err)
	}
}

// TestRoundTrip checks that a decoded seed re-encodes to the same JSON
// values (field names and nesting are the seed's).
func TestRoundTrip(t *testing.T) {
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Decode(p, data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal(data, &a)
		json.Unmarshal(out, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: round trip differs\n got %s\nwant %s", p, jb, ja)
		}
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// re-encodes and decodes again.
func FuzzDecode(f *testing.F) {
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"runs":[{"label":"a","levels":[{"concurrency":1,"ttft_p50_ms":"x"}]}]}`))
	f.Add([]byte(`{"records":[{"concurrency":1e400}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Decode("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("accepted document does not re-encode: %v", err)
		}
		if _, err := Decode("g.json", out); err != nil && (len(doc.Runs) > 0 || len(doc.Records) > 0) {
			t.Fatalf("re-encoded document rejected: %v", err)
		}
	})
}
