package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/jsonerr"
	"github.com/servebench/servebench/internal/limits"
)

// maxLineBytes bounds one line of a JSON Lines trace (16 MiB: a row is
// a few dozen bytes, a row with a long session name a few hundred).
const maxLineBytes = 16 << 20

// rowParser turns one JSON line into a Row.
type rowParser func(line []byte) (Row, error)

// readJSONLines reads a JSON Lines trace, one object per line; blank lines
// are skipped.
func readJSONLines(br *bufio.Reader, file string, t *Trace, parse rowParser) error {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var skip skipped
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) == 0 {
			continue
		}
		r, err := parse(line)
		if err != nil {
			return &ParseError{File: file, Line: n, Err: err}
		}
		r.Line = n
		if skip.keep(r) {
			t.Rows = append(t.Rows, r)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return &ParseError{File: file, Line: n + 1, Err: fmt.Errorf("a line longer than %d MiB, the most a trace row may be", maxLineBytes>>20)}
	} else if err != nil {
		return &ParseError{File: file, Line: n + 1, Err: err}
	}
	skip.notes(t)
	return nil
}

// decodeStrict decodes one JSON object into v: trailing data is an error,
// and so are keys none of known names when known is not nil (the keys of
// v: encoding/json matches them regardless of case, and so does this).
// A valid line takes json.Unmarshal and a scan of its keys, which
// allocate far less than a Decoder per line (a trace has millions); a
// line that fails is decoded again with a Decoder, for its error.
func decodeStrict(line []byte, v any, known []string) error {
	if line[0] != '{' {
		return errors.New("not a JSON object")
	}
	if json.Unmarshal(line, v) == nil {
		if known == nil {
			return nil
		}
		key, ok := unknownKey(line, known)
		if !ok {
			return nil
		}
		return fmt.Errorf("%w %q", errUnknownField, key)
	}
	strict := known != nil
	dec := json.NewDecoder(bytes.NewReader(line))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			return fmt.Errorf("%w %s", errUnknownField, strings.TrimPrefix(msg, "json: unknown field "))
		}
		return jsonerr.Describe(err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// unknownKey returns the first top-level key of the valid JSON object
// line that matches none of known regardless of case; false when all do.
func unknownKey(line []byte, known []string) (string, bool) {
	i := 1 // past the '{'
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] == '}' {
			return "", false
		}
		if line[i] == ',' {
			i++
			continue
		}
		end := endOfString(line, i)
		raw := line[i:end]
		key := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			_ = json.Unmarshal(raw, &key)
		}
		if !slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, key) }) {
			return key, true
		}
		i = skipSpace(line, end) + 1 // past the ':'
		i = skipValue(line, skipSpace(line, i))
	}
}

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// endOfString returns the index just past the JSON string starting at
// b[i] (a '"').
func endOfString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = endOfString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// servebenchKeys are the keys of servebench's layout.
var servebenchKeys = []string{"t_ms", "input_tokens", "output_tokens", "session", "turn", "think_ms", "image", "prefix_group"}

// errUnknownField is a key the layout does not have.
var errUnknownField = errors.New("unknown field")

// servebenchLine is one line of servebench's own layout.
type servebenchLine struct {
	TMs          *float64        `json:"t_ms"`
	InputTokens  *int            `json:"input_tokens"`
	OutputTokens *int            `json:"output_tokens"`
	Session      json.RawMessage `json:"session"`
	Turn         *int            `json:"turn"`
	ThinkMs      *float64        `json:"think_ms"`
	Image        json.RawMessage `json:"image"`
	PrefixGroup  json.RawMessage `json:"prefix_group"`
}

// servebenchRow parses a line of servebench's layout.
func servebenchRow(line []byte) (Row, error) {
	var l servebenchLine
	if err := decodeStrict(line, &l, servebenchKeys); err != nil {
		if errors.Is(err, errUnknownField) {
			err = fmt.Errorf("%w (servebench trace keys: t_ms, input_tokens, output_tokens, session, turn, think_ms, image, prefix_group)", err)
		}
		return Row{}, err
	}
	var r Row
	var err error
	if r.At, err = millis("t_ms", l.TMs); err != nil {
		return r, err
	}
	if r.InputTokens, err = count("input_tokens", l.InputTokens); err != nil {
		return r, err
	}
	if r.OutputTokens, err = count("output_tokens", l.OutputTokens); err != nil {
		return r, err
	}
	if r.Session, err = name("session", l.Session); err != nil {
		return r, err
	}
	if r.PrefixGroup, err = name("prefix_group", l.PrefixGroup); err != nil {
		return r, err
	}
	if l.Turn != nil {
		if *l.Turn < 1 {
			return r, fmt.Errorf("field turn: %d, want the turn's number in its session, from 1", *l.Turn)
		}
		r.Turn = *l.Turn
	}
	if l.ThinkMs != nil {
		if r.Session == "" || r.Turn < 2 {
			return r, errors.New("field think_ms: a think time belongs to a session's later turn (session, and turn 2 or more)")
		}
		think, err := millis("think_ms", l.ThinkMs)
		if err != nil {
			return r, err
		}
		r.Think = &think
	}
	if r.Images, err = images(l.Image); err != nil {
		return r, err
	}
	return r, nil
}

// mooncakeLine is one line of a Mooncake trace.
type mooncakeLine struct {
	Timestamp    *float64        `json:"timestamp"`
	InputLength  *int            `json:"input_length"`
	OutputLength *int            `json:"output_length"`
	HashIDs      []int           `json:"hash_ids"`
	SessionID    json.RawMessage `json:"session_id"`
}

// mooncakeRow parses a line of a Mooncake trace.
func mooncakeRow(line []byte) (Row, error) {
	var l mooncakeLine
	if err := decodeStrict(line, &l, nil); err != nil {
		return Row{}, err
	}
	var r Row
	var err error
	if r.At, err = millis("timestamp", l.Timestamp); err != nil {
		return r, err
	}
	if r.InputTokens, err = count("input_length", l.InputLength); err != nil {
		return r, err
	}
	if r.OutputTokens, err = count("output_length", l.OutputLength); err != nil {
		return r, err
	}
	if r.Session, err = name("session_id", l.SessionID); err != nil {
		return r, err
	}
	for i, h := range l.HashIDs {
		if h < 0 {
			return r, fmt.Errorf("field hash_ids[%d]: %d, want a block id ≥ 0", i, h)
		}
	}
	r.HashIDs = l.HashIDs
	return r, nil
}

// maxMillis bounds arrival times: 10¹² ms, about 31 years, well inside a
// time.Duration.
const maxMillis = 1e12

// millis checks a required arrival time in milliseconds.
func millis(field string, v *float64) (time.Duration, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("field %s missing (the arrival time, milliseconds)", field)
	case !(*v >= 0) || *v >= maxMillis:
		return 0, fmt.Errorf("field %s: %v, want milliseconds from 0 to below %.0e", field, *v, float64(maxMillis))
	}
	return time.Duration(math.Round(*v * float64(time.Millisecond))), nil
}

// count checks a required token count.
func count(field string, v *int) (int, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("field %s missing (a token count)", field)
	case *v < 0 || *v > limits.MaxTokens:
		return 0, fmt.Errorf("field %s: %d, want a token count from 0 to %d", field, *v, limits.MaxTokens)
	}
	return *v, nil
}

// name reads an optional identifier given as a string or an integer.
func name(field string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return strconv.FormatInt(n, 10), nil
	}
	return "", fmt.Errorf("field %s: %s, want a string or an integer", field, clip(raw))
}

// maxImages bounds the images of one request.
const maxImages = 16

// images reads servebench's optional image: a count, or true for one.
func images(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n < 0 || n > maxImages {
		return 0, fmt.Errorf("field image: %s, want the number of images (0 to %d) or true/false", clip(raw), maxImages)
	}
	return n, nil
}
