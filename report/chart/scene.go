package chart

import "github.com/servebench/servebench/report"

// A scene is a chart laid out as drawing primitives in a W×H pixel space
// with y pointing down. The SVG and PNG writers draw the same scene, so the
// two files show the same chart.
type scene struct {
	W, H  float64
	items []item
}

// item is one primitive: *polyline, *circle, *rect or *text.
type item interface{ isItem() }

// polyline is an open stroked path. Dash is "on, off" lengths in pixels;
// empty means solid.
type polyline struct {
	Pts   []pt
	Color string
	Width float64
	Dash  []float64
}

// circle is a filled disc.
type circle struct {
	C     pt
	R     float64
	Color string
}

// rect is an axis-aligned rectangle, filled and/or stroked ("" for none).
type rect struct {
	X, Y, W, H   float64
	Fill, Stroke string
}

// anchor is where a text's (X, Y) lies horizontally: start, middle or end.
type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// text is one line of text whose baseline starts (or is centred, or ends)
// at (X, Y). Vertical text is rotated −90° about (X, Y).
type text struct {
	X, Y     float64
	S        string
	Size     float64
	Anchor   anchor
	Bold     bool
	Vertical bool
	Color    string
}

type pt struct{ X, Y float64 }

func (*polyline) isItem() {}
func (*circle) isItem()   {}
func (*rect) isItem()     {}
func (*text) isItem()     {}

// add appends it; a text's string is neutralised first (report.Clean:
// control characters and bidirectional overrides as visible escapes), so
// the SVG stays well-formed XML and neither drawing shows a control.
func (s *scene) add(it item) {
	if t, ok := it.(*text); ok {
		t.S = report.Clean(t.S)
	}
	s.items = append(s.items, it)
}
