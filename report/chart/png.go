package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// The PNG is drawn from the same scene as the SVG: shapes are filled with
// the anti-aliasing rasterizer of golang.org/x/image/vector, text is set in
// the Go fonts (golang.org/x/image/font/gofont) through
// golang.org/x/image/font/opentype. No SVG rasterizer and no system font
// is needed, so the output is the same on every machine.

// The parsed fonts are immutable and shared; a font.Face keeps scratch
// buffers and is not safe for concurrent use, so each PNG drawing makes
// its own faces (faceCache), and Chart.PNG may run on several goroutines.
var (
	fontsOnce         sync.Once
	regularFont, bold *opentype.Font
	fontsErr          error
)

type faceKey struct {
	size float64
	bold bool
}

// faceCache holds the faces of one PNG drawing.
type faceCache map[faceKey]font.Face

func (faces faceCache) face(size float64, isBold bool) (font.Face, error) {
	fontsOnce.Do(func() {
		if regularFont, fontsErr = opentype.Parse(goregular.TTF); fontsErr != nil {
			return
		}
		bold, fontsErr = opentype.Parse(gobold.TTF)
	})
	if fontsErr != nil {
		return nil, fontsErr
	}
	k := faceKey{size, isBold}
	if fc, ok := faces[k]; ok {
		return fc, nil
	}
	fnt := regularFont
	if isBold {
		fnt = bold
	}
	fc, err := opentype.NewFace(fnt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, err
	}
	faces[k] = fc
	return fc, nil
}

// png rasterizes the scene at scale× its size.
func (s *scene) png(scale float64) ([]byte, error) {
	w, h := int(math.Ceil(s.W*scale)), int(math.Ceil(s.H*scale))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	faces := faceCache{}
	for _, it := range s.items {
		switch v := it.(type) {
		case *rect:
			corners := scalePts(scale, pt{v.X, v.Y}, pt{v.X + v.W, v.Y}, pt{v.X + v.W, v.Y + v.H}, pt{v.X, v.Y + v.H})
			if v.Fill != "" {
				fillPolygons(img, [][]pt{corners}, v.Fill)
			}
			if v.Stroke != "" {
				fillPolygons(img, stroke(append(corners, corners[0]), scale, nil), v.Stroke)
			}
		case *polyline:
			dash := make([]float64, len(v.Dash))
			for i, d := range v.Dash {
				dash[i] = d * scale
			}
			fillPolygons(img, stroke(scalePts(scale, v.Pts...), v.Width*scale, dash), v.Color)
		case *circle:
			fillPolygons(img, [][]pt{disc(pt{v.C.X * scale, v.C.Y * scale}, v.R*scale)}, v.Color)
		case *text:
			if err := drawText(img, faces, v, scale); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func scalePts(scale float64, pts ...pt) []pt {
	out := make([]pt, len(pts))
	for i, p := range pts {
		out[i] = pt{p.X * scale, p.Y * scale}
	}
	return out
}

// fillPolygons fills the union of polys in colour hex, anti-aliased. The
// rasterizer covers only the polygons' bounding box, so small shapes cost
// little.
func fillPolygons(img *image.RGBA, polys [][]pt, hex string) {
	box := image.Rectangle{}
	first := true
	for _, poly := range polys {
		for _, p := range poly {
			q := image.Rect(int(math.Floor(p.X)), int(math.Floor(p.Y)), int(math.Ceil(p.X))+1, int(math.Ceil(p.Y))+1)
			if first {
				box, first = q, false
			} else {
				box = box.Union(q)
			}
		}
	}
	box = box.Intersect(img.Bounds())
	if box.Empty() {
		return
	}
	r := vector.NewRasterizer(box.Dx(), box.Dy())
	off := pt{float64(box.Min.X), float64(box.Min.Y)}
	for _, poly := range polys {
		addPolygon(r, poly, off)
	}
	r.Draw(img, box, image.NewUniform(parseColor(hex)), image.Point{})
}

// addPolygon adds a closed polygon, shifted by −off, to r, always
// counter-clockwise: the rasterizer sums signed coverage, so overlapping
// pieces of one stroke must wind the same way or they would cancel.
func addPolygon(r *vector.Rasterizer, pts []pt, off pt) {
	if len(pts) < 3 {
		return
	}
	var area float64
	for i := range pts {
		j := (i + 1) % len(pts)
		area += pts[i].X*pts[j].Y - pts[j].X*pts[i].Y
	}
	at := func(i int) pt {
		if area < 0 {
			return pts[len(pts)-1-i]
		}
		return pts[i]
	}
	p0 := at(0)
	r.MoveTo(float32(p0.X-off.X), float32(p0.Y-off.Y))
	for i := 1; i < len(pts); i++ {
		p := at(i)
		r.LineTo(float32(p.X-off.X), float32(p.Y-off.Y))
	}
	r.ClosePath()
}

// disc approximates a circle by a 24-gon.
func disc(c pt, rad float64) []pt {
	const n = 24
	out := make([]pt, n)
	for i := range out {
		a := 2 * math.Pi * float64(i) / n
		out[i] = pt{c.X + rad*math.Cos(a), c.Y + rad*math.Sin(a)}
	}
	return out
}

// stroke returns the polygons of a stroke of width w along pts with round
// joins and caps, cut into dashes when dash (on, off, …) is not empty.
func stroke(pts []pt, w float64, dash []float64) [][]pt {
	var out [][]pt
	for _, seg := range dashes(pts, dash) {
		for i := 0; i+1 < len(seg); i++ {
			a, b := seg[i], seg[i+1]
			dx, dy := b.X-a.X, b.Y-a.Y
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			nx, ny := -dy/l*w/2, dx/l*w/2
			out = append(out, []pt{{a.X + nx, a.Y + ny}, {b.X + nx, b.Y + ny}, {b.X - nx, b.Y - ny}, {a.X - nx, a.Y - ny}})
		}
		for _, p := range seg {
			out = append(out, disc(p, w/2))
		}
	}
	return out
}

// dashes cuts a polyline into the pieces its dash pattern draws.
func dashes(pts []pt, dash []float64) [][]pt {
	if len(dash) == 0 || len(pts) < 2 {
		return [][]pt{pts}
	}
	var out [][]pt
	idx, left, on := 0, dash[0], true
	cur := []pt{pts[0]}
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		segLen := math.Hypot(b.X-a.X, b.Y-a.Y)
		pos := 0.0
		for segLen-pos > left {
			pos += left
			t := pos / segLen
			p := pt{a.X + (b.X-a.X)*t, a.Y + (b.Y-a.Y)*t}
			if on {
				out = append(out, append(cur, p))
			}
			cur = []pt{p}
			on = !on
			idx = (idx + 1) % len(dash)
			left = dash[idx]
		}
		left -= segLen - pos
		cur = append(cur, b)
	}
	if on && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

// drawText sets t in the Go font; vertical text is set into a mask and
// rotated a quarter turn counter-clockwise about its anchor.
func drawText(img *image.RGBA, faces faceCache, t *text, scale float64) error {
	fc, err := faces.face(t.Size*scale, t.Bold)
	if err != nil {
		return fmt.Errorf("chart: font: %w", err)
	}
	width := font.MeasureString(fc, t.S).Ceil()
	m := fc.Metrics()
	ascent, descent := m.Ascent.Ceil(), m.Descent.Ceil()
	shift := [...]int{0, width / 2, width}[t.Anchor]
	mask := image.NewAlpha(image.Rect(0, 0, width+2, ascent+descent+2))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: fc, Dot: fixed.P(1, ascent+1)}
	d.DrawString(t.S)
	src := image.NewUniform(parseColor(t.Color))
	x, y := int(math.Round(t.X*scale)), int(math.Round(t.Y*scale))
	if !t.Vertical {
		draw.DrawMask(img, mask.Bounds().Add(image.Pt(x-shift-1, y-ascent-1)), src, image.Point{}, mask, image.Point{}, draw.Over)
		return nil
	}
	// Rotate −90°: mask pixel (u, v) goes to (v, W−1−u); the baseline
	// origin (1+shift, ascent+1) must land on (x, y).
	mb := mask.Bounds()
	rot := image.NewAlpha(image.Rect(0, 0, mb.Dy(), mb.Dx()))
	for v := 0; v < mb.Dy(); v++ {
		for u := 0; u < mb.Dx(); u++ {
			rot.SetAlpha(v, mb.Dx()-1-u, mask.AlphaAt(u, v))
		}
	}
	ox, oy := ascent+1, mb.Dx()-1-(1+shift)
	draw.DrawMask(img, rot.Bounds().Add(image.Pt(x-ox, y-oy)), src, image.Point{}, rot, image.Point{}, draw.Over)
	return nil
}

// parseColor reads "#rrggbb"; anything else is black.
func parseColor(hex string) color.RGBA {
	if len(hex) == 7 && hex[0] == '#' {
		if v, err := strconv.ParseUint(hex[1:], 16, 32); err == nil {
			return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
		}
	}
	return color.RGBA{0, 0, 0, 0xff}
}
