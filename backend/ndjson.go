package backend

import "bytes"

// ndjsonFrame is the newline-delimited JSON framing of Ollama's native
// streams: every non-blank line is one JSON object; the end marker is inside
// the object ("done": true), so the decoder reports it.
type ndjsonFrame struct{}

func (ndjsonFrame) accept() string { return "application/x-ndjson" }

func (ndjsonFrame) payload(line []byte) (data []byte, ok, end bool) {
	data = bytes.TrimSpace(line)
	return data, len(data) > 0, false
}
