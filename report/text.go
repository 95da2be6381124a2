package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/servebench/servebench/internal/safetext"
)

// WriteText writes the report as aligned plain-text tables: a header, one
// block per run (title, details, level table with units in the headers,
// warnings under it), the calibration table and set-wide warnings.
// Strings from documents are stripped of control characters so that a
// server-sent name cannot move the terminal's cursor.
func WriteText(w io.Writer, l *Layout) error {
	ew := &errWriter{w: w}
	width := l.Width
	// text writes one line of prose wrapped to the width, its further
	// lines under the first's text.
	text := func(first, rest, s string) { ew.printf("%s", WrapLine(Clean(s), width, first, rest)) }
	table := func(t Table) { ew.printf("%s", FoldTable(t, "   ", width)) }
	text("", "  ", "servebench report: "+strings.Join(l.Files, ", "))
	for _, d := range l.Details {
		text("", "  ", d)
	}
	for _, b := range l.Blocks {
		ew.printf("\n")
		text("== ", "   ", b.Title)
		for _, d := range b.Details {
			text("   ", "     ", d)
		}
		table(b.Table)
		for _, sec := range b.Sections {
			text("   -- ", "      ", sec.Title)
			table(sec.Table)
		}
		for _, wn := range b.Warnings {
			text("   warning: ", "     ", wn)
		}
	}
	if l.Calibration != nil {
		ew.printf("\n")
		text("== ", "   ", "calibration: planner prediction against the KV tokens the server reported")
		table(*l.Calibration)
	}
	for _, sec := range l.Sections {
		ew.printf("\n")
		text("== ", "   ", sec.Title)
		table(sec.Table)
		for _, ln := range sec.Lines {
			text("", "  ", ln)
		}
	}
	if len(l.Warnings) > 0 {
		ew.printf("\nwarnings:\n")
		for _, wn := range l.Warnings {
			text("   ", "     ", wn)
		}
	}
	return ew.err
}

// AlignTable renders t as aligned plain text, each line prefixed by indent.
func AlignTable(t Table, indent string) string {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = utf8.RuneCountInString(c.Header)
	}
	for _, row := range t.Rows {
		for i, cell := range row {
			if n := utf8.RuneCountInString(Clean(cell)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var sb strings.Builder
	line := func(cells []string) {
		sb.WriteString(indent)
		for i, cell := range cells {
			cell = Clean(cell)
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				sb.WriteString("  ")
			}
			if t.Columns[i].Align == Right {
				sb.WriteString(pad + cell)
			} else if i == len(cells)-1 {
				sb.WriteString(cell)
			} else {
				sb.WriteString(cell + pad)
			}
		}
		sb.WriteString("\n")
	}
	hdr := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		hdr[i] = c.Header
	}
	line(hdr)
	for _, row := range t.Rows {
		line(row)
	}
	return sb.String()
}

// Clean makes text from a document or a server safe to show on one line
// (safetext.Line): line breaks and tabs become spaces, and control
// characters and bidirectional overrides become visible escapes (ESC →
// `\x1b`, U+202E → `\u202e`), so a server-sent name cannot move the
// terminal's cursor, reorder what is shown or break a table row. Every
// human-facing writer passes document strings through it: text and
// Markdown here, CSV cells (csvText), the HTML page (Layout.Cleaned), chart
// texts and the warnings on stderr.
func Clean(s string) string { return safetext.Line(s) }

// errWriter keeps the first write error so writers can print freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}
