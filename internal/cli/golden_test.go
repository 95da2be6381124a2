package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
)

var updateReports = flag.Bool("update", false, "rewrite testdata/golden/ (TestReportGolden)")

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../.."

// goldenDir holds what TestReportGolden renders.
const goldenDir = "testdata/golden"

// reportRenderings are the report invocations every input goes through:
// each format (the table also --wide, every column unfolded), and the
// capacity answer in the two formats that carry it.
var reportRenderings = []struct {
	name string
	args []string
}{
	{"table", []string{"--format", "table"}},
	{"table.wide", []string{"--format", "table", "--wide"}},
	{"markdown", []string{"--format", "markdown"}},
	{"csv", []string{"--format", "csv"}},
	{"json", []string{"--format", "json"}},
	{"html", []string{"--format", "html"}},
	{"gobench", []string{"--format", "gobench"}},
	{"slo.table", []string{"--format", "table", "--slo", "ttft_p95=1.5s,tpot_p50=50ms"}},
	{"slo.json", []string{"--format", "json", "--slo", "ttft_p95=1.5s,error_rate=0.01"}},
}

// TestReportGolden renders every result document and records file of the
// repository (examples/*.json, and the servebench documents and .jsonl
// records files under any testdata/) through every `report` format and
// the charts, and compares the bytes with testdata/golden. It holds the
// output of report, summary, document and record fixed while the code
// behind them changes; a file added later is covered by the next -update.
func TestReportGolden(t *testing.T) {
	// Text is fitted to $COLUMNS off a terminal: hold it at the default,
	// 80, whatever the shell's.
	t.Setenv("COLUMNS", "")
	inputs := goldenInputs(t)
	if len(inputs) < 5 {
		t.Fatalf("found %d inputs (%v), want at least the two examples and the three records files", len(inputs), inputs)
	}
	want := map[string]bool{}
	for _, in := range inputs {
		base := strings.ReplaceAll(in, "/", "_")
		for _, r := range reportRenderings {
			name := base + "." + r.name
			t.Run(name, func(t *testing.T) {
				args := append([]string{"report", filepath.Join(repoRoot, in)}, r.args...)
				var stdout, stderr bytes.Buffer
				err := Run(context.Background(), args, &stdout, &stderr)
				code := ExitCode(err, &stderr)
				goldenFile(t, name, stdout.Bytes())
				want[name+".golden"] = true
				if code != 0 || stderr.Len() > 0 {
					goldenFile(t, name+".stderr", fmt.Appendf(nil, "exit %d\n%s", code, stderr.Bytes()))
					want[name+".stderr.golden"] = true
				}
			})
		}
		t.Run(base+".charts", func(t *testing.T) {
			for _, f := range goldenCharts(t, in, base) {
				want[f] = true
			}
		})
	}
	if *updateReports {
		return
	}
	// A golden file nothing renders any more is stale: it would hide a
	// file that disappeared from the repository.
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("%s/%s: no input renders it (go test ./internal/cli -run TestReportGolden -update, then delete it)", goldenDir, e.Name())
		}
	}
}

// goldenCharts writes the charts of input in (report --charts) and holds
// each SVG byte for byte and every file's name, size and SHA-256 in a
// manifest (the PNGs are binary); it returns the golden files it checked.
func goldenCharts(t *testing.T, in, base string) []string {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"report", filepath.Join(repoRoot, in), "--charts", dir}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("report --charts: %v\n%s", err, stderr.String())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var manifest strings.Builder
	// stderr names the temporary directory: show it as CHARTS.
	fmt.Fprintf(&manifest, "stderr: %s", strings.ReplaceAll(stderr.String(), dir, "CHARTS"))
	var checked []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&manifest, "%s %d %x\n", e.Name(), len(b), sha256.Sum256(b))
		if strings.HasSuffix(e.Name(), ".svg") {
			name := base + ".chart." + e.Name()
			goldenFile(t, name, b)
			checked = append(checked, name+".golden")
		}
	}
	goldenFile(t, base+".charts", []byte(manifest.String()))
	return append(checked, base+".charts.golden")
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	if *updateReports {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Golden(t, filepath.Join(goldenDir, name+".golden"), got, *updateReports, "go test ./internal/cli -run TestReportGolden -update")
}

// goldenInputs lists, relative to the repository root and sorted, the
// documents in examples/ and the servebench documents (a JSON object with
// "runs" or "records") and records files (.jsonl) under any testdata/.
func goldenInputs(t *testing.T) []string {
	var out []string
	examples, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range examples {
		rel, _ := filepath.Rel(repoRoot, p)
		out = append(out, filepath.ToSlash(rel))
	}
	err = filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || p == filepath.Join(repoRoot, "internal", "cli", goldenDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "testdata") {
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, p)
		switch {
		case strings.HasSuffix(p, ".jsonl") && isRecordsFile(p):
			out = append(out, filepath.ToSlash(rel))
		case strings.HasSuffix(p, ".json") && isResultDocument(p):
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isRecordsFile reports whether the JSON Lines file at p is a records file
// (trace fixtures, also .jsonl, are not).
func isRecordsFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = record.DecodeFile(f)
	return err == nil
}

// isResultDocument reports whether the JSON file at p is an object with
// "runs" or "records" (model configs, captures and log tables are not).
func isResultDocument(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return false
	}
	_, runs := top["runs"]
	_, records := top["records"]
	return runs || records
}
