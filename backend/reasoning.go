package backend

import (
	"bytes"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Reasoning models stream their reasoning before the answer, in one of two
// ways (docs/metrics.md, "Reasoning models"):
//
//   - in a field of its own: reasoning_content (DeepSeek's API, SGLang,
//     llama.cpp with a reasoning format, vLLM up to 0.10) or reasoning (vLLM
//     from 0.11, which keeps reasoning_content as an alias) in an
//     OpenAI-style delta; thinking in Ollama's messages (/api/chat) and
//     lines (/api/generate);
//   - inside the content, between <think> and </think> (a server without a
//     reasoning parser, a raw model; DeepSeek-R1's template opens the tag
//     in the prompt, so its content has only the closing one).
//
// chunkText is what one chunk carried, as the decoders found it: the raw
// bytes of its content string (JSON escapes not decoded; they point into
// the chunk's line) and whether a reasoning field was non-empty.
type chunkText struct {
	content   []byte
	reasoning bool
}

// any reports whether the chunk carried generated text of any kind (what
// TTFT waits for).
func (c chunkText) any() bool { return len(c.content) > 0 || c.reasoning }

// chunkKind is what a chunk's generated text was, after think tags.
type chunkKind struct {
	// reasoning: reasoning text (a reasoning field, or content inside
	// <think>…</think>, the tags included).
	reasoning bool
	// answer: content outside think tags; visible: some of it was not
	// white space (the time to first answer token waits for that).
	answer, visible bool
}

var (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkState is where a stream's content stands with respect to think
// tags.
type thinkState uint8

const (
	// thinkStart: nothing but white space yet; a <think> here opens
	// reasoning.
	thinkStart thinkState = iota
	// thinkOpening: matching a <think> at the start.
	thinkOpening
	// thinkInside: inside <think>…</think>.
	thinkInside
	// thinkAnswer: the answer (after </think>, or content that did not
	// open with <think>).
	thinkAnswer
)

// thinkScanner follows <think>…</think> in the content of one stream, across
// chunk boundaries, byte by byte over the raw JSON string (escapes decoded
// on the fly: Go servers such as Ollama send "<" as \u003c). A <think> counts
// only at the start of the content; a </think> in content that never
// opened one (DeepSeek-R1) makes all content before it reasoning, which the
// stream reclassifies (closedUnopened).
type thinkScanner struct {
	state thinkState
	match int // bytes of the tag being matched
	// closedUnopened is set when a </think> closed reasoning that no
	// <think> or reasoning field had opened.
	closedUnopened bool
}

// scan classifies one chunk's raw content; reclassify reports that all
// earlier content was reasoning (a </think> without <think>).
func (t *thinkScanner) scan(raw []byte) (k chunkKind, reclassify bool) {
	if t.state == thinkAnswer && t.match == 0 && !mayHoldTag(raw) {
		// The common case, an answer chunk without '<': no tag to follow.
		return chunkKind{answer: true, visible: !allSpace(raw)}, false
	}
	for i := 0; i < len(raw); {
		c, n := unescapeASCII(raw[i:])
		i += n
		switch t.state {
		case thinkStart, thinkOpening:
			if t.state == thinkStart && isSpace(c) {
				k.answer = true
				continue
			}
			if c == thinkOpen[t.match] {
				t.state = thinkOpening
				if t.match++; t.match == len(thinkOpen) {
					t.state, t.match, k.reasoning = thinkInside, 0, true
				}
				continue
			}
			t.state, t.match = thinkAnswer, 0
			k.answer, k.visible = true, true
			t.watchClose(c) // content may close an unopened think
		case thinkInside:
			k.reasoning = true
			if t.advance(c, thinkClose) {
				t.state = thinkAnswer
			}
		case thinkAnswer:
			k.answer = true
			if !isSpace(c) {
				k.visible = true
			}
			if t.watchClose(c) {
				reclassify = true
				k = chunkKind{reasoning: true}
			}
		}
	}
	if t.state == thinkOpening {
		k.reasoning = true // a tag cut by the chunk's end: most likely <think>
	}
	return k, reclassify
}

// mayHoldTag reports whether raw JSON string contents may hold a '<',
// plain or escaped (\u003c).
func mayHoldTag(raw []byte) bool {
	return bytes.IndexByte(raw, '<') >= 0 || bytes.Contains(raw, escapedLT)
}

var escapedLT = []byte(`\u003c`)

// allSpace reports whether raw JSON string contents are only white space
// (plain, or escaped as \n, \t, \r).
func allSpace(raw []byte) bool {
	for i := 0; i < len(raw); {
		c, n := unescapeASCII(raw[i:])
		if !isSpace(c) {
			return false
		}
		i += n
	}
	return true
}

// watchClose matches </think> in answer content that never opened one; it
// reports the first match.
func (t *thinkScanner) watchClose(c byte) bool {
	if t.closedUnopened {
		return false
	}
	if t.advance(c, thinkClose) {
		t.closedUnopened = true
		return true
	}
	return false
}

// advance matches c against tag; it reports a complete match.
func (t *thinkScanner) advance(c byte, tag string) bool {
	switch {
	case c == tag[t.match]:
		t.match++
		if t.match == len(tag) {
			t.match = 0
			return true
		}
	case c == tag[0]:
		t.match = 1
	default:
		t.match = 0
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// unescapeASCII decodes the character at the start of raw JSON string
// contents: an ASCII byte as itself, an escape as the ASCII character it
// stands for, and anything else (UTF-8 bytes, \u escapes beyond ASCII) as
// 0x80, a visible non-ASCII stand-in. n is the bytes consumed.
func unescapeASCII(raw []byte) (c byte, n int) {
	if raw[0] != '\\' || len(raw) < 2 {
		return raw[0], 1
	}
	switch raw[1] {
	case 'n':
		return '\n', 2
	case 't':
		return '\t', 2
	case 'r':
		return '\r', 2
	case 'b', 'f':
		return 0x80, 2
	case 'u':
		if len(raw) < 6 {
			return 0x80, len(raw)
		}
		v := hexValue(raw[2:6])
		if v < 0x80 {
			return byte(v), 6
		}
		return 0x80, 6
	}
	return raw[1], 2 // \" \\ \/
}

// hexValue is the value of four hex digits (validated by jsonScan.str).
func hexValue(h []byte) rune {
	var v rune
	for _, c := range h {
		v <<= 4
		switch {
		case '0' <= c && c <= '9':
			v |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			v |= rune(c-'a') + 10
		case 'A' <= c && c <= 'F':
			v |= rune(c-'A') + 10
		}
	}
	return v
}

// appendJSONString appends raw JSON string contents to b, escapes decoded
// (surrogate pairs joined; an unpaired surrogate becomes U+FFFD).
func appendJSONString(b *strings.Builder, raw []byte) {
	for i := 0; i < len(raw); {
		j := i
		for j < len(raw) && raw[j] != '\\' {
			j++
		}
		b.Write(raw[i:j])
		if j >= len(raw) {
			return
		}
		if j+1 >= len(raw) {
			return
		}
		switch e := raw[j+1]; e {
		case 'u':
			if j+6 > len(raw) {
				return
			}
			r := hexValue(raw[j+2 : j+6])
			i = j + 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hexValue(raw[i+2 : i+6])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r, i = d, i+6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			continue
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(e)
		}
		i = j + 2
	}
}

// reasoningTally is what a stream learned about reasoning and answer:
// arrival offsets of the first of each, chunk counts and, where the server
// gave per-chunk token counts, tokens per kind.
type reasoningTally struct {
	think thinkScanner
	// firstReasoning and firstAnswer are offsets from the send; -1 until
	// the first reasoning chunk and the first chunk with visible answer
	// text.
	firstReasoning, firstAnswer int64
	// firstContent is the offset of the first content (answer) chunk of
	// any kind, kept so a </think> without <think> can move it to
	// firstReasoning.
	firstContent int64
	// reasoningChunks and answerChunks count chunks of each kind; a chunk
	// with both counts in both.
	reasoningChunks, answerChunks int
	// reasoningTokens and answerTokens sum per-chunk token counts (vLLM
	// continuous usage) by kind; mixedTokens those of chunks with both.
	reasoningTokens, answerTokens, mixedTokens int
	lastKind                                   chunkKind
	// reported is the server's own reasoning token count
	// (usage.completion_tokens_details.reasoning_tokens); -1 when absent.
	reported int
}

func newReasoningTally() reasoningTally {
	return reasoningTally{firstReasoning: -1, firstAnswer: -1, firstContent: -1, reported: -1}
}

// add counts one chunk that arrived at offset off and carried tokens
// tokens (-1: unknown).
func (t *reasoningTally) add(c chunkText, off int64, tokens int) {
	var k chunkKind
	if len(c.content) > 0 {
		var reclassify bool
		k, reclassify = t.think.scan(c.content)
		if reclassify && t.firstReasoning < 0 {
			t.reclassify()
		}
	}
	if c.reasoning {
		k.reasoning = true
	}
	if k.reasoning {
		t.reasoningChunks++
		if t.firstReasoning < 0 {
			t.firstReasoning = off
		}
	}
	if k.answer {
		t.answerChunks++
		if t.firstContent < 0 {
			t.firstContent = off
		}
	}
	if k.visible && t.firstAnswer < 0 {
		t.firstAnswer = off
	}
	if tokens >= 0 {
		t.addTokens(k, tokens)
	}
	t.lastKind = k
}

// addTokens adds a chunk's tokens to its kind.
func (t *reasoningTally) addTokens(k chunkKind, n int) {
	switch {
	case k.reasoning && k.answer:
		t.mixedTokens += n
	case k.reasoning:
		t.reasoningTokens += n
	default:
		t.answerTokens += n
	}
}

// reclassify makes all content so far reasoning: a </think> closed a
// think that the prompt's template had opened (DeepSeek-R1).
func (t *reasoningTally) reclassify() {
	t.reasoningChunks += t.answerChunks
	t.answerChunks = 0
	t.firstReasoning = t.firstContent
	t.firstAnswer = -1
	t.reasoningTokens += t.answerTokens + t.mixedTokens
	t.answerTokens, t.mixedTokens = 0, 0
}

// split returns the reasoning token count of a request that generated
// output tokens (-1: unknown), and whether it is an estimate. The server's
// own count wins (but a zero beside streamed reasoning is no count: SGLang
// reports 0 by default); otherwise per-chunk token counts (perChunk: they
// covered every chunk; tail: tokens reported after the last chunk, which
// belong to it), else output × the reasoning share of chunks. ok is false
// when the stream carried no reasoning and the server reported no count.
func (t *reasoningTally) split(output int, perChunk bool, tail int) (reasoning int, estimated, ok bool) {
	if t.reported > 0 || t.reported == 0 && t.reasoningChunks == 0 {
		return t.reported, false, true
	}
	if t.reasoningChunks == 0 || output < 0 {
		return 0, false, false
	}
	if perChunk {
		if tail > 0 {
			t.addTokens(t.lastKind, tail)
		}
		return t.reasoningTokens + t.mixedTokens/2, true, true
	}
	share := float64(t.reasoningChunks) / float64(t.reasoningChunks+t.answerChunks)
	return int(math.Round(float64(output) * share)), true, true
}
