package report

import (
	"io"
	"strings"
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown: a heading
// per run, its details as a list, a pipe table and its warnings. Every
// string that came from a document is escaped (MarkdownEscape), so a model
// named "<script>…" stays text.
func WriteMarkdown(w io.Writer, l *Layout) error {
	ew := &errWriter{w: w}
	ew.printf("# servebench report\n\n")
	ew.printf("Files: %s\n", MarkdownEscape(strings.Join(l.Files, ", ")))
	if len(l.Details) > 0 {
		ew.printf("\n")
		for _, d := range l.Details {
			ew.printf("- %s\n", MarkdownEscape(d))
		}
	}
	for _, b := range l.Blocks {
		ew.printf("\n## %s\n\n", MarkdownEscape(b.Title))
		for _, d := range b.Details {
			ew.printf("- %s\n", MarkdownEscape(d))
		}
		if len(b.Details) > 0 {
			ew.printf("\n")
		}
		ew.printf("%s", MarkdownTable(b.Table))
		for _, sec := range b.Sections {
			ew.printf("\n### %s\n\n", MarkdownEscape(sec.Title))
			ew.printf("%s", MarkdownTable(sec.Table))
		}
		if len(b.Warnings) > 0 {
			ew.printf("\n")
			for _, wn := range b.Warnings {
				ew.printf("- **warning:** %s\n", MarkdownEscape(wn))
			}
		}
	}
	if l.Calibration != nil {
		ew.printf("\n## Calibration: planner prediction against the KV tokens the server reported\n\n")
		ew.printf("%s", MarkdownTable(*l.Calibration))
	}
	for _, sec := range l.Sections {
		ew.printf("\n## %s\n\n", MarkdownEscape(sec.Title))
		ew.printf("%s", MarkdownTable(sec.Table))
		if len(sec.Lines) > 0 {
			ew.printf("\n")
		}
		for _, ln := range sec.Lines {
			ew.printf("**%s**\n\n", MarkdownEscape(ln))
		}
	}
	if len(l.Warnings) > 0 {
		ew.printf("\n## Warnings\n\n")
		for _, wn := range l.Warnings {
			ew.printf("- %s\n", MarkdownEscape(wn))
		}
	}
	return ew.err
}

// MarkdownTable renders t as a pipe table with escaped cells.
func MarkdownTable(t Table) string {
	var sb strings.Builder
	sb.WriteString("|")
	for _, c := range t.Columns {
		sb.WriteString(" " + MarkdownEscape(c.Header) + " |")
	}
	sb.WriteString("\n|")
	for _, c := range t.Columns {
		if c.Align == Right {
			sb.WriteString("---:|")
		} else {
			sb.WriteString("---|")
		}
	}
	sb.WriteString("\n")
	for _, row := range t.Rows {
		sb.WriteString("|")
		for _, cell := range row {
			sb.WriteString(" " + MarkdownEscape(cell) + " |")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// markdownEscaper turns HTML-significant characters into entities and
// backslash-escapes Markdown punctuation, so text renders literally in
// inline context and in table cells.
var markdownEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"|", `\|`, "#", `\#`, "~", `\~`, "!", `\!`,
)

// MarkdownEscape escapes s for Markdown inline text and table cells, after
// Clean has put it on one line without control characters.
func MarkdownEscape(s string) string { return markdownEscaper.Replace(Clean(s)) }
