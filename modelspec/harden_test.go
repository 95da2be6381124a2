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

// TestDeviceOrBinaryAsModel: a device (/dev/zero, whatever name) or a
// binary file that is neither GGUF nor JSON is refused from the bytes it
// starts with, before it is read as a config.json (which read /dev/zero
// up to 16 MiB and then blamed its size).
func TestDeviceOrBinaryAsModel(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(bin, []byte("\x7fELF\x02\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{"/dev/zero", `/dev/zero: neither a GGUF file nor a config.json: it starts with "\x00\x00\x00\x00\x00\x00\x00\x00"`},
		{bin, `neither a GGUF file nor a config.json: it starts with "\x7fELF\x02\x01"`},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if _, err := Load(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s): err %v, want %q", c.path, err, c.want)
		}
	}
	// a config.json after blanks and a byte-order mark still reads
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte("\xef\xbb\xbf \n{\"model_type\": \"x\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(cfg); err != nil && strings.Contains(err.Error(), "neither a GGUF") {
		t.Errorf("config.json refused: %v", err)
	}
}
