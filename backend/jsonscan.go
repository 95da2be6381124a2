package backend

import (
	"errors"
	"math"
	"strconv"

	"github.com/servebench/servebench/record"
)

// jsonScan is a small validating JSON reader for the per-chunk hot path.
// encoding/json costs ~3.5 µs and 8 allocations per vLLM chunk (it scans
// twice and reflects); the chunk decoders only need a handful of fields, so
// they walk the object with jsonScan, skip everything else, and allocate
// nothing. It validates what it walks (strings, escapes, numbers, literals,
// nesting up to maxDepth, nothing after the top value), so a malformed chunk
// is still an error. Keys are compared unescaped-as-sent: servers do not
// escape ASCII key names.
type jsonScan struct {
	b     []byte
	i     int
	depth int
}

// maxDepth bounds nesting, so hostile input cannot recurse without limit.
const maxDepth = 256

var errJSON = errors.New("invalid JSON")

type jsonError struct {
	what string
	at   int
}

func (e *jsonError) Error() string {
	return "invalid JSON: " + e.what + " at byte " + strconv.Itoa(e.at)
}
func (e *jsonError) Unwrap() error { return errJSON }

func (s *jsonScan) reset(b []byte) { s.b, s.i, s.depth = b, 0, 0 }

func (s *jsonScan) fail(what string) error { return &jsonError{what: what, at: s.i} }

func (s *jsonScan) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end checks that nothing but whitespace follows the top-level value.
func (s *jsonScan) end() error {
	if s.peek() != 0 || s.i != len(s.b) {
		return s.fail("trailing data")
	}
	return nil
}

// null consumes a null literal if one is next.
func (s *jsonScan) null() bool {
	if s.peek() == 'n' && s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// open consumes '{' or '[' (c) and enters it; isNull reports a null instead.
func (s *jsonScan) open(c byte) (isNull bool, err error) {
	if s.null() {
		return true, nil
	}
	if s.peek() != c {
		return false, s.fail("expected " + string(c))
	}
	s.i++
	s.depth++
	if s.depth > maxDepth {
		return false, s.fail("nesting too deep")
	}
	return false, nil
}

// member reads the n-th member of the object just opened: its key, or
// more=false at the closing brace.
func (s *jsonScan) member(n int) (key []byte, more bool, err error) {
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return nil, false, nil
	}
	if n > 0 {
		if c != ',' {
			return nil, false, s.fail("expected , or }")
		}
		s.i++
	}
	if key, err = s.str(); err != nil {
		return nil, false, err
	}
	if s.peek() != ':' {
		return nil, false, s.fail("expected :")
	}
	s.i++
	return key, true, nil
}

// fields reads the members of the object just opened up to its closing
// brace, handing each key to field, which must consume the value. It
// stops at the first error.
func (s *jsonScan) fields(field func(key []byte) error) error {
	for n := 0; ; n++ {
		key, more, err := s.member(n)
		if err != nil || !more {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// object reads an object, or null, member by member (see fields).
func (s *jsonScan) object(field func(key []byte) error) error {
	if null, err := s.open('{'); err != nil || null {
		return err
	}
	return s.fields(field)
}

// element positions on the n-th element of the array just opened, or
// returns more=false at the closing bracket.
func (s *jsonScan) element(n int) (more bool, err error) {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false, nil
	}
	if n > 0 {
		if c != ',' {
			return false, s.fail("expected , or ]")
		}
		s.i++
	}
	return true, nil
}

// strStop marks the bytes that end the fast scan of a string's contents.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str reads a string and returns its raw contents, escapes not decoded.
func (s *jsonScan) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail("expected string")
	}
	b := s.b
	start := s.i + 1
	j := start
	for {
		// Four bytes a step while none ends the plain run (most strings
		// are keys and short texts), then byte by byte.
		for j+4 <= len(b) && !strStop[b[j]] && !strStop[b[j+1]] && !strStop[b[j+2]] && !strStop[b[j+3]] {
			j += 4
		}
		for j < len(b) && !strStop[b[j]] {
			j++
		}
		if j >= len(b) {
			s.i = len(b)
			return nil, s.fail("unterminated string")
		}
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:j], nil
		case c == '\\':
			n, ok := escapeLen(b[j+1:])
			if !ok {
				s.i = j
				return nil, s.fail("bad escape")
			}
			j += n + 1
		default:
			s.i = j
			return nil, s.fail("control character in string")
		}
	}
}

// escapeLen is the length of the escape after a backslash.
func escapeLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1, true
	case 'u':
		if len(b) < 5 {
			return 0, false
		}
		for _, h := range b[1:5] {
			if !isHex(h) {
				return 0, false
			}
		}
		return 5, true
	}
	return 0, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads a JSON number and returns its text.
func (s *jsonScan) number() ([]byte, error) {
	s.ws()
	start, b := s.i, s.b
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	d := digits(b, j)
	if d == j || b[j] == '0' && d > j+1 {
		return nil, s.fail("expected number")
	}
	j = d
	if j < len(b) && b[j] == '.' {
		if d = digits(b, j+1); d == j+1 {
			return nil, s.fail("bad fraction")
		}
		j = d
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if d = digits(b, j); d == j {
			return nil, s.fail("bad exponent")
		}
		j = d
	}
	s.i = j
	return b[start:j], nil
}

func digits(b []byte, j int) int {
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j
}

// skip validates and skips one value of any type.
func (s *jsonScan) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.skipContainer('{')
	case c == '[':
		return s.skipContainer('[')
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		_, err := s.number()
		return err
	}
}

func (s *jsonScan) skipContainer(c byte) error {
	if _, err := s.open(c); err != nil {
		return err
	}
	for n := 0; ; n++ {
		var more bool
		var err error
		if c == '{' {
			_, more, err = s.member(n)
		} else {
			more, err = s.element(n)
		}
		if err != nil || !more {
			return err
		}
		if err := s.skip(); err != nil {
			return err
		}
	}
}

func (s *jsonScan) literal(lit string) error {
	if s.i+len(lit) > len(s.b) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.fail("bad literal")
	}
	s.i += len(lit)
	return nil
}

// nonEmptyString reads a value and reports whether it is a non-empty
// string (null, "" and other types are false).
func (s *jsonScan) nonEmptyString() (bool, error) {
	if s.peek() != '"' {
		return false, s.skip()
	}
	v, err := s.str()
	return len(v) > 0, err
}

// stringContents reads a value and returns its raw contents (escapes not
// decoded) if it is a string; null and other types give nil.
func (s *jsonScan) stringContents() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.skip()
	}
	return s.str()
}

// stringOrNull reads a string's raw contents; null gives nil.
func (s *jsonScan) stringOrNull() ([]byte, error) {
	if s.null() {
		return nil, nil
	}
	return s.str()
}

// boolean reads true or false (null is false).
func (s *jsonScan) boolean() (bool, error) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	case 'n':
		return false, s.literal("null")
	}
	return false, s.fail("expected boolean")
}

// integer reads a number as an int64; null gives -1. Fractions are
// truncated (a duration sent as 12.5 ns is 12); negative values give -1.
// Token counts are read with count instead, which refuses what cannot be
// a count.
func (s *jsonScan) integer() (int64, error) {
	if s.null() {
		return -1, nil
	}
	num, err := s.number()
	if err != nil {
		return -1, err
	}
	if v, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return max(v, -1), nil
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f < 0 || f > 1<<62 {
		return -1, nil
	}
	return int64(f), nil
}

// countInvalid is what count gives for a number that cannot be a count.
const countInvalid = -2

// count reads a token count: null gives -1; a whole number from 0 to
// record.MaxTokenCount gives itself (written as an integer, or as a float
// with no fraction: 12.0, 1e3); anything else (a fraction like 2.7, a
// negative number, a larger one) gives countInvalid and the number's text
// in raw, for the warning that says it was left null. It does not
// allocate.
func (s *jsonScan) count() (v int64, raw []byte, err error) {
	if s.null() {
		return -1, nil, nil
	}
	num, err := s.number()
	if err != nil {
		return -1, nil, err
	}
	if v, ok := smallUint(num); ok {
		if v > record.MaxTokenCount {
			return countInvalid, num, nil
		}
		return v, nil, nil
	}
	if v, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		if v < 0 || v > record.MaxTokenCount {
			return countInvalid, num, nil
		}
		return v, nil, nil
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f < 0 || f > record.MaxTokenCount || f != math.Trunc(f) {
		return countInvalid, num, nil
	}
	return int64(f), nil, nil
}

// smallUint is the value of b when it is 1 to 18 decimal digits (so it
// fits an int64 without overflow checks), as strconv.ParseInt would read
// it; ok is false for anything else (a sign, a fraction, an exponent, a
// longer number), which the caller parses the slow way. Token counts take
// this path on every chunk.
func smallUint(b []byte) (v int64, ok bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// float reads a number; null gives -1.
func (s *jsonScan) float() (float64, error) {
	if s.null() {
		return -1, nil
	}
	num, err := s.number()
	if err != nil {
		return -1, err
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f < 0 {
		return -1, nil
	}
	return f, nil
}
