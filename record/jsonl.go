package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Encoder writes Results as JSON Lines, one per line, flushing after each so
// that a crash loses at most the requests still in flight. Each line reaches
// the writer in one Write call. An Encoder is not safe for concurrent use.
type Encoder struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	bw := bufio.NewWriter(w)
	return &Encoder{w: bw, enc: json.NewEncoder(bw)}
}

// Encode writes r as one line and flushes it.
func (e *Encoder) Encode(r *Result) error { return e.write(r) }

// write encodes v as one line and flushes it, so the line reaches the file
// whole before the next request ends.
func (e *Encoder) write(v any) error {
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	return e.w.Flush()
}

// DecodeError is a malformed line of a records file.
type DecodeError struct {
	Line int
	Err  error
}

func (e *DecodeError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reads every Result of a JSON Lines stream, skipping the header,
// level_end and run_end marker lines of a records file (see DecodeFile).
// Blank lines are skipped; a malformed line is a *DecodeError carrying its
// line number.
func Decode(r io.Reader) ([]Result, error) {
	f, err := DecodeFile(r)
	return f.Results, err
}
