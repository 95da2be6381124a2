package backend

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/servebench/servebench/record"
)

// readLines reads every line of in with a lineReader, one byte per read
// when slow is set (so a CR LF can be split across reads).
func readLines(t *testing.T, in string, crEnds, slow bool) []string {
	t.Helper()
	var r io.Reader = strings.NewReader(in)
	if slow {
		r = iotest.OneByteReader(r)
	}
	lr := newLineReader(r)
	lr.crEnds = crEnds
	defer lr.release()
	var got []string
	for {
		line, err := lr.next()
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if len(line) > 0 || err == nil {
			got = append(got, string(line))
		}
		if err == io.EOF {
			return got
		}
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 10000) // longer than the 4 KiB buffer
	tests := []struct {
		name  string
		in    string
		lines []string
		// crLines are the lines where a lone CR ends a line too (SSE);
		// nil means the same as lines.
		crLines []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}, nil},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}, nil},
		{"unterminated last", "a\nb", []string{"a", "b"}, nil},
		{"long line", "s\n" + long + "\ne\n", []string{"s", long, "e"}, nil},
		{"long line crlf", "s\r\n" + long + "\r\ne", []string{"s", long, "e"}, nil},
		{"blank lines", "\n\nz\n", []string{"", "", "z"}, nil},
		{"cr only", "a\rb\r\rc\r", []string{"a\rb\r\rc\r"}, []string{"a", "b", "", "c"}},
		{"mixed ends", "a\r\nb\rc\nd", []string{"a", "b\rc", "d"}, []string{"a", "b", "c", "d"}},
		{"cr then blank crlf", "a\r\r\n\n", []string{"a\r", ""}, []string{"a", "", ""}},
		{"long line cr", "s\r" + long + "\re", []string{"s\r" + long + "\re"}, []string{"s", long, "e"}},
	}
	for _, tt := range tests {
		for _, crEnds := range []bool{false, true} {
			for _, slow := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/crEnds=%v/slow=%v", tt.name, crEnds, slow), func(t *testing.T) {
					want := tt.lines
					if crEnds && tt.crLines != nil {
						want = tt.crLines
					}
					if got := readLines(t, tt.in, crEnds, slow); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Errorf("lines = %q, want %q", got, want)
					}
				})
			}
		}
	}
}

func TestLineTooLong(t *testing.T) {
	for _, crEnds := range []bool{false, true} {
		lr := newLineReader(io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("y"), maxLine+1)), strings.NewReader("\n")))
		lr.crEnds = crEnds
		_, err := lr.next()
		lr.release()
		var f *failure
		if !errors.As(err, &f) || f.reason != record.ReasonMalformed {
			t.Fatalf("crEnds=%v: err = %v, want a malformed-chunk failure", crEnds, err)
		}
	}
}

// sseEvents runs stream through the SSE framing as readStream does and
// lists what it dispatched: "data:<payload>", "end", "error:<data>", and
// at the end "pending:<data>" for an event the stream ended inside of.
func sseEvents(t *testing.T, stream string) []string {
	t.Helper()
	lr := newLineReader(iotest.HalfReader(strings.NewReader(stream)))
	lr.crEnds = true
	defer lr.release()
	fr := &sseFrame{}
	var got []string
	for {
		line, err := lr.next()
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		data, ev := fr.line(line, err == io.EOF)
		switch ev {
		case evData:
			got = append(got, "data:"+string(data))
		case evEnd:
			return append(got, "end")
		case evError:
			got = append(got, "error:"+string(data))
		}
		if err == io.EOF {
			if p := fr.pending(); len(p) > 0 {
				got = append(got, "pending:"+string(p))
			}
			return got
		}
	}
}

// TestSSEEvents checks the framing against the WHATWG specification of
// event streams (HTML, "Server-sent events", "Interpreting an event
// stream"), its examples included.
func TestSSEEvents(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{"lf", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`data:{"a":1}`, "end"}},
		{"crlf", "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n", []string{`data:{"a":1}`, "end"}},
		{"cr only", "data: {\"a\":1}\r\rdata: [DONE]\r\r", []string{`data:{"a":1}`, "end"}},
		{"no space after colon", "data:{\"a\":1}\n\n", []string{`data:{"a":1}`}},
		{"only one space is dropped", "data:  x\n\n", []string{"data: x"}},
		{"two data lines joined with LF", "data: {\"a\":\ndata: 1}\n\n", []string{"data:{\"a\":\n1}"}},
		{"spec example: stock ticker", "data: YHOO\ndata: +2\ndata: 10\n\n", []string{"data:YHOO\n+2\n10"}},
		{"spec example: comment and id", ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
			[]string{"data:first event", "data:second event", "data: third event"}},
		{"spec example: empty data is blank", "data\n\ndata\ndata\n\ndata:\n", []string{"pending:\n"}},
		{"comments, event, id, retry ignored", ": ping\nevent: message\nid: 7\nretry: 3000\ndata: x\n\n", []string{"data:x"}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []string{"data:x"}},
		{"blank line without data dispatches nothing", "event: message\n\n\n", nil},
		{"bom skipped at the start", "\uFEFFdata: x\n\n", []string{"data:x"}},
		{"bom elsewhere is a field name", "data: x\n\n\uFEFFdata: y\n\n", []string{"data:x"}},
		{"event type resets after dispatch", "event: error\ndata: boom\n\ndata: ok\n\n", []string{"error:boom", "data:ok"}},
		{"done with trailing space", "data: [DONE] \n\n", []string{"end"}},
		{"event not finished at the end is discarded", "data: x\n\ndata: y\n", []string{"data:x", "pending:y\n"}},
		{"except [DONE], the end either way", "data: x\n\ndata: [DONE]\n", []string{"data:x", "end"}},
		{"unterminated [DONE]", "data: x\n\ndata: [DONE]", []string{"data:x", "end"}},
		{"unterminated last line is discarded", "data: x\n\ndata: {\"cut", []string{"data:x", "pending:{\"cut\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sseEvents(t, tt.stream)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}
