// Package trace reads request traces for replay (run --trace): per
// request, its arrival time and its prompt and output lengths, in
// servebench's own JSON Lines layout or in the published layouts of the
// Azure LLM inference traces, BurstGPT and Mooncake (testdata/SOURCES.md
// cites each). It parses only: the workload turns rows into requests and
// the load generator sends them at their times.
//
// Every malformed row is a *ParseError naming the file and the line, with
// the field at fault in its message; a row that is well formed but cannot
// be replayed (no output tokens: BurstGPT's failed requests) is skipped
// and counted in the Trace's Notes.
package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/servebench/servebench/internal/limits"
)

// Format is a trace file layout.
type Format string

// Trace layouts.
const (
	// Servebench is servebench's own JSON Lines: one object per line with
	// t_ms (arrival, milliseconds), input_tokens and output_tokens, and
	// optional session, turn, think_ms, image and prefix_group (docs/metrics.md,
	// "Trace replay"). Unknown keys are an error (a typo would otherwise
	// be ignored silently).
	Servebench Format = "servebench"
	// Azure is the Azure LLM inference trace CSV (2023 and 2024):
	// TIMESTAMP (an absolute date and time), ContextTokens,
	// GeneratedTokens.
	Azure Format = "azure"
	// BurstGPT is the BurstGPT CSV: Timestamp (seconds), Model, Request
	// tokens, Response tokens, Total tokens, Log Type; later releases add
	// Session ID and Elapsed time.
	BurstGPT Format = "burstgpt"
	// Mooncake is the Mooncake JSON Lines trace: timestamp
	// (milliseconds), input_length, output_length and hash_ids, the ids
	// of the prompt's blocks of MooncakeBlockTokens tokens (equal ids,
	// equal blocks: shared prefixes). Other keys are ignored except
	// session_id, which tools that write this layout add.
	Mooncake Format = "mooncake"
)

// Formats lists the layouts Read takes.
var Formats = []Format{Servebench, Azure, BurstGPT, Mooncake}

// ParseFormat returns the Format named s; "" and "auto" mean detect it
// from the file ("" Format).
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return "", nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown trace format %q (want auto or one of %v)", s, Formats)
}

// MooncakeBlockTokens is the token count of one hash_ids block in the
// Mooncake traces (the FAST'25 release: a request of 6,758 input tokens
// lists ⌈6758/512⌉ = 14 ids).
const MooncakeBlockTokens = 512

// Row is one request of a trace.
type Row struct {
	// Line is the row's line in the file (1-based).
	Line int
	// At is the request's arrival from the trace's first arrival (after
	// Window, from the window's start; after Speed, scaled).
	At time.Duration
	// InputTokens and OutputTokens are the prompt and output lengths.
	InputTokens, OutputTokens int
	// Session names the conversation a request belongs to and Turn its
	// number in it, from 1 (servebench's layout; Session also from
	// Mooncake's session_id and BurstGPT's Session ID); empty and 0 when
	// the trace does not say.
	Session string
	Turn    int
	// Think, when set, is a later turn's think time: the pause after the
	// previous turn's answer before the turn is sent (servebench's
	// think_ms; after Speed, scaled). A turn without it is sent at its
	// arrival, or at once when the previous answer ends after that.
	Think *time.Duration
	// Images is the number of images the request carries (servebench's
	// image).
	Images int
	// PrefixGroup names the shared prefix the prompt starts with
	// (servebench's prefix_group): rows of one group share it.
	PrefixGroup string
	// HashIDs are the ids of the prompt's blocks of MooncakeBlockTokens
	// tokens, in order (Mooncake): rows whose lists start alike share that
	// prefix.
	HashIDs []int
}

// Trace is a parsed trace: its rows in order of arrival.
type Trace struct {
	// File is the path it was read from.
	File string
	// Format is its layout.
	Format Format
	// Rows are the requests, sorted by At (stable: rows arriving at the
	// same time keep the file's order), the first at 0.
	Rows []Row
	// Notes say what was skipped or changed while reading, as data for
	// the run's warnings.
	Notes []string
}

// ParseError is a malformed row: the file, its line and what is wrong.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// ReadFile reads the trace at path; format "" detects the layout.
func ReadFile(path string, format Format) (*Trace, error) {
	return ReadFileContext(context.Background(), path, format)
}

// ReadFileContext is ReadFile that stops when ctx ends (Ctrl-C while a
// large trace is read): its error then wraps ctx's (errors.Is(err,
// context.Canceled)). The file's size sizes the rows once, from the
// density of its first lines, rather than by doubling.
func ReadFileContext(ctx context.Context, path string, format Format) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return read(ctxReader{ctx: ctx, r: f}, path, format, size)
}

// ctxReader is r until ctx ends, then ctx's error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// Read reads a trace from r; file names it in errors. format "" detects
// the layout from the first line that is not blank (Detect).
func Read(r io.Reader, file string, format Format) (*Trace, error) {
	return read(r, file, format, 0)
}

// maxPresizedRows caps the rows a file's size presizes: a trace
// replays as one level, whose requests limits.MaxRequests bounds.
const maxPresizedRows = limits.MaxRequests

// read is Read, with the rows presized for a file of size bytes (0:
// unknown).
func read(r io.Reader, file string, format Format, size int64) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	if format == "" {
		var err error
		if format, err = detect(br, file); err != nil {
			return nil, err
		}
	}
	t := &Trace{File: file, Format: format}
	if n := estimateRows(br, size); n > 0 {
		t.Rows = make([]Row, 0, n)
	}
	var err error
	switch format {
	case Servebench:
		err = readJSONLines(br, file, t, servebenchRow)
	case Mooncake:
		err = readJSONLines(br, file, t, mooncakeRow)
	case Azure:
		err = readCSV(br, file, t, azureColumns)
	case BurstGPT:
		err = readCSV(br, file, t, burstColumns)
	default:
		return nil, fmt.Errorf("%s: unknown trace format %q", file, format)
	}
	if err != nil {
		return nil, err
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s: the trace has no request to replay", file)
	}
	t.normalize()
	return t, nil
}

// estimateRows is the number of rows a file of size bytes holds at the
// density of lines its buffered start shows, with 3% to spare, capped by
// maxPresizedRows; 0 when unknown.
func estimateRows(br *bufio.Reader, size int64) int {
	peek, _ := br.Peek(64 * 1024)
	lines := bytes.Count(peek, []byte("\n"))
	if size <= 0 || lines == 0 {
		return 0
	}
	est := float64(size) / float64(len(peek)) * float64(lines) * 1.03
	return int(min(est, maxPresizedRows)) + 16
}

// normalize sorts the rows by arrival and moves the first to 0.
func (t *Trace) normalize() {
	slices.SortStableFunc(t.Rows, func(a, b Row) int { return cmp.Compare(a.At, b.At) })
	t0 := t.Rows[0].At
	for i := range t.Rows {
		t.Rows[i].At -= t0
	}
}

// detect names the layout from the first line that is not blank: a JSON
// object with t_ms is servebench's, one with timestamp or input_length
// Mooncake's; a CSV header with ContextTokens is Azure's, one with Request
// tokens BurstGPT's.
func detect(br *bufio.Reader, file string) (Format, error) {
	peek, err := br.Peek(64 * 1024)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	line, n := firstLine(peek)
	if n == 0 {
		return "", fmt.Errorf("%s: the trace is empty", file)
	}
	has := func(s string) bool { return bytes.Contains(line, []byte(s)) }
	switch {
	case line[0] == '{' && has(`"t_ms"`):
		return Servebench, nil
	case line[0] == '{' && (has(`"timestamp"`) || has(`"input_length"`)):
		return Mooncake, nil
	case line[0] == '{':
		return "", &ParseError{File: file, Line: n, Err: errors.New(`a JSON object with neither "t_ms" (servebench) nor "timestamp"/"input_length" (Mooncake); name the layout with --trace-format`)}
	case has("ContextTokens"):
		return Azure, nil
	case has("Request tokens"):
		return BurstGPT, nil
	}
	return "", &ParseError{File: file, Line: n, Err: fmt.Errorf("unknown trace layout: %q is neither a JSON object nor the header of an Azure (TIMESTAMP,ContextTokens,GeneratedTokens) or BurstGPT (Timestamp,…,Request tokens,Response tokens,…) CSV", clip(line))}
}

// firstLine returns the first line of b that is not blank, without a
// byte-order mark or surrounding space, and its 1-based number (0: none).
func firstLine(b []byte) ([]byte, int) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	for n := 1; len(b) > 0; n++ {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		if l := bytes.TrimSpace(line); len(l) > 0 {
			return l, n
		}
		b = rest
	}
	return nil, 0
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// skipped counts rows left out while reading, by reason, for Notes.
type skipped struct {
	noOutput, noInput int
}

func (s skipped) notes(t *Trace) {
	if s.noOutput > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d rows with 0 output tokens skipped (no request can ask for none; BurstGPT marks failed requests so)", s.noOutput))
	}
	if s.noInput > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d rows with 0 input tokens skipped (no prompt can be empty)", s.noInput))
	}
}

// keep reports whether a well-formed row can be replayed, counting it in s
// when not.
func (s *skipped) keep(r Row) bool {
	switch {
	case r.OutputTokens < 1:
		s.noOutput++
		return false
	case r.InputTokens < 1:
		s.noInput++
		return false
	}
	return true
}

// Window keeps the rows arriving in [start, start+duration) and moves
// them so that start is 0 (run's --trace-window, in the trace's own time,
// before Speed). duration ≤ 0 keeps everything from start on. It returns a
// new Trace, and an error when the window holds no row.
func (t *Trace) Window(start, duration time.Duration) (*Trace, error) {
	out := &Trace{File: t.File, Format: t.Format, Notes: slices.Clone(t.Notes)}
	for _, r := range t.Rows {
		if r.At < start || duration > 0 && r.At >= start+duration {
			continue
		}
		r.At -= start
		out.Rows = append(out.Rows, r)
	}
	if len(out.Rows) == 0 {
		return nil, fmt.Errorf("%s: no request arrives in the window %v + %v (the trace spans %v)", t.File, start, duration, t.Span())
	}
	return out, nil
}

// Speed divides every arrival time by factor (run's --trace-speed: 2
// replays twice as fast) and returns a new Trace; factor must be
// positive.
func (t *Trace) Speed(factor float64) *Trace {
	out := &Trace{File: t.File, Format: t.Format, Notes: slices.Clone(t.Notes), Rows: slices.Clone(t.Rows)}
	for i := range out.Rows {
		r := &out.Rows[i]
		r.At = time.Duration(float64(r.At) / factor)
		if r.Think != nil {
			think := time.Duration(float64(*r.Think) / factor)
			r.Think = &think
		}
	}
	return out
}

// Span is the time from the first arrival to the last.
func (t *Trace) Span() time.Duration {
	if len(t.Rows) == 0 {
		return 0
	}
	return t.Rows[len(t.Rows)-1].At - t.Rows[0].At
}

// MeanRate is the trace's mean arrival rate in requests/s: (n − 1) / Span,
// or 0 when it spans no time.
func (t *Trace) MeanRate() float64 {
	if s := t.Span(); s > 0 {
		return float64(len(t.Rows)-1) / s.Seconds()
	}
	return 0
}
