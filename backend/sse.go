package backend

import "bytes"

// event is what a line of a stream completed.
type event int

// Events of a framing.
const (
	// evNone: the line completed nothing (a field, a comment, a blank
	// line after an event without data).
	evNone event = iota
	// evData: a payload is complete (an SSE event's data, an NDJSON line).
	evData
	// evEnd: the stream's end marker ("data: [DONE]").
	evEnd
	// evError: an SSE event of type "error"; its data is the message.
	evError
)

// framing splits a stream into payloads (SSE events, NDJSON lines). A
// framing holds the state of one stream; adapters make one per request.
type framing interface {
	// accept is the Accept header of the request.
	accept() string
	// crEnds tells whether a lone CR ends a line (SSE).
	crEnds() bool
	// line handles the next line of the stream (without its line end);
	// eof marks the stream's last, unterminated line. data is valid until
	// the next call.
	line(b []byte, eof bool) (data []byte, ev event)
	// pending is the data of an event the stream ended inside of (SSE:
	// no blank line came after it), for the truncation message.
	pending() []byte
}

var (
	sseDone = []byte("[DONE]")
	sseBOM  = []byte("\uFEFF")
)

// sseFrame is the Server-Sent Events framing of OpenAI-compatible streams,
// parsed as the WHATWG HTML specification ("Server-sent events",
// §9.2.6 "Interpreting an event stream") says:
//   - lines end with CR LF, LF or a lone CR (lineReader with crEnds); a
//     UTF-8 byte order mark at the very start is skipped;
//   - a line starting with ":" is a comment;
//   - "name: value" is a field (one space after the colon is dropped); a
//     line without a colon is a field with an empty value;
//   - "data" fields append their value and an LF to the event's data;
//     "event" sets its type; "id" and "retry" are read and ignored (a
//     benchmark never reconnects); other fields are ignored;
//   - a blank line dispatches the event: an event with no data field is
//     dropped; otherwise the data, less its final LF, is the payload;
//   - at the end of the stream an event not yet dispatched is discarded.
//
// One leniency: a stream whose last event is the end marker "[DONE]" with
// no blank line after it has ended all the same (a published vLLM 0.9.0
// recording ends so); any other unfinished event is discarded, so a
// stream cut inside an event is a truncated stream.
//
// On top of the specification, OpenAI's convention: the data "[DONE]" ends
// the stream, and an event whose data is blank carries nothing. An event
// of type "error" is the server reporting a failure.
//
// The data buffer is reused from event to event, so a stream allocates
// only while its largest event grows it.
type sseFrame struct {
	data    []byte
	hasData bool // a data field was seen since the last dispatch
	isError bool // the event's type is "error"
	started bool // a line was read (the BOM is only skipped before)
}

func (*sseFrame) accept() string { return "text/event-stream" }

func (*sseFrame) crEnds() bool { return true }

func (f *sseFrame) line(b []byte, eof bool) ([]byte, event) {
	if !f.started {
		f.started = true
		b = bytes.TrimPrefix(b, sseBOM)
	}
	if eof {
		// The stream ended; an event not dispatched yet is discarded, with
		// one exception: the end marker itself, which some recorded
		// streams end with and no blank line (nothing could follow it).
		if len(b) > 0 {
			f.field(b)
		}
		if f.hasData && bytes.Equal(bytes.TrimSpace(f.data), sseDone) {
			return nil, evEnd
		}
		return nil, evNone
	}
	if len(b) == 0 {
		return f.dispatchEvent()
	}
	f.field(b)
	return nil, evNone
}

// field handles a line that is not blank: a comment or a field.
func (f *sseFrame) field(b []byte) {
	if b[0] == ':' {
		return
	}
	name, value := b, []byte(nil)
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		name, value = b[:i], b[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		f.data = append(f.data, value...)
		f.data = append(f.data, '\n')
		f.hasData = true
	case "event":
		f.isError = string(value) == "error"
	}
}

// dispatchEvent ends the event at a blank line.
func (f *sseFrame) dispatchEvent() ([]byte, event) {
	isError, hasData := f.isError, f.hasData
	f.isError, f.hasData = false, false
	if !hasData {
		f.data = f.data[:0]
		return nil, evNone
	}
	// data keeps the buffer's bytes until the next line appends to it.
	data := f.data[:len(f.data)-1] // less the final LF
	f.data = f.data[:0]
	switch {
	case isError:
		return data, evError
	case len(bytes.TrimSpace(data)) == 0:
		return nil, evNone
	case bytes.Equal(bytes.TrimSpace(data), sseDone):
		return nil, evEnd
	}
	return data, evData
}

func (f *sseFrame) pending() []byte {
	if !f.hasData {
		return nil
	}
	return f.data
}
