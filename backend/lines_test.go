package backend

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/servebench/servebench/record"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 10000) // longer than the 4 KiB buffer
	tests := []struct {
		name  string
		in    string
		lines []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"unterminated last", "a\nb", []string{"a", "b"}},
		{"long line", "s\n" + long + "\ne\n", []string{"s", long, "e"}},
		{"blank lines", "\n\nz\n", []string{"", "", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(tt.in))
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
					break
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.lines, "|") {
				t.Errorf("lines = %q, want %q", got, tt.lines)
			}
		})
	}
}

func TestLineTooLong(t *testing.T) {
	lr := newLineReader(io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("y"), maxLine+1)), strings.NewReader("\n")))
	defer lr.release()
	_, err := lr.next()
	var f *failure
	if !errors.As(err, &f) || f.reason != record.ReasonMalformed {
		t.Fatalf("err = %v, want a malformed-chunk failure", err)
	}
}

func TestSSEFraming(t *testing.T) {
	tests := []struct {
		line    string
		data    string
		ok, end bool
	}{
		{`data: {"a":1}`, `{"a":1}`, true, false},
		{`data:{"a":1}`, `{"a":1}`, true, false},
		{`data: [DONE]`, "", false, true},
		{`data:[DONE]  `, "", false, true},
		{`: keep-alive`, "", false, false},
		{`event: message`, "", false, false},
		{`data: `, "", false, false},
		{``, "", false, false},
	}
	for _, tt := range tests {
		data, ok, end := sseFrame{}.payload([]byte(tt.line))
		if string(data) != tt.data || ok != tt.ok || end != tt.end {
			t.Errorf("payload(%q) = %q %v %v, want %q %v %v", tt.line, data, ok, end, tt.data, tt.ok, tt.end)
		}
	}
}
