package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOutNeverRemovesTheTarget: a report --out whose write fails
// (here a link to /dev/full, which refuses every write) says so and
// leaves the link and the device as they were; one that succeeds over an
// existing file through a link replaces the linked file and keeps the
// link, with no temporary file left in the folder.
func TestReportOutNeverRemovesTheTarget(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	sweep := seedFile(t, "multi-backend-sweep.json")
	dir := t.TempDir()
	link := filepath.Join(dir, "full.txt")
	if err := os.Symlink("/dev/full", link); err != nil {
		t.Skip(err)
	}
	code, _, stderr := run(t, "report", sweep, "--out", link)
	if code == 0 || !strings.Contains(stderr, "--out") {
		t.Fatalf("exit %d, stderr %q: want a failure naming --out", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was removed: %v", err)
	}
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/full is gone or replaced: %v", err)
	}

	real := filepath.Join(dir, "report.txt")
	os.WriteFile(real, []byte("old"), 0o644)
	link2 := filepath.Join(dir, "latest.txt")
	os.Symlink(real, link2)
	if code, _, stderr := run(t, "report", sweep, "--out", link2); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "vllm") {
		t.Fatalf("the linked file holds %q", b)
	}
	if st, err := os.Lstat(link2); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("%d entries in the folder, want the two links and the report", len(ents))
	}
}

// TestSimFitEscapesLabels: a run label holding ESC and U+202E (a
// document is outside data) is printed escaped, as report prints it.
func TestSimFitEscapesLabels(t *testing.T) {
	b, err := os.ReadFile(sweepExample)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), `"label": "llamacpp-f16kv-chat"`, `"label": "evil\u001b[31m\u202ereversed"`, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "evil.json")
	os.WriteFile(path, []byte(doc), 0o644)
	_, stdout, stderr := run(t, "sim", "fit", path, "--out", filepath.Join(dir, "p.json"), "--run", "evil\x1b[31m\u202ereversed")
	if !strings.Contains(stdout, "evil") {
		t.Fatalf("no fit of the run printed: %q %q", stdout, stderr)
	}
	for _, raw := range []string{"\x1b", "\u202e"} {
		if strings.Contains(stdout, raw) || strings.Contains(stderr, raw) {
			t.Fatalf("%q printed raw: %q", raw, stdout)
		}
	}
}

// TestFindOutErrorNamesFind: a find whose --out cannot be written names
// find, not run, and leaves the device as it was.
func TestFindOutErrorNamesFind(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	code, _, stderr := run(t, "find", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b", "--out", "/dev/full", "--quiet", "--slo", "ttft_p50=1.5s")
	if code == 0 || !strings.Contains(stderr, "find: --out /dev/full:") {
		t.Fatalf("exit %d, stderr %q: want an error naming find's --out", code, stderr)
	}
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/full is gone or replaced: %v", err)
	}
}
