package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunProfileOutOfRange: a launch profile with a setting out of range
// or data after its JSON is refused in one line naming the field, before
// any server is launched, and leaves no --out file.
func TestRunProfileOutOfRange(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, file, data, want string }{
		{"port beyond an integer", "p.json", `{"backend":"vllm","model":"m","port":99999999999999999999}`, "port: number 99999999999999999999 is not an integer in range"},
		{"max_num_seqs above its bound", "s.json", `{"backend":"vllm","model":"m","max_num_seqs":1000000000000}`, "max_num_seqs: 1000000000000 is above 65536"},
		{"trailing data", "t.json", `{"backend":"vllm","model":"m"}}`, "trailing data after the profile object"},
		{"yaml integer out of range", "y.yaml", "backend: vllm\nmodel: m\nparallel: 99999999999999999999\n", "line 3: parallel: 9999999... is not an integer in range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prof, out := filepath.Join(dir, c.file), filepath.Join(dir, c.file+".out.json")
			if err := os.WriteFile(prof, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := run(t, "run", "--profile", prof, "--out", out, "--requests", "1")
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "Go struct") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("--out %s left behind (%v)", out, err)
			}
		})
	}
}
