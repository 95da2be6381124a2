package report

// Cleaned returns a copy of l with every string passed through Clean:
// files, details, titles, table headers and cells, warnings and section
// lines. Writers that escape for their own syntax but not for control
// characters (the HTML page's html/template) write the cleaned copy, so
// what reaches the page is neutralised in one place.
func (l *Layout) Cleaned() *Layout {
	out := *l // fields added later are copied as they are
	out.Files, out.Details, out.Warnings = cleanAll(l.Files), cleanAll(l.Details), cleanAll(l.Warnings)
	out.Blocks = nil
	for _, b := range l.Blocks {
		b.Title, b.Details, b.Table, b.Warnings = Clean(b.Title), cleanAll(b.Details), b.Table.cleaned(), cleanAll(b.Warnings)
		out.Blocks = append(out.Blocks, b)
	}
	if l.Calibration != nil {
		t := l.Calibration.cleaned()
		out.Calibration = &t
	}
	out.Sections = nil
	for _, s := range l.Sections {
		s.Title, s.Table, s.Lines = Clean(s.Title), s.Table.cleaned(), cleanAll(s.Lines)
		out.Sections = append(out.Sections, s)
	}
	return &out
}

// Cleaned is a copy of t with headers and cells passed through Clean, for
// tables laid out beside a Layout (the HTML page's cross-run table).
func (t Table) Cleaned() Table { return t.cleaned() }

// cleaned is a copy of t with headers and cells passed through Clean.
func (t Table) cleaned() Table {
	out := Table{Columns: make([]Column, len(t.Columns)), Rows: make([][]string, len(t.Rows))}
	for i, c := range t.Columns {
		c.Header = Clean(c.Header)
		out.Columns[i] = c
	}
	for i, row := range t.Rows {
		out.Rows[i] = cleanAll(row)
	}
	return out
}

// cleanAll is a copy of ss with every string passed through Clean; nil
// stays nil.
func cleanAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Clean(s)
	}
	return out
}
