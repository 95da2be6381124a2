package report

import (
	"strings"
	"unicode/utf8"
)

// MinWidth is the narrowest width text is fitted to: a narrower terminal
// (or $COLUMNS) gets lines of this width rather than a word a line.
const MinWidth = 40

// fitWidth is the width text is fitted to: width, at least MinWidth; 0
// (no limit) stays 0.
func fitWidth(width int) int {
	if width <= 0 {
		return 0
	}
	return max(width, MinWidth)
}

// runeLen is the width of s in columns, one per rune.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// WrapLine breaks the one-line text s into lines of at most width columns,
// the first prefixed by first and the rest by rest: at spaces, so that no
// number is cut; a word longer than a whole line (a path, a URL) is broken
// where the line ends. width 0 keeps s on one line. Each returned line
// ends in "\n".
func WrapLine(s string, width int, first, rest string) string {
	return wrapWords(s, fitWidth(width), first, rest)
}

// wrapWords is WrapLine at exactly width columns (0: no limit).
func wrapWords(s string, width int, first, rest string) string {
	if width <= 0 || runeLen(first)+runeLen(s) <= width {
		return first + s + "\n"
	}
	var sb strings.Builder
	prefix := first
	line := ""
	flush := func() {
		sb.WriteString(prefix + line + "\n")
		prefix, line = rest, ""
	}
	for _, word := range strings.Fields(s) {
		for word != "" {
			room := width - runeLen(prefix)
			if line != "" {
				if runeLen(line)+1+runeLen(word) <= room {
					line += " " + word
					word = ""
					continue
				}
				flush()
				room = width - runeLen(prefix)
			}
			if runeLen(word) <= room {
				line, word = word, ""
				continue
			}
			// A word wider than the line: break it at the line's end.
			r := []rune(word)
			n := max(room, 1)
			line, word = string(r[:n]), string(r[n:])
			flush()
		}
	}
	if line != "" || prefix == first {
		flush()
	}
	return sb.String()
}

// FoldTable renders t as aligned plain text (AlignTable) within width
// columns. A table wider than that first has its headers wrapped at
// spaces ("TTFT p95 ms" over two lines), so each column is as wide as its
// widest cell; one still too wide is folded into several tables of the
// same rows, one after another, each repeating the columns that name a
// row (t.Keys) and taking as many further columns as fit; a cell of text
// too wide for a line on its own is wrapped at spaces within its column.
// Numbers are never cut. width 0 keeps the table whole.
func FoldTable(t Table, indent string, width int) string {
	width = fitWidth(width)
	if width == 0 || len(t.Columns) == 0 || tableWidth(cellWidths(t))+runeLen(indent) <= width {
		return AlignTable(t, indent)
	}
	room := width - runeLen(indent)
	widths := narrowWidths(t)
	if tableWidth(widths) <= room {
		return gridTable(t, twoLineHeaders(t, widths, room), indent)
	}
	keys := min(max(t.Keys, 1), len(t.Columns))
	avail := room - tableWidth(widths[:keys]) - 2
	if avail < MinWidth/2 {
		// The key columns leave too little beside them: fold without.
		keys, avail = 0, room
	}
	var sb strings.Builder
	for g, group := range foldGroups(widths, keys, avail) {
		if g > 0 {
			sb.WriteString("\n")
		}
		cols := make([]int, 0, keys+len(group))
		for i := range keys {
			cols = append(cols, i)
		}
		sub := subTable(t, append(cols, group...))
		if tableWidth(cellWidths(sub)) <= room {
			sb.WriteString(AlignTable(sub, indent))
			continue
		}
		w := narrowWidths(sub)
		if last := len(w) - 1; tableWidth(w) <= room {
			w = twoLineHeaders(sub, w, room)
		} else {
			// Only a group's one column is wider than the room.
			w[last] = max(room-tableWidth(w[:last])-2, 1)
			if last == 0 {
				w[last] = room
			}
		}
		sb.WriteString(gridTable(sub, w, indent))
	}
	return sb.String()
}

// foldGroups packs the columns after the first keys, in order, into
// groups whose widths side by side fit avail; a column wider than avail
// is a group of its own.
func foldGroups(widths []int, keys, avail int) [][]int {
	var groups [][]int
	var cur []int
	used := 0
	for i := keys; i < len(widths); i++ {
		w := min(widths[i], avail)
		if len(cur) > 0 && used+2+w > avail {
			groups, cur, used = append(groups, cur), nil, 0
		}
		if len(cur) > 0 {
			used += 2
		}
		cur, used = append(cur, i), used+w
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// cellWidths are the widths of t's columns: their widest cell or header.
func cellWidths(t Table) []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = runeLen(c.Header)
	}
	return widestCells(t, widths)
}

// narrowWidths are the widths of t's columns with headers wrapped at
// spaces: their widest cell or header word.
func narrowWidths(t Table) []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		for _, w := range strings.Fields(c.Header) {
			widths[i] = max(widths[i], runeLen(w))
		}
	}
	return widestCells(t, widths)
}

// twoLineHeaders widens the columns of widths whose header takes more
// than two lines, in order, as far as the room allows: "TTFT p95 ms" over
// two lines reads better than over three.
func twoLineHeaders(t Table, widths []int, room int) []int {
	for i, c := range t.Columns {
		for w := widths[i]; w < runeLen(c.Header); w++ {
			if strings.Count(wrapWords(c.Header, w, "", ""), "\n") <= 2 {
				if extra := w - widths[i]; tableWidth(widths)+extra <= room {
					widths[i] = w
				}
				break
			}
		}
	}
	return widths
}

// widestCells raises widths to t's widest cell in each column.
func widestCells(t Table, widths []int) []int {
	for _, row := range t.Rows {
		for i, cell := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], runeLen(Clean(cell)))
			}
		}
	}
	return widths
}

// tableWidth is the width of columns of widths side by side, two spaces
// apart.
func tableWidth(widths []int) int {
	n := 0
	for i, w := range widths {
		if i > 0 {
			n += 2
		}
		n += w
	}
	return n
}

// subTable is t's columns cols, in that order.
func subTable(t Table, cols []int) Table {
	s := Table{Keys: t.Keys}
	for _, i := range cols {
		s.Columns = append(s.Columns, t.Columns[i])
	}
	for _, row := range t.Rows {
		r := make([]string, len(cols))
		for j, i := range cols {
			if i < len(row) {
				r[j] = row[i]
			}
		}
		s.Rows = append(s.Rows, r)
	}
	return s
}

// gridTable is AlignTable with columns of the given widths: a header or
// cell wider than its column is wrapped at spaces within it, a row taking
// several lines. Headers sit at the bottom of their lines, over the
// values; cells at the top.
func gridTable(t Table, widths []int, indent string) string {
	var sb strings.Builder
	line := func(cells []string, bottom bool) {
		parts := make([][]string, len(cells))
		height := 1
		for i, cell := range cells {
			parts[i] = strings.Split(strings.TrimSuffix(wrapWords(Clean(cell), widths[i], "", ""), "\n"), "\n")
			height = max(height, len(parts[i]))
		}
		for h := range height {
			cells := make([]string, len(parts))
			for i, p := range parts {
				at := h
				if bottom {
					at = h - (height - len(p))
				}
				if at >= 0 && at < len(p) {
					cells[i] = p[at]
				}
			}
			sb.WriteString(strings.TrimRight(alignedLine(t.Columns, widths, cells, indent), " ") + "\n")
		}
	}
	hdr := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		hdr[i] = c.Header
	}
	line(hdr, true)
	for _, row := range t.Rows {
		line(row, false)
	}
	return sb.String()
}

// alignedLine is one line of cells padded to widths (already cleaned).
func alignedLine(cols []Column, widths []int, cells []string, indent string) string {
	var sb strings.Builder
	sb.WriteString(indent)
	for i, cell := range cells {
		pad := strings.Repeat(" ", max(widths[i]-runeLen(cell), 0))
		if i > 0 {
			sb.WriteString("  ")
		}
		if cols[i].Align == Right {
			sb.WriteString(pad + cell)
		} else {
			sb.WriteString(cell + pad)
		}
	}
	return sb.String()
}
