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
type lineReader struct {
	br   *bufio.Reader
	long []byte
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

// next returns the next line without its "\n" or "\r\n". At the end of the
// stream it returns io.EOF, with the unterminated last line if there was
// one (len(line) > 0). Other read errors are returned as they are.
func (l *lineReader) next() ([]byte, error) {
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
			return nil, failf(record.ReasonMalformed, "malformed chunk: line longer than %d bytes", maxLine)
		}
		if err != bufio.ErrBufferFull {
			return trimEOL(l.long), err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
