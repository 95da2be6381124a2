// Package safetext neutralises characters that change how text is shown
// rather than what it says: C0 and C1 control characters (ESC starts
// terminal escape sequences, NUL truncates C strings and breaks XML), DEL,
// the Unicode bidirectional overrides and isolates (U+202E turns
// "gpj.exe" into "exe.jpg" on screen) and the Unicode line separators.
// Strings that come from documents and servers (labels, model names,
// runtimes, warnings) pass through it at every human-facing output
// boundary.
//
// The two forms:
//   - Line, for text on one line: each such character is written as a
//     visible escape in Go's notation (\x1b, \x00, \u009b, \u202e); line
//     breaks and tabs become spaces; invalid UTF-8 becomes U+FFFD.
//   - JSON, for encoded JSON: the characters encoding/json leaves raw
//     (DEL, C1, bidirectional controls) are written as \uXXXX escapes, so
//     the file stays valid JSON, decodes to the same strings, and shows
//     no invisible control in an editor or terminal.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Hazard reports whether r is a character Line and JSON neutralise: a C0
// control other than the white space \n, \r and \t (which Line turns into
// spaces), DEL, a C1 control (U+0080–U+009F), a bidirectional control
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), a line or
// paragraph separator (U+2028, U+2029) or the byte-order mark U+FEFF.
func Hazard(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// escape is r in Go's escape notation: \x1b below U+0080, \u202e above.
func escape(r rune) string {
	if r < 0x80 {
		return `\x` + hex2(r)
	}
	q := strconv.QuoteRuneToASCII(r) // '\u202e'
	return q[1 : len(q)-1]
}

func hex2(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>4&0xf], digits[r&0xf]})
}

// Line makes s safe to show on one line: \n, \r and \t become spaces,
// every other Hazard becomes its visible escape (ESC → `\x1b`, U+202E →
// `\u202e`), invalid UTF-8 becomes U+FFFD. Text without hazards is
// returned as it is, without allocating.
func Line(s string) string {
	return rewrite(s, func(r rune) (string, bool) {
		if r == '\n' || r == '\r' || r == '\t' {
			return " ", true
		}
		return "", false
	})
}

// Lines is Line for text of several lines (an error quoting a server's
// log): line feeds and tabs are kept, every other hazard, a carriage
// return included, becomes its visible escape.
func Lines(s string) string {
	return rewrite(s, func(r rune) (string, bool) {
		if r == '\n' || r == '\t' {
			return string(r), true
		}
		return "", false
	})
}

// rewrite is s with each rune that layout replaces (ok) written as it
// says, every other Hazard as its escape, invalid UTF-8 as U+FFFD; s
// itself when it is clean.
func rewrite(s string, layout func(rune) (string, bool)) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if out, ok := layout(r); ok {
			b.WriteString(out)
			continue
		}
		if Hazard(r) {
			b.WriteString(escape(r))
		} else {
			b.WriteRune(r) // invalid UTF-8 arrives here as U+FFFD
		}
	}
	return b.String()
}

// clean reports whether s is valid UTF-8 without hazards.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Hazard(r) {
			return false
		}
		i += n
	}
	return true
}

// JSON returns encoded JSON b with every raw Hazard that encoding/json
// leaves unescaped (DEL, C1 controls, bidirectional controls, U+FEFF)
// written as a \uXXXX escape. Outside strings JSON holds only ASCII
// without controls, so every such character is inside a string, where
// the escape stands for the same character: the result decodes to the
// same value. b is returned as it is when it has none.
func JSON(b []byte) []byte {
	i := firstRawHazard(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf && c != 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if c == 0x7f || (n > 1 && Hazard(r)) {
			out = append(out, `\u`...)
			out = append(out, hex2(r>>8)...)
			out = append(out, hex2(r&0xff)...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// firstRawHazard is the offset of the first DEL or multi-byte Hazard in
// b, or -1.
func firstRawHazard(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if n > 1 && Hazard(r) {
			return i
		}
		i += n
	}
	return -1
}
