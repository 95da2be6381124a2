package modelspec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Load resolves a model argument: a path to a GGUF file, a config.json or
// a folder holding one, else a preset name.
func Load(arg string) (Spec, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".json") || strings.HasSuffix(arg, ".gguf") {
			return Spec{}, err
		}
		return Preset(arg)
	}
	if fi.IsDir() {
		m, err := readHFConfig(arg)
		m.Name = filepath.Base(filepath.Clean(arg))
		return m, err
	}
	if isGGUF(arg) {
		return ReadGGUF(arg)
	}
	if strings.EqualFold(filepath.Ext(arg), ".gguf") {
		return Spec{}, notGGUF(arg)
	}
	if err := startsAsJSON(arg); err != nil {
		return Spec{}, err
	}
	m, err := readHFConfig(arg)
	if err == nil && m.Name == arg {
		m.Name = filepath.Base(filepath.Dir(arg))
		if m.Name == "." || m.Name == "" {
			m.Name = arg
		}
	}
	return m, err
}

// notGGUF is the error for a file named .gguf that lacks the GGUF magic:
// it says what the file starts with instead of trying it as JSON.
// The magic is read whatever size the file states: a device or a pipe
// states 0 and may hold bytes all the same.
func notGGUF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 4)
	n, _ := io.ReadFull(f, b)
	if n == 0 {
		return fmt.Errorf("%s: not a GGUF file: the file is empty", path)
	}
	return fmt.Errorf("%s: not a GGUF file: it starts with %q, not the magic \"GGUF\"", path, b[:n])
}

// startsAsJSON refuses a file that is not a GGUF file and whose first
// bytes (past blanks and a byte-order mark) are not a JSON object's, from
// what it reads of its start whatever size it states: a device such as
// /dev/zero states 0 and would otherwise be read up to the config.json
// bound. An empty file passes, for the config.json reader to name.
func startsAsJSON(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(f, b)
	head := bytes.TrimLeft(bytes.TrimPrefix(b[:n], []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(head) == 0 || head[0] == '{' {
		return nil
	}
	return fmt.Errorf("%s: neither a GGUF file nor a config.json: it starts with %q, not the magic \"GGUF\" or a JSON object", path, head[:min(len(head), 8)])
}

// isGGUF reports whether the file starts with the GGUF magic.
func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4)
	n, _ := io.ReadFull(f, b)
	return bytes.Equal(b[:n], []byte("GGUF"))
}
