// Package liblog turns what the libraries servebench uses write through
// the standard log package into warnings of the runs in progress.
//
// net/http reports some server misbehaviour only that way: a server that
// sends more bytes than its Content-Length makes the transport log
// "Unsolicited response received on idle HTTP channel starting with …"
// (net/http/transport.go, readLoopPeekFailLocked) through log.Printf, and
// neither http.Client nor http.Transport has a logger of its own to give
// it. The standard logger is one per process, so capturing it is a
// process-wide act: cmd/servebench does it once, visibly, with
// log.SetOutput(router), and hands the Router to the commands
// (cli.Deps.LibraryLog). A command subscribes for its duration and takes
// the lines logged meanwhile (Drain) into the warnings of its runs; a
// process runs one command, so those are its own. Lines logged while no
// command listens go to the fallback writer (standard error) as they are,
// so nothing is lost.
package liblog

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
)

// MaxLines is how many lines a Subscription keeps between two drains;
// later ones are counted.
const MaxLines = 20

// MaxLineBytes bounds one kept line (the transport quotes up to a whole
// buffer of the server's bytes).
const MaxLineBytes = 300

// Router receives the standard logger's output (it is an io.Writer for
// log.SetOutput) and hands each line to the current subscriptions, or to
// its fallback when there are none. It is safe for concurrent use.
type Router struct {
	mu       sync.Mutex
	fallback io.Writer
	subs     map[*Subscription]struct{}
}

// New returns a Router that writes to fallback what no subscription takes.
func New(fallback io.Writer) *Router {
	return &Router{fallback: fallback, subs: map[*Subscription]struct{}{}}
}

// Write takes one or more log lines. The log package writes each entry in
// one call, ending in a newline.
func (r *Router) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.subs) == 0 {
		return r.fallback.Write(p)
	}
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		for s := range r.subs {
			s.add(line)
		}
	}
	return len(p), nil
}

// Subscribe starts collecting lines until Close. redact, when not nil,
// is applied to every line (a server's bytes may echo the API key).
func (r *Router) Subscribe(redact func(string) string) *Subscription {
	s := &Subscription{r: r, redact: redact}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	return s
}

// Subscription collects the lines logged while it is open.
type Subscription struct {
	r       *Router
	redact  func(string) string
	lines   []string
	dropped int
}

// add keeps line, one printable line of at most MaxLineBytes, redacted.
// The Router's lock is held.
func (s *Subscription) add(line string) {
	if len(s.lines) >= MaxLines {
		s.dropped++
		return
	}
	if s.redact != nil {
		line = s.redact(line)
	}
	line = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, strings.ToValidUTF8(line, "?"))
	if len(line) > MaxLineBytes {
		line = strings.ToValidUTF8(line[:MaxLineBytes], "") + " …"
	}
	s.lines = append(s.lines, "library log: "+strings.TrimSpace(line))
}

// Drain returns the lines logged since the subscription began or was last
// drained, as warnings, with one more saying how many were left out beyond
// MaxLines.
func (s *Subscription) Drain() []string {
	if s == nil {
		return nil
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.drainLocked()
}

// Close stops the subscription and returns what Drain would. Drain and
// Close of a nil Subscription return nothing.
func (s *Subscription) Close() []string {
	if s == nil {
		return nil
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	delete(s.r.subs, s)
	return s.drainLocked()
}

func (s *Subscription) drainLocked() []string {
	out := s.lines
	if s.dropped > 0 {
		out = append(out, fmt.Sprintf("library log: %d more lines left out", s.dropped))
	}
	s.lines, s.dropped = nil, 0
	return out
}
