package trace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/limits"
)

// csvLayout names the columns of a CSV trace and parses a row's time.
type csvLayout struct {
	name string
	// at, input, output and session are the header names of the columns
	// read; session is optional.
	at, input, output, session string
	// parseAt turns the at column into a time on the trace's own axis
	// (rows are moved so the earliest is 0).
	parseAt func(s string) (time.Duration, error)
}

var azureColumns = csvLayout{
	name: "Azure", at: "TIMESTAMP", input: "ContextTokens", output: "GeneratedTokens",
	parseAt: azureTime,
}

var burstColumns = csvLayout{
	name: "BurstGPT", at: "Timestamp", input: "Request tokens", output: "Response tokens", session: "Session ID",
	parseAt: secondsTime,
}

// azureEpoch is the origin Azure times are measured from before the rows
// are moved to start at 0; any fixed date works.
var azureEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// azureLayouts are the TIMESTAMP forms of the published Azure traces:
// "2023-11-16 18:15:46.6805900" (2023, 100 ns ticks, no zone) and
// "2024-05-10 00:00:00.009930+00:00" (2024).
var azureLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
}

// azureTime parses an Azure TIMESTAMP (times without a zone are UTC).
func azureTime(s string) (time.Duration, error) {
	for _, l := range azureLayouts {
		if t, err := time.Parse(l, s); err == nil {
			d := t.Sub(azureEpoch)
			if d <= math.MinInt64/2 || d >= math.MaxInt64/2 {
				break
			}
			return d, nil
		}
	}
	return 0, fmt.Errorf("a date and time such as 2023-11-16 18:15:46.6805900 or 2024-05-10 00:00:00.009930+00:00")
}

// secondsTime parses BurstGPT's Timestamp: seconds, possibly fractional.
func secondsTime(s string) (time.Duration, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || v >= maxMillis/1000 {
		return 0, errors.New("seconds ≥ 0")
	}
	return time.Duration(math.Round(v * float64(time.Second))), nil
}

// readCSV reads a CSV trace whose first row is its header.
func readCSV(br *bufio.Reader, file string, t *Trace, lay csvLayout) error {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return csvError(file, err, 1)
	}
	line, _ := cr.FieldPos(0)
	cols, err := lay.columns(header)
	if err != nil {
		return &ParseError{File: file, Line: line, Err: err}
	}
	var skip skipped
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return csvError(file, err, line+1)
		}
		line, _ = cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		r, err := lay.row(rec, cols)
		if err != nil {
			return &ParseError{File: file, Line: line, Err: err}
		}
		r.Line = line
		if skip.keep(r) {
			t.Rows = append(t.Rows, r)
		}
	}
	skip.notes(t)
	return nil
}

// csvError is a CSV syntax error as a ParseError on its line.
func csvError(file string, err error, line int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{File: file, Line: pe.Line, Err: pe.Err}
	}
	return &ParseError{File: file, Line: line, Err: err}
}

// csvColumns are the indexes of the columns a layout reads; session is −1
// when the file has none.
type csvColumns struct{ at, input, output, session int }

// columns finds the layout's columns in a header row.
func (lay csvLayout) columns(header []string) (csvColumns, error) {
	idx := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := idx[h]; !dup {
			idx[h] = i
		}
	}
	c := csvColumns{session: -1}
	for _, col := range []struct {
		name string
		dst  *int
	}{{lay.at, &c.at}, {lay.input, &c.input}, {lay.output, &c.output}} {
		i, ok := idx[col.name]
		if !ok {
			return c, fmt.Errorf("%s header %q lacks the column %q (want %s, %s, %s)", lay.name, strings.Join(header, ","), col.name, lay.at, lay.input, lay.output)
		}
		*col.dst = i
	}
	if i, ok := idx[lay.session]; ok && lay.session != "" {
		c.session = i
	}
	return c, nil
}

// row parses one data row.
func (lay csvLayout) row(rec []string, c csvColumns) (Row, error) {
	get := func(i int) (string, bool) {
		if i < 0 || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	var r Row
	at, ok := get(c.at)
	if !ok {
		return r, fmt.Errorf("%d columns, the header has %s in column %d", len(rec), lay.at, c.at+1)
	}
	var err error
	if r.At, err = lay.parseAt(at); err != nil {
		return r, fmt.Errorf("column %s: %q, want %v", lay.at, at, err)
	}
	for _, col := range []struct {
		name string
		i    int
		dst  *int
	}{{lay.input, c.input, &r.InputTokens}, {lay.output, c.output, &r.OutputTokens}} {
		s, ok := get(col.i)
		if !ok {
			return r, fmt.Errorf("%d columns, the header has %s in column %d", len(rec), col.name, col.i+1)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > limits.MaxTokens {
			return r, fmt.Errorf("column %s: %q, want a token count from 0 to %d", col.name, clip([]byte(s)), limits.MaxTokens)
		}
		*col.dst = n
	}
	r.Session, _ = get(c.session)
	return r, nil
}
