package backend

import "bytes"

var (
	sseDataPrefix = []byte("data:")
	sseDone       = []byte("[DONE]")
)

// sseFrame is the Server-Sent Events framing of OpenAI-compatible streams:
// each "data:" line is one JSON chunk, "data: [DONE]" ends the stream, and
// comments (":"), "event:", "id:", "retry:" and blank lines carry nothing we
// use. (Multi-line data events are not joined: OpenAI-compatible servers
// send one JSON object per data line.)
type sseFrame struct{}

func (sseFrame) accept() string { return "text/event-stream" }

// payload returns the data of one SSE line, and whether it is the end
// marker.
func (sseFrame) payload(line []byte) (data []byte, ok, end bool) {
	if !bytes.HasPrefix(line, sseDataPrefix) {
		return nil, false, false
	}
	data = line[len(sseDataPrefix):]
	if len(data) > 0 && data[0] == ' ' {
		data = data[1:]
	}
	data = bytes.TrimRight(data, " \t")
	if len(data) == 0 {
		return nil, false, false
	}
	if bytes.Equal(data, sseDone) {
		return nil, false, true
	}
	return data, true, false
}
