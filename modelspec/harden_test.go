package modelspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceNamedGGUF: a .gguf name for a device that states size 0
// (a link to /dev/zero) gets the bytes it starts with, not "the file is
// empty".
func TestDeviceNamedGGUF(t *testing.T) {
	link := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skip(err)
	}
	_, err := Load(link)
	if err == nil || !strings.Contains(err.Error(), `it starts with "\x00\x00\x00\x00"`) {
		t.Fatalf("err %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Load(empty); err == nil || !strings.Contains(err.Error(), "the file is empty") {
		t.Fatalf("empty file: err %v", err)
	}
}
