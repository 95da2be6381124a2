package backend

import (
	"bytes"
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// redacted replaces an API key wherever redact finds it.
const redacted = "[redacted]"

// maxEncodedKeyFactor bounds how many bytes one byte of a key may take in
// an encoded form redact recognises ("&#x0073;" is eight, "\u0073" six):
// an excerpt reads that much further, so a key that starts before the cut
// is found whole.
const maxEncodedKeyFactor = 10

// minBase64Key is the shortest key whose base64 forms are looked for:
// shorter ones would match unrelated text.
const minBase64Key = 8

// maxDecodePasses bounds the layers of encoding redact undoes (a
// percent-encoded key inside a JSON string is two).
const maxDecodePasses = 3

// redact removes the API key from text a server or proxy sent back, in
// every form one may echo it in: as sent; after decoding JSON string
// escapes ("\u0073k-…", "\/"), percent-encoding ("%73k-…") and HTML
// character references ("&#115;k-…"), in any mix and up to
// maxDecodePasses layers deep; and base64-encoded (standard or URL
// alphabet, at any byte alignment, as in an echoed "Basic" header), for
// keys of at least minBase64Key bytes. Each occurrence is replaced, in
// the text as received, by "[redacted]".
func redact(msg, key string) string {
	if key == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, key, redacted)
	msg = redactDecoded(msg, key)
	if len(key) >= minBase64Key {
		for _, form := range base64Forms(key) {
			msg = strings.ReplaceAll(msg, form, redacted)
		}
	}
	return msg
}

// redactDecoded replaces the spans of msg that decode to key.
func redactDecoded(msg, key string) string {
	if !strings.ContainsAny(msg, `\%&`) {
		return msg
	}
	// spans[i] is the span of msg that byte i of the decoded text came
	// from; every pass maps its output back through the previous ones.
	text := []byte(msg)
	spans := make([]span, len(text))
	for i := range spans {
		spans[i] = span{i, i + 1}
	}
	var hits []span
	for range maxDecodePasses {
		out, from, changed := decodeOnce(text)
		if !changed {
			break
		}
		next := make([]span, len(out))
		for i, f := range from {
			next[i] = span{spans[f.start].start, spans[f.end-1].end}
		}
		text, spans = out, next
		for off := 0; ; {
			i := bytes.Index(text[off:], []byte(key))
			if i < 0 {
				break
			}
			i += off
			hits = append(hits, span{spans[i].start, spans[i+len(key)-1].end})
			off = i + len(key)
		}
	}
	if len(hits) == 0 {
		return msg
	}
	return replaceSpans(msg, hits)
}

// span is a half-open byte range [start, end).
type span struct{ start, end int }

// replaceSpans replaces each span of s (merged where they overlap) with
// the redaction marker.
func replaceSpans(s string, hits []span) string {
	covered := make([]bool, len(s)+1)
	for _, h := range hits {
		for i := h.start; i < h.end; i++ {
			covered[i] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(redacted)
		for i < len(s) && covered[i] {
			i++
		}
	}
	return b.String()
}

// decodeOnce undoes one layer of JSON escapes, percent-encoding and HTML
// character references in b. from[i] is the span of b that output byte i
// came from. changed is false when nothing was decoded.
func decodeOnce(b []byte) (out []byte, from []span, changed bool) {
	out = make([]byte, 0, len(b))
	from = make([]span, 0, len(b))
	emit := func(p []byte, start, end int) {
		for _, c := range p {
			out = append(out, c)
			from = append(from, span{start, end})
		}
	}
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(b); {
		if r, raw, n := decodeEscape(b[i:]); n > 0 {
			if raw { // a percent-encoded byte is a byte, not a code point
				emit([]byte{byte(r)}, i, i+n)
			} else {
				emit(rb[:utf8.EncodeRune(rb[:], r)], i, i+n)
			}
			i += n
			changed = true
			continue
		}
		emit(b[i:i+1], i, i+1)
		i++
	}
	return out, from, changed
}

// decodeEscape decodes the escape at the start of b: a JSON escape
// (\uXXXX, \n, \/, ...) or an HTML character reference (&#NNN; or
// &#xHH;), which stand for a code point r, or a percent-encoded byte (%XX),
// which stands for the byte r (raw). n is 0 when b does not start with one.
func decodeEscape(b []byte) (r rune, raw bool, n int) {
	if len(b) < 2 {
		return 0, false, 0
	}
	switch b[0] {
	case '\\':
		if b[1] == 'u' && len(b) >= 6 {
			if v, ok := parseHex(b[2:6]); ok {
				return rune(v), false, 6
			}
			return 0, false, 0
		}
		if c, ok := jsonSimpleEscape[b[1]]; ok {
			return rune(c), false, 2
		}
	case '%':
		if len(b) >= 3 {
			if v, ok := parseHex(b[1:3]); ok {
				return rune(v), true, 3
			}
		}
	case '&':
		r, n := decodeCharRef(b)
		return r, false, n
	}
	return 0, false, 0
}

var jsonSimpleEscape = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// decodeCharRef decodes "&#NNN;" or "&#xHH;" at the start of b.
func decodeCharRef(b []byte) (rune, int) {
	if len(b) < 4 || b[1] != '#' {
		return 0, 0
	}
	end := bytes.IndexByte(b[:min(len(b), 12)], ';')
	if end < 3 {
		return 0, 0
	}
	digits, base := b[2:end], 10
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	var v int
	for _, c := range digits {
		d, ok := hexDigit(c)
		if !ok || d >= base {
			return 0, 0
		}
		v = v*base + d
	}
	if len(digits) == 0 || v > utf8.MaxRune {
		return 0, 0
	}
	return rune(v), end + 1
}

func parseHex(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		d, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func hexDigit(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// base64Forms are the parts of key's base64 encoding that do not depend on
// what surrounds the key: for each of the three byte alignments the key
// can have inside an encoded text, the characters made of key bits only,
// in the standard and the URL alphabet.
func base64Forms(key string) []string {
	var forms []string
	for lead := range 3 {
		buf := make([]byte, lead+len(key))
		copy(buf[lead:], key)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(buf)
			first := (lead*8 + 5) / 6         // the first character with no lead bits
			last := (lead + len(key)) * 8 / 6 // characters fully made of key bits end here
			if last-first >= 4 {
				forms = append(forms, s[first:last])
			}
		}
	}
	return forms
}

// Redact removes key from text in every form redact finds it in, for
// text from the server under test that reaches servebench by another path
// than a response (the HTTP library's log lines quote a server's bytes).
func Redact(text, key string) string { return redact(text, key) }
