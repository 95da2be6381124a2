package backend

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/servebench/servebench/record"
)

// maxLine bounds one SSE or NDJSON line; a longer one is a malformed chunk.
const maxLine = 8 << 20

// readerPool recycles the 4 KiB line buffers of finished streams, so a
// request allocates none in the steady state.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// lineReader yields the lines of a stream without copying them in the
// common case: a line that fits the buffer is returned in place (valid
// until the next call); a longer one is gathered in a scratch buffer that
// is kept for the next long line.
//
// A line ends at LF or CR LF; with crEnds (Server-Sent Events, whose
// specification allows all three) a lone CR ends one too.
type lineReader struct {
	br     *bufio.Reader
	long   []byte
	crEnds bool
	// skipLF: the last line ended with a CR that was the last byte read;
	// an LF right after it belongs to that line end (CR LF).
	skipLF bool
}

func newLineReader(r io.Reader) *lineReader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return &lineReader{br: br}
}

// release returns the buffer to the pool; the lineReader is unusable after.
func (l *lineReader) release() {
	l.br.Reset(nil)
	readerPool.Put(l.br)
	l.br = nil
}

// next returns the next line without its line end. At the end of the
// stream it returns io.EOF, with the unterminated last line if there was
// one (len(line) > 0). Other read errors are returned as they are.
func (l *lineReader) next() ([]byte, error) {
	if l.skipLF {
		l.skipLF = false
		if b, err := l.br.Peek(1); err == nil && b[0] == '\n' {
			_, _ = l.br.Discard(1)
		}
	}
	if l.crEnds {
		return l.nextAnyEnd()
	}
	line, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return l.nextLong(line)
	}
	return trimEOL(line), err
}

func (l *lineReader) nextLong(first []byte) ([]byte, error) {
	l.long = append(l.long[:0], first...)
	for {
		part, err := l.br.ReadSlice('\n')
		l.long = append(l.long, part...)
		if len(l.long) > maxLine {
			return nil, errLineTooLong()
		}
		if err != bufio.ErrBufferFull {
			return trimEOL(l.long), err
		}
	}
}

func errLineTooLong() *failure {
	return failf(record.ReasonMalformed, "malformed chunk: line longer than %d bytes", maxLine)
}

// nextAnyEnd is next where LF, CR LF and a lone CR all end a line. It
// searches the buffered bytes in place and waits for more only when they
// hold no line end, so a line is returned as soon as its end arrives.
func (l *lineReader) nextAnyEnd() ([]byte, error) {
	long := false
	searched := 0 // bytes at the front of the buffer known to hold no line end
	for {
		buf, _ := l.br.Peek(l.br.Buffered())
		if i := indexLineEnd(buf[searched:]); i >= 0 {
			i += searched
			line := buf[:i]
			n := i + 1
			if buf[i] == '\r' {
				switch {
				case i+1 < len(buf) && buf[i+1] == '\n':
					n++
				case i+1 == len(buf):
					l.skipLF = true
				}
			}
			_, _ = l.br.Discard(n) // line stays valid until the next read
			if long {
				return l.appendLong(line)
			}
			return line, nil
		}
		searched = len(buf)
		if len(buf) == l.br.Size() { // a full buffer without a line end
			if !long {
				l.long, long = l.long[:0], true
			}
			if _, err := l.appendLong(buf); err != nil {
				return nil, err
			}
			_, _ = l.br.Discard(len(buf))
			searched = 0
			continue
		}
		if _, err := l.br.Peek(len(buf) + 1); err != nil {
			rest, _ := l.br.Peek(l.br.Buffered())
			_, _ = l.br.Discard(len(rest))
			if long {
				line, lerr := l.appendLong(rest)
				if lerr != nil {
					return nil, lerr
				}
				return line, err
			}
			return rest, err
		}
	}
}

// appendLong adds b to the long-line scratch buffer, within maxLine.
func (l *lineReader) appendLong(b []byte) ([]byte, error) {
	l.long = append(l.long, b...)
	if len(l.long) > maxLine {
		return nil, errLineTooLong()
	}
	return l.long, nil
}

// indexLineEnd is the index of the first CR or LF in b, or -1.
func indexLineEnd(b []byte) int {
	end := len(b)
	lf := bytes.IndexByte(b, '\n')
	if lf >= 0 {
		end = lf
	}
	if cr := bytes.IndexByte(b[:end], '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// trimEOL removes a line's LF or CR LF end; an unterminated last line is
// left as it is.
func trimEOL(b []byte) []byte {
	if !bytes.HasSuffix(b, []byte{'\n'}) {
		return b
	}
	b = b[:len(b)-1]
	return bytes.TrimSuffix(b, []byte{'\r'})
}
