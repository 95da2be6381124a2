package filecap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("12345"), 0o644)
	if b, err := ReadFile(small, 5, "a test file"); err != nil || string(b) != "12345" {
		t.Fatalf("at the cap: %q, %v", b, err)
	}
	_, err := ReadFile(small, 4, "a test file")
	if !IsTooLarge(err) || !strings.Contains(err.Error(), "the most a test file may be") {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 4, "x"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if got := Size(Document); got != "512 MiB" {
		t.Errorf("Size(Document) = %q", got)
	}
}
