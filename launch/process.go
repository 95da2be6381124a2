package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Server is a launched server: one process group whose stdout and stderr
// go to LogPath, started by a watchdog process that stops the server's
// whole process tree (watchdog.go).
type Server struct {
	// Spec is what was launched.
	Spec *Spec
	// LogPath is the file holding the server's stdout and stderr.
	LogPath string

	pgid int
	done chan struct{}
	wd   *watchdog

	// Warnings are findings about the launch itself.
	Warnings []string

	mu       sync.Mutex
	state    string // how the main process exited, once done is closed
	stopped  bool   // Stop was called: the exit is ours, not a crash
	stopErr  error  // the watchdog's report on the stop
	stopDone chan struct{}
	exitOnce sync.Once
}

// ErrPortBusy is returned by Start when something already listens on the
// profile's port; a health check would otherwise pass against it.
var ErrPortBusy = errors.New("port already in use")

// Start launches s through a watchdog (watchdog.go): the server runs in
// a new process group, with stdout and stderr appended to a new file at
// logPath, and the watchdog stops its whole process tree on Stop or when
// servebench dies. Start returns once the server's process started; call
// WaitHealthy next and Stop always (defer it).
func Start(s *Spec, logPath string) (*Server, error) {
	if len(s.Argv) == 0 {
		return nil, errors.New("launch: empty command")
	}
	if err := portFree(s.Port); err != nil {
		return nil, fmt.Errorf("launch %s: 127.0.0.1:%d: %w", s.Label, s.Port, err)
	}
	bin, err := exec.LookPath(s.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("launch %s: %v", s.Label, err)
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, fmt.Errorf("launch %s: %v", s.Label, err)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("launch %s: log file: %v", s.Label, err)
	}
	defer f.Close() // the watchdog and the server hold their own copies
	wd, pid, reports, err := startWatchdog(bin, s.Argv, s.Environ(os.Environ()), f, s.StopGrace)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %v", s.Label, err)
	}
	srv := &Server{Spec: s, LogPath: logPath, pgid: pid, wd: wd, done: make(chan struct{}), stopDone: make(chan struct{})}
	go func() {
		readReports(reports, srv.exited, srv.stopReported)
		// The watchdog is gone: if it never reported the server's exit,
		// the server (SIGKILLed with it) is gone too.
		srv.exited("unknown status (its watchdog ended)")
	}()
	return srv, nil
}

// exited records how the server's main process ended, once.
func (s *Server) exited(how string) {
	s.exitOnce.Do(func() {
		s.mu.Lock()
		s.state = how
		s.mu.Unlock()
		close(s.done)
	})
}

// stopReported records the watchdog's report on stopping the tree.
func (s *Server) stopReported(err error) {
	s.mu.Lock()
	s.stopErr = err
	s.mu.Unlock()
	close(s.stopDone)
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return ErrPortBusy
	}
	return l.Close()
}

// PID is the server's process id, which is also its process group id.
func (s *Server) PID() int { return s.pgid }

// Done is closed when the server's main process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Exited reports whether the server's main process has exited and, if so,
// how, in words ("code 1", "signal: killed").
func (s *Server) Exited() (bool, string) {
	select {
	case <-s.done:
	default:
		return false, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return true, s.state
}

// ExitError is returned when the server exited before it was healthy.
type ExitError struct {
	Label  string   // the run label of the server
	Status string   // "code 1", "signal: killed"
	Tail   []string // last lines of the server's log
	Log    string   // the log file's path
}

// Error says how the server exited and quotes its log's last lines.
func (e *ExitError) Error() string {
	return fmt.Sprintf("server %s exited (%s) before it was healthy; last lines of %s:\n%s",
		e.Label, e.Status, e.Log, indent(e.Tail))
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "  (log is empty)"
	}
	return "  " + strings.Join(lines, "\n  ")
}

// TailLines is how many log lines errors quote.
const TailLines = 20

// WaitHealthy polls the health URL every 250ms until it answers 200, the
// server exits (an *ExitError with the log's last lines), the start
// deadline passes (an error with the log's last lines) or ctx ends.
func (s *Server) WaitHealthy(ctx context.Context) error {
	deadline := time.NewTimer(s.Spec.StartDeadline)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if healthy(ctx, client, s.Spec.HealthURL) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			_, st := s.Exited()
			return &ExitError{Label: s.Spec.Label, Status: st, Tail: s.Tail(TailLines), Log: s.LogPath}
		case <-deadline.C:
			return fmt.Errorf("server %s not healthy at %s after %s; last lines of %s:\n%s",
				s.Spec.Label, s.Spec.HealthURL, s.Spec.StartDeadline, s.LogPath, indent(s.Tail(TailLines)))
		case <-tick.C:
		}
	}
}

func healthy(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Tail returns the last n lines of the server's log for an error message,
// with secrets redacted: servers print their arguments (an --api-key
// among them) at start-up.
func (s *Server) Tail(n int) []string {
	lines := tailFile(s.LogPath, n)
	for i, l := range lines {
		lines[i] = s.Spec.redactLine(l)
	}
	return lines
}

// tailFile reads at most the last 64 KiB of path and returns its last n
// non-empty lines.
func tailFile(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	// A server still logging may have grown the file since Stat: read no
	// more than the cap all the same. A failed read leaves what was read.
	b, _ := io.ReadAll(io.LimitReader(f, max))
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := strings.TrimRight(string(l), "\r "); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// Stop ends the server's whole process tree through its watchdog:
// SIGTERM to its process group and to every process it started outside
// it (daemons that moved to a session of their own), then SIGKILL to all
// that remain after the grace period. It returns once the watchdog
// reports the tree gone (or after a further 10s, with an error). Stop is
// safe to call more than once and after the server exited.
func (s *Server) Stop() error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.wd.stop()
	limit := s.Spec.StopGrace + 10*time.Second
	select {
	case <-s.stopDone:
	case <-time.After(limit):
		return fmt.Errorf("stop %s: no report from its watchdog after %s", s.Spec.Label, limit)
	}
	s.mu.Lock()
	err := s.stopErr
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("stop %s: %v", s.Spec.Label, err)
	}
	return nil
}

// StoppedByUs reports whether Stop was called (so an exit is expected).
func (s *Server) StoppedByUs() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}
