package backend

import "bytes"

// ndjsonFrame is the newline-delimited JSON framing of Ollama's native
// streams: every non-blank line is one JSON object (lines end with LF or
// CR LF); the end marker is inside the object ("done": true), so the
// decoder reports it. The stream's unterminated last line is a payload too.
type ndjsonFrame struct{}

func (ndjsonFrame) accept() string { return "application/x-ndjson" }

func (ndjsonFrame) crEnds() bool { return false }

func (ndjsonFrame) line(b []byte, _ bool) ([]byte, event) {
	data := bytes.TrimSpace(b)
	if len(data) == 0 {
		return nil, evNone
	}
	return data, evData
}

func (ndjsonFrame) pending() []byte { return nil }
