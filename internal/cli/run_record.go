package cli

import (
	"fmt"
	"os"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/summary"
)

// recorder folds every line of the records file into the report as it
// comes (summary.Builder: of a request it keeps only what the summaries
// need, not its Result) and writes each to --records, flushed.
type recorder struct {
	out *os.File
	enc *record.Encoder
	err error
	sum *summary.Builder
	// hdr is the last header recorded; pass, when set, also gets every
	// Result (find: one pass of a probe alone, for the drift check).
	hdr  *record.Header
	pass *summary.Builder
	// secrets are redacted from the warnings of headers and run ends
	// (the API key, extra headers' values), which may quote a server.
	secrets []string
	cmd     string // the command, for errors ("run", "find")
}

// newRecorder creates the records file at path, or records only in memory
// when path is "".
func newRecorder(path, cmd string) (*recorder, error) {
	r := &recorder{sum: summary.NewBuilder(summary.Options{}), cmd: cmd}
	if path == "" {
		return r, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("%s: --records: %v", cmd, err)
	}
	r.out, r.enc = f, record.NewEncoder(f)
	return r, nil
}

// write runs one encode, keeping the first error.
func (r *recorder) write(encode func(*record.Encoder) error) {
	if r.enc == nil || r.err != nil {
		return
	}
	if err := encode(r.enc); err != nil {
		r.err = fmt.Errorf("%s: --records %s: %w", r.cmd, r.out.Name(), err)
	}
}

func (r *recorder) header(h *record.Header) {
	redactAll(h.Run.Warnings, r.secrets)
	kept := *h
	r.sum.Add(record.Line{Header: &kept})
	r.hdr = &kept
	r.write(func(e *record.Encoder) error { return e.EncodeHeader(h) })
}

func (r *recorder) result(res *record.Result) {
	r.sum.Add(record.Line{Result: res})
	if r.pass != nil {
		r.pass.Add(record.Line{Result: res})
	}
	r.write(func(e *record.Encoder) error { return e.Encode(res) })
}

func (r *recorder) levelEnd(l *record.LevelEnd) {
	kept := *l
	r.sum.Add(record.Line{LevelEnd: &kept})
	r.write(func(e *record.Encoder) error { return e.EncodeLevelEnd(l) })
}

func (r *recorder) runEnd(l *record.RunEnd) {
	redactAll(l.Warnings, r.secrets)
	kept := *l
	r.sum.Add(record.Line{RunEnd: &kept})
	r.write(func(e *record.Encoder) error { return e.EncodeRunEnd(l) })
}

// close closes the records file and returns the first write error.
func (r *recorder) close() error {
	if r.out != nil {
		if err := r.out.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
	return r.err
}

// runSink is the load.Sink of a run: each Result goes to the records file
// and to the progress display, from the sweep's single delivery goroutine.
type runSink struct {
	rec      *recorder
	progress *progress
	method   load.Method
	// planInEnd writes each level's plan into its level_end line (levels
	// chosen as the run goes: find).
	planInEnd bool
}

func (s *runSink) LevelStart(l load.Level) { s.progress.levelStart(l, s.method.Total(l)) }

func (s *runSink) Result(res *record.Result) {
	s.rec.result(res)
	s.progress.add(res)
}

func (s *runSink) LevelEnd(l load.Level, end *record.LevelEnd) {
	if s.planInEnd {
		end.Plan = &l
	}
	s.rec.levelEnd(end)
	s.progress.levelEnd()
}

// redactAll redacts secrets from each of texts in place.
func redactAll(texts []string, secrets []string) {
	for i, t := range texts {
		texts[i] = backend.RedactAll(t, secrets)
	}
}
