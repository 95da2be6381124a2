package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A records file (servebench run --records) is JSON Lines. Besides one
// Result per request it carries three kinds of marker lines, each a JSON
// object with exactly one of these keys, so that `servebench report
// records.jsonl` can rebuild the same runs[].levels[] without the server:
//
//	{"header": {...}}    opens a run: the run's description (Run) and its
//	                     level plan. Written before the run's first
//	                     request.
//	{...Result...}       one line per request (warm-ups too, with
//	                     "warmup": true), written as the request ends.
//	{"level_end": {...}} closes a level: the fields that cannot be derived
//	                     from the Results (telemetry such as peak VRAM),
//	                     written after the level's last Result.
//	{"run_end": {...}}   closes a run: whether it completed and run-wide
//	                     warnings. A run without run_end was cut short.
//
// Several runs (one per launch profile) may share one file; every line
// names its run by label. Decode returns only the Results; DecodeFile
// returns everything.

// Header opens a run in a records file.
type Header struct {
	// Run is the run's description as the report will show it; the
	// report's levels are rebuilt from the Results.
	Run Run `json:"run"`
	// Levels is the plan of the run's levels, in order.
	Levels []LevelPlan `json:"levels"`
	// Warmup is the number of warm-up requests sent before each level.
	Warmup int `json:"warmup"`
}

// LevelPlan is one planned level of a run: what the load generator runs
// (load.Level is this type) and what the header records of it.
type LevelPlan struct {
	// Level is the value Results carry in their Level field.
	Level int `json:"level"`
	// Concurrency is the number of workers (pool), the batch size (batch)
	// or the cap on requests in flight (rate).
	Concurrency int `json:"concurrency"`
	// Requests is the number of counted requests planned (pool, rate).
	Requests int `json:"requests,omitempty"`
	// Repeats is the number of batches (batch).
	Repeats int `json:"repeats,omitempty"`
	// Rate is the requested rate in requests/s (rate method).
	Rate float64 `json:"rate,omitempty"`
	// Arrival is the inter-arrival law of the rate method: "poisson",
	// "constant", "gamma", "ramp", or "trace" (a replayed trace file).
	Arrival string `json:"arrival,omitempty"`

	// Arrival shapes and level length, rate method only; zero
	// where not used.

	// RateStart is the rate in requests/s a ramp starts from; it rises
	// linearly to Rate over RampSeconds.
	RateStart float64 `json:"rate_start,omitempty"`
	// RampSeconds is the length of the ramp in seconds.
	RampSeconds float64 `json:"ramp_seconds,omitempty"`
	// Burstiness is the gamma shape K of the gaps between arrivals
	// (gamma, ramp): their coefficient of variation is 1/√K; 0 means 1.
	Burstiness float64 `json:"burstiness,omitempty"`
	// DurationSeconds ends the level's schedule: no request is due at or
	// after it (run's --duration). Requests is then the count the
	// schedule holds before it.
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	// Pass numbers a further pass of a pool or rate level that was run
	// again (find repeats a probe whose interval straddles a bound); its
	// Results carry it as their Repeat, so that each pass keeps its own
	// wall time. 0 for the first.
	Pass int `json:"pass,omitempty"`
	// Sessions: a multi-turn level runs Sessions sessions of
	// Turns turns each (Requests = Sessions × Turns); Concurrency then
	// counts sessions in flight and Rate sessions started per second.
	Sessions int `json:"sessions,omitempty"`
	Turns    int `json:"turns,omitempty"`
}

// LevelEnd closes a level. Its Fields hold what observers (telemetry)
// measured over the level; they are merged into the level summary that the
// Results give (non-null fields win). Records files before Observations
// wrote every field of a report's level here; the ones other than
// Observations' were always zero or null and are ignored.
type LevelEnd struct {
	Run   string `json:"run"`
	Level int    `json:"level"`
	// Fields are level fields measured outside the requests (peak VRAM,
	// peak KV usage, preemptions...). Nil when there were none.
	Fields *Observations `json:"fields,omitempty"`
	// RepeatGPUMemoryMiB is the GPU memory after each batch repeat (batch
	// method), null where unknown.
	RepeatGPUMemoryMiB []*float64 `json:"repeat_gpu_memory_mib,omitempty"`
	// Plan is the level's plan when the header could not list it because
	// the level was chosen as the run went (find's probes).
	Plan *LevelPlan `json:"plan,omitempty"`
	// Saturated says why the level counts as saturated ("reason: detail",
	// package saturation), when run --stop-when-saturated or find checked
	// it after it ended; such a verdict comes as a further level_end line
	// of the level carrying only it.
	Saturated string `json:"saturated,omitempty"`
}

// RunEnd closes a run.
type RunEnd struct {
	Run string `json:"run"`
	// Complete is false when the run was interrupted.
	Complete bool `json:"complete"`
	// Warnings are run-wide findings made during the run.
	Warnings []string `json:"warnings,omitempty"`
}

// File is the decoded content of a records file.
type File struct {
	Headers   []Header
	Results   []Result
	LevelEnds []LevelEnd
	RunEnds   []RunEnd
	// Cut is the file's last line when the file ends inside it and it
	// does not decode (a crash or a full disk cut it short): it was left
	// out. Nil otherwise.
	Cut *DecodeError
}

// EncodeHeader writes a header line and flushes it.
func (e *Encoder) EncodeHeader(h *Header) error { return e.write(marker{Header: h}) }

// EncodeLevelEnd writes a level_end line and flushes it.
func (e *Encoder) EncodeLevelEnd(l *LevelEnd) error { return e.write(marker{LevelEnd: l}) }

// EncodeRunEnd writes a run_end line and flushes it.
func (e *Encoder) EncodeRunEnd(r *RunEnd) error { return e.write(marker{RunEnd: r}) }

// marker is a non-Result line; exactly one field is set.
type marker struct {
	Header   *Header   `json:"header,omitempty"`
	LevelEnd *LevelEnd `json:"level_end,omitempty"`
	RunEnd   *RunEnd   `json:"run_end,omitempty"`
}

// fileLine is any line of a records file: a marker or a Result.
type fileLine struct {
	marker
	Result
	// Seq and StartNS shadow the Result's fields of the same keys, which
	// every Result line has (Encode always writes them): a line with
	// neither a marker nor these keys, such as {}, is not a Result.
	Seq     *int   `json:"seq"`
	StartNS *int64 `json:"start_ns"`
}

// errNotALine is the error of a JSON object that is neither a marker nor
// a Result.
var errNotALine = errors.New(`neither a marker line (header, level_end, run_end) nor a request record ("seq" and "start_ns")`)

// Line is one line of a records file: exactly one field is set.
type Line struct {
	Header   *Header
	Result   *Result
	LevelEnd *LevelEnd
	RunEnd   *RunEnd
}

// MaxLineBytes bounds one line of a records file (16 MiB): a request
// record with a million chunk offsets fits, and reading holds at most one
// line at a time, so a records file of any length reads in bounded
// memory for its lines.
const MaxLineBytes = 16 << 20

// errLineTooLong is the error of a line over MaxLineBytes.
var errLineTooLong = fmt.Errorf("line longer than %d MiB (MaxLineBytes): not a records file line", MaxLineBytes>>20)

// Scan reads a records file line by line and calls fn with each decoded
// line, in file order; every line is decoded into new values, which fn
// may keep. Blank lines are skipped. A malformed line, a line over
// MaxLineBytes, or a JSON object that is neither a marker nor a Result is
// a *DecodeError carrying its line number, returned after fn saw every
// line before it — with one exception: a last line the file ends inside
// of (no newline after it) that does not decode is what a crash or a full
// disk leaves, so it is returned as cut, not as an error, and Scan
// succeeds with every complete line.
func Scan(r io.Reader, fn func(Line)) (cut *DecodeError, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n := 0
	for {
		chunk, rerr := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if rerr == bufio.ErrBufferFull {
			if len(buf) > MaxLineBytes {
				return nil, &DecodeError{Line: n + 1, Err: errLineTooLong}
			}
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return nil, &DecodeError{Line: n + 1, Err: rerr}
		}
		if len(buf) > 0 {
			n++
			if len(buf) > MaxLineBytes {
				return nil, &DecodeError{Line: n, Err: errLineTooLong}
			}
			terminated := buf[len(buf)-1] == '\n'
			l, derr := decodeLine(buf)
			switch {
			case derr != nil && !terminated:
				return &DecodeError{Line: n, Err: derr}, nil
			case derr != nil:
				return nil, &DecodeError{Line: n, Err: derr}
			case l != (Line{}):
				fn(l)
			}
		}
		if rerr == io.EOF {
			return nil, nil
		}
		buf = buf[:0]
	}
}

// decodeLine decodes one line; a blank line is the zero Line.
func decodeLine(b []byte) (Line, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return Line{}, nil
	}
	var l fileLine
	if err := json.Unmarshal(b, &l); err != nil {
		return Line{}, err
	}
	switch {
	case l.Header != nil:
		return Line{Header: l.Header}, nil
	case l.LevelEnd != nil:
		return Line{LevelEnd: l.LevelEnd}, nil
	case l.RunEnd != nil:
		return Line{RunEnd: l.RunEnd}, nil
	case l.Seq == nil || l.StartNS == nil:
		return Line{}, errNotALine
	}
	res := l.Result
	res.Seq, res.StartNS = *l.Seq, *l.StartNS
	if err := checkChunkTokens(res.ChunkTokens); err != nil {
		return Line{}, err
	}
	return Line{Result: &res}, nil
}

// MaxResponseTokens bounds the tokens one request record's chunk_tokens
// may claim in all (1 Mi, far beyond any response a benchmark asks
// for): the summaries count every token's inter-token gap, so a line
// claiming billions would make a few bytes of a records file take
// gigabytes.
const MaxResponseTokens = 1 << 20

// checkChunkTokens checks that per-chunk token counts are not negative
// and do not sum past MaxResponseTokens.
func checkChunkTokens(counts []int) error {
	sum := 0
	for i, n := range counts {
		if n < 0 || n > MaxResponseTokens-sum {
			return fmt.Errorf("chunk_tokens[%d] = %d: counts must be at least 0 and sum to at most %d tokens (MaxResponseTokens)", i, n, MaxResponseTokens)
		}
		sum += n
	}
	return nil
}

// DecodeFile reads a whole records file into memory (Scan): Results,
// headers and level/run ends, and Cut for a cut last line. On an error it
// returns everything read before the bad line with the *DecodeError.
func DecodeFile(r io.Reader) (*File, error) {
	f := &File{}
	cut, err := Scan(r, func(l Line) {
		switch {
		case l.Header != nil:
			f.Headers = append(f.Headers, *l.Header)
		case l.LevelEnd != nil:
			f.LevelEnds = append(f.LevelEnds, *l.LevelEnd)
		case l.RunEnd != nil:
			f.RunEnds = append(f.RunEnds, *l.RunEnd)
		case l.Result != nil:
			f.Results = append(f.Results, *l.Result)
		}
	})
	f.Cut = cut
	return f, err
}
