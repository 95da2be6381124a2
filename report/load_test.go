package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/record"
)

func ptrInt(v int) *int     { return &v }
func ptrI64(v int64) *int64 { return &v }

// writeRecords writes a records file the way `servebench run` does
// (record.Encoder): a header, the Results of two pool levels, level ends
// and a run end.
func writeRecords(t *testing.T, path string) []record.Result {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := record.NewEncoder(f)
	h := &record.Header{
		Run:    record.Run{Label: "ollama-tiny", Backend: "ollama", Model: "servebench-tiny", Scenario: "chat", MaxTokens: 16, Method: "pool"},
		Levels: []record.LevelPlan{{Level: 0, Concurrency: 1, Requests: 2}, {Level: 1, Concurrency: 4, Requests: 4}},
	}
	if err := enc.EncodeHeader(h); err != nil {
		t.Fatal(err)
	}
	var rs []record.Result
	seq := 0
	add := func(level int, start, ttft, e2e int64) {
		r := record.Result{Run: "ollama-tiny", Seq: seq, Level: level, StartNS: start, TTFTNS: ptrI64(ttft), E2ENS: e2e,
			PromptTokens: ptrInt(30), OutputTokens: ptrInt(16), ExpectedOutputTokens: 16, Status: 200}
		seq++
		rs = append(rs, r)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	add(0, 0, 20e6, 170e6)
	add(0, 170e6, 20e6, 170e6)
	for i := int64(0); i < 4; i++ {
		add(1, 400e6+i*1e6, 40e6+i*10e6, 300e6+i*10e6)
	}
	vram := 1.5
	if err := enc.EncodeLevelEnd(&record.LevelEnd{Run: "ollama-tiny", Level: 1, Fields: &record.Observations{PeakVRAMGiB: &vram}}); err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodeRunEnd(&record.RunEnd{Run: "ollama-tiny", Complete: true}); err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRecordsFile rebuilds a report from a .jsonl records file: levels at
// the planned concurrency, throughput by the docs/metrics.md definition (Σ output
// tokens / first send to last finish), telemetry from the level end.
func TestRecordsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	writeRecords(t, path)
	srcs, err := ReadSources([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet(srcs, Options{})
	r := s.Find("ollama-tiny")
	if r == nil || r.Kind != KindSweep || len(r.Points) != 2 {
		t.Fatalf("runs %v", s.Labels())
	}
	p1, p4 := r.Points[0], r.Points[1]
	if p1.Concurrency != 1 || p4.Concurrency != 4 {
		t.Fatalf("concurrencies %d %d, want 1 4", p1.Concurrency, p4.Concurrency)
	}
	// Level 0: 32 tokens over 0 … 340 ms.
	if want := 32 / 0.340; p1.ThroughputTokS == nil || !within(*p1.ThroughputTokS, want) {
		t.Errorf("c=1 throughput %v, want %v", p1.ThroughputTokS, want)
	}
	// Level 1: 64 tokens over 400 ms … 403 + 330 ms.
	if want := 64 / 0.333; p4.ThroughputTokS == nil || !within(*p4.ThroughputTokS, want) {
		t.Errorf("c=4 throughput %v, want %v", *p4.ThroughputTokS, want)
	}
	if p4.PeakVRAMGiB == nil || *p4.PeakVRAMGiB != 1.5 || p1.PeakVRAMGiB != nil {
		t.Errorf("VRAM %v %v, want nil and 1.5 from the level end", p1.PeakVRAMGiB, p4.PeakVRAMGiB)
	}
	var out strings.Builder
	if err := WriteText(&out, Build(s)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ollama-tiny — ollama, chat, servebench-tiny") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestRecordsFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"run\":\"a\",\"seq\":0,\"start_ns\":0}\nnot json\n"), 0o644)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, []byte("\n"), 0o644)
	cases := map[string]string{
		bad:                                 bad + ": not a records file: line 2: ",
		empty:                               empty + ": no records in the file",
		filepath.Join(dir, "missing.jsonl"): filepath.Join(dir, "missing.jsonl") + ": cannot read: no such file or directory",
	}
	for path, want := range cases {
		_, err := ReadSources([]string{path})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err %v, want prefix %q", path, err, want)
		}
	}
}
