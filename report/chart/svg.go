package chart

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// fontFamily prefers Go's own font (what the PNG uses) and falls back to
// common sans-serif fonts; no font is fetched from anywhere.
const fontFamily = "Go, 'Go Regular', 'DejaVu Sans', Arial, Helvetica, sans-serif"

// svg writes the scene as a standalone SVG document. Every text is
// XML-escaped, so labels from documents cannot inject markup.
func (s *scene) svg() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s" role="img">`+"\n",
		f(s.W), f(s.H), f(s.W), f(s.H), fontFamily)
	for _, it := range s.items {
		switch v := it.(type) {
		case *rect:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"`, f(v.X), f(v.Y), f(v.W), f(v.H), orNone(v.Fill))
			if v.Stroke != "" {
				fmt.Fprintf(&b, ` stroke="%s" stroke-width="1"`, v.Stroke)
			}
			b.WriteString("/>\n")
		case *polyline:
			pts := make([]string, len(v.Pts))
			for i, p := range v.Pts {
				pts[i] = f(p.X) + "," + f(p.Y)
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round" stroke-linecap="round"`,
				strings.Join(pts, " "), v.Color, f(v.Width))
			if len(v.Dash) > 0 {
				d := make([]string, len(v.Dash))
				for i, x := range v.Dash {
					d[i] = f(x)
				}
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, strings.Join(d, " "))
			}
			b.WriteString("/>\n")
		case *circle:
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`+"\n", f(v.C.X), f(v.C.Y), f(v.R), v.Color)
		case *text:
			anchor := [...]string{"start", "middle", "end"}[v.Anchor]
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="%s" text-anchor="%s" fill="%s"`, f(v.X), f(v.Y), f(v.Size), anchor, v.Color)
			if v.Bold {
				b.WriteString(` font-weight="bold"`)
			}
			if v.Vertical {
				fmt.Fprintf(&b, ` transform="rotate(-90 %s %s)"`, f(v.X), f(v.Y))
			}
			b.WriteString(">" + xmlEscape(v.S) + "</text>\n")
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func orNone(c string) string {
	if c == "" {
		return "none"
	}
	return c
}

// f formats a coordinate with at most two decimals.
func f(v float64) string {
	return strconv.FormatFloat(float64(int64(v*100+0.5*sign(v)))/100, 'f', -1, 64)
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// xmlEscape escapes s for XML text and attributes and drops characters XML
// 1.0 does not allow.
func xmlEscape(s string) string {
	s = strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t') || r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, s)
	return xmlEscaper.Replace(s)
}
