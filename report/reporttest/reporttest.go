// Package reporttest loads the reference documents of the repository's
// examples/ for the tests of report's subpackages.
package reporttest

import (
	"testing"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/report"
)

// SeedPath is the path of the reference document name in the repository's
// examples/ (examples/README.md says what each is and where it came from),
// found from the module root, so it does not depend on where the calling
// test's package sits.
func SeedPath(t testing.TB, name string) string {
	t.Helper()
	return testenv.RepoFile(t, "examples/"+name)
}

// LoadSeed reads the reference document name and returns it as a report
// set, failing the test if it cannot be read.
func LoadSeed(t testing.TB, name string) *report.Set {
	t.Helper()
	doc, err := document.ReadFile(SeedPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return report.NewSet([]report.Source{{File: name, Doc: doc}}, report.Options{})
}

// LoadRecords reads the records file at rel (a path from the repository
// root, such as "record/testdata/ollama-testbed-pool.jsonl") as a report
// set, its document rebuilt from the records as `servebench report` does.
func LoadRecords(t testing.TB, rel string) *report.Set {
	t.Helper()
	srcs, err := report.ReadSources([]string{testenv.RepoFile(t, rel)})
	if err != nil {
		t.Fatal(err)
	}
	return report.NewSet(srcs, report.Options{})
}
