package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
)

// TestReadmeLayoutNamesEveryPackage: docs/contributing.md's Layout table names every
// package of the module (a row may name several), so the map of the code
// a newcomer reads first cannot fall behind it.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile(testenv.RepoFile(t, "docs/contributing.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Layout\n")
	if start < 0 {
		t.Fatal(`docs/contributing.md has no "## Layout" section`)
	}
	layout := text[start:]
	if end := strings.Index(layout[1:], "\n## "); end >= 0 {
		layout = layout[:end+1]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_/]+)`").FindAllStringSubmatch(layout, -1) {
		named[m[1]] = true
	}
	root := filepath.Dir(testenv.RepoFile(t, "go.mod"))
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || n == "out" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if pkg := filepath.ToSlash(rel); pkg != "." && !named[pkg] {
			t.Errorf("docs/contributing.md's Layout table does not name package %s", pkg)
			named[pkg] = true // once
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
