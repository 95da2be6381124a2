// Package reporttest loads the reference documents of ../shared/seeds for
// the tests of report's subpackages.
package reporttest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
)

// SeedDir is ../shared/seeds beside the repository root, where DESIGN.md's
// reference documents live (CI lays shared/ there too).
func SeedDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "seeds")
}

// LoadSeed reads the reference document name and returns it as a report
// set, failing the test if it cannot be read.
func LoadSeed(t testing.TB, name string) *report.Set {
	t.Helper()
	doc, err := document.ReadFile(filepath.Join(SeedDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return report.NewSet([]report.Source{{File: name, Doc: doc}}, report.Options{})
}
