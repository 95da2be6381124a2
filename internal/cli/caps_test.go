package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sparseFile makes a file of size bytes that takes no disk space (a hole),
// starting with head.
func sparseFile(t *testing.T, name, head string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFileSizeCaps (item 12): files read whole are capped —
// launch profiles, calibration files and config.json at 16 MiB, result
// documents at 512 MiB — with one error line naming the file and the cap,
// exit 2. Before, a 300 MB profile took 1.5 GB and a 300 MB document
// 1.4 GB of memory. (Records files are streamed instead: report's
// TestReadRecordsBoundedMemory.)
func TestFileSizeCaps(t *testing.T) {
	profile := sparseFile(t, "big.yaml", "backend: ollama\nmodel: m\n#", 16<<20+1)
	doc := sparseFile(t, "big.json", `{"runs": [`, 512<<20+1)
	cal := sparseFile(t, "cal.json", `{"corrections": [`, 16<<20+1)
	cfg := sparseFile(t, "config.json", `{"num_hidden_layers": 2,`, 16<<20+1)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"launch profile", []string{"launch", "--profile", profile, "--dry-run"}, "big.yaml: larger than 16 MiB, the most a launch profile may be"},
		{"run profile", []string{"run", "--profile", profile}, "big.yaml: larger than 16 MiB, the most a launch profile may be"},
		{"result document", []string{"report", doc}, "big.json: larger than 512 MiB, the most a result document may be"},
		{"compare document", []string{"compare", doc, doc}, "larger than 512 MiB"},
		{"calibration file", []string{"plan", "--model", "qwen2.5-7b", "--gpu-gib", "16", "--calibration", cal}, "cal.json: larger than 16 MiB, the most a calibration file may be"},
		{"config.json", []string{"plan", "--model", cfg, "--gpu-gib", "16"}, "config.json: larger than 16 MiB, the most a config.json may be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, c.want)
			}
		})
	}
}
