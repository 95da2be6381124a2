// Package chart draws servebench's charts — throughput, TTFT, TPOT,
// per-request output rate, peak KV-cache usage and peak VRAM against
// concurrency — as SVG and PNG. Each run is one line in one colour (the
// same colour in every chart of a set); concurrency is on a log₂ axis with
// a tick at every measured level; axis titles carry units.
//
// The charts are laid out once as a scene of primitives (lines, discs,
// text) and drawn twice: as hand-written SVG, and as PNG through
// golang.org/x/image (vector rasterizer, Go fonts), so both files agree.
package chart

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/report"
)

// Chart is one chart: series of (concurrency, value) points.
type Chart struct {
	// Name is the file stem: Name.svg and Name.png.
	Name string
	// Title and Subtitle head the chart.
	Title, Subtitle string
	// XLabel and YLabel title the axes, with units.
	XLabel, YLabel string
	// YLog draws the value axis on a log₁₀ scale.
	YLog bool
	// YMax fixes the top of a linear value axis (0: from the data).
	YMax float64
	// Series are the lines.
	Series []Series
	// Keys explain line styles, e.g. "solid: p50", "dashed: p95".
	Keys []Key
	// Note is a line of small print under the plot.
	Note string
	// Thresholds are horizontal lines across the plot: the SLO's bounds
	// on the chart's figure (WithSLO).
	Thresholds []Threshold
}

// Threshold is a horizontal line at Y, named in the legend by Text.
type Threshold struct {
	Y    float64
	Text string
}

// Series is one line.
type Series struct {
	// Name is shown in the legend; empty hides the series from it (a
	// second style of a run already listed).
	Name string
	// Color is "#rrggbb".
	Color string
	// Dashed draws the line dashed.
	Dashed bool
	Points []XY
}

// XY is one point: X is the concurrency, Y the value; Lo and Hi, where
// set, are the ends of Y's confidence interval, drawn as an error bar.
type XY struct {
	X, Y   float64
	Lo, Hi *float64
}

// Key explains a line style in the legend.
type Key struct {
	Dashed bool
	Text   string
	// Bar shows an error bar instead of a line.
	Bar bool
	// Threshold shows a threshold line's style.
	Threshold bool
}

// palette is Tableau 10: distinct hues that stay apart for most colour
// vision deficiencies.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// colorOf gives run i of a set its colour.
func colorOf(i int) string { return palette[i%len(palette)] }

// ForSet returns the charts of a set: throughput, TTFT p50/p95, TPOT,
// per-request output rate, and peak KV-cache usage and peak VRAM where some
// run has them. A chart no run has data for is left out. Where some run
// was simulated, every title ends in report.SimulatedMark, the subtitle
// says the figures are predicted, and the legend marks each simulated run.
func ForSet(s *report.Set) []Chart {
	sub := subtitle(s)
	mark := titleMark(s)
	build := func(name, title, ylabel string, pick func(i int, r *report.Run) []Series) Chart {
		c := Chart{Name: name, Title: title + mark, Subtitle: sub, XLabel: "concurrency (concurrent requests, log scale)", YLabel: ylabel}
		for i, r := range s.Runs {
			c.Series = append(c.Series, pick(i, r)...)
		}
		return c
	}
	line := func(i int, r *report.Run, get func(report.Point) *float64, name string, dashed bool, fig ...document.Figure) []Series {
		sr := Series{Name: name, Color: colorOf(i), Dashed: dashed}
		for _, p := range r.Points {
			if v := get(p); v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				xy := XY{X: float64(p.Concurrency), Y: *v}
				if len(fig) > 0 {
					e := p.Estimate(fig[0])
					xy.Lo, xy.Hi = e.Low, e.High
				}
				sr.Points = append(sr.Points, xy)
			}
		}
		if len(sr.Points) == 0 {
			return nil
		}
		return []Series{sr}
	}
	name := func(r *report.Run) string { return r.SimulatedLabel() }

	var out []Chart
	out = append(out, build("throughput", "Output throughput vs concurrency", "output throughput (tok/s)", func(i int, r *report.Run) []Series {
		return line(i, r, func(p report.Point) *float64 { return p.ThroughputTokS }, name(r), false, document.FigThroughput)
	}))
	ttft := build("ttft", "Time to first token vs concurrency", "TTFT (ms, log scale)", func(i int, r *report.Run) []Series {
		p50 := line(i, r, func(p report.Point) *float64 { return p.TTFTP50Ms }, name(r), false, document.FigTTFTP50)
		p95 := line(i, r, func(p report.Point) *float64 { return p.TTFTP95Ms }, "", true, document.FigTTFTP95)
		if len(p50) == 0 && len(p95) > 0 {
			p95[0].Name = name(r)
		}
		return append(p50, p95...)
	})
	ttft.YLog, ttft.Keys = true, []Key{{Text: "solid: p50"}, {Dashed: true, Text: "dashed: p95"}}
	out = append(out, ttft)
	tpot := build("tpot", "Time per output token vs concurrency", "TPOT (ms)", func(i int, r *report.Run) []Series {
		if r.Kind == report.KindBatch {
			return line(i, r, func(p report.Point) *float64 { return p.BatchTPOTMs }, name(r), true)
		}
		return line(i, r, func(p report.Point) *float64 { return p.TPOTP50Ms }, name(r), false, document.FigTPOTP50)
	})
	var sweeps, batches bool
	for _, sr := range tpot.Series {
		sweeps, batches = sweeps || !sr.Dashed, batches || sr.Dashed
	}
	if sweeps && batches {
		tpot.Keys = []Key{{Text: "solid: TPOT p50"}, {Dashed: true, Text: "dashed: batch mean, incl. prefill"}}
	} else if batches {
		tpot.YLabel = "mean TPOT of the batch, incl. prefill (ms)"
	}
	out = append(out, tpot)
	per := build("per_request", "Per-request output rate vs concurrency", "per-request output (tok/s)", func(i int, r *report.Run) []Series {
		return line(i, r, func(p report.Point) *float64 { return p.PerRequestTokS }, name(r), false)
	})
	per.Note = "throughput ÷ concurrency: the output rate one concurrent user gets, queueing included"
	out = append(out, per)
	kv := build("kv_cache", "Peak KV-cache usage vs concurrency", "peak KV-cache usage (%)", func(i int, r *report.Run) []Series {
		return line(i, r, func(p report.Point) *float64 {
			if p.PeakKVCacheUsage == nil {
				return nil
			}
			v := *p.PeakKVCacheUsage * 100
			return &v
		}, name(r), false)
	})
	kv.YMax = 100
	out = append(out, kv)
	out = append(out, build("vram", "Peak GPU memory vs concurrency", "peak VRAM (GiB)", func(i int, r *report.Run) []Series {
		return line(i, r, func(p report.Point) *float64 { return p.PeakVRAMGiB }, name(r), false)
	}))
	out = append(out, figureCharts(build, line)...)
	kept := out[:0]
	for _, c := range out {
		if len(c.Series) > 0 {
			kept = append(kept, c)
		}
	}
	return kept
}

// figureCharts are the charts of the figure table's figures that ask for
// one, each run a line, drawn with ForSet's build and line.
func figureCharts(build func(name, title, ylabel string, pick func(i int, r *report.Run) []Series) Chart,
	line func(i int, r *report.Run, get func(report.Point) *float64, name string, dashed bool, fig ...document.Figure) []Series) []Chart {
	var out []Chart
	for _, f := range chartedFigures() {
		out = append(out, build(string(f.Key), f.Label+" vs concurrency", f.axisLabel(), func(i int, r *report.Run) []Series {
			if f.Interval != nil && f.Unit != "%" {
				return line(i, r, f.value, r.SimulatedLabel(), false, f.Key)
			}
			return line(i, r, f.value, r.SimulatedLabel(), false)
		}))
	}
	return out
}

// chartedFigure is a figure of the figure table with a chart of its own.
type chartedFigure struct{ *document.FigureSpec }

// chartedFigures are the figure table's figures that ask for a chart
// (document.InChart), in its order.
func chartedFigures() []chartedFigure {
	var out []chartedFigure
	figs := document.Figures()
	for i := range figs {
		if f := &figs[i]; f.Is(document.InChart) && f.Key != "" && f.Value != nil {
			out = append(out, chartedFigure{f})
		}
	}
	return out
}

// axisLabel is the value axis's title: "probe (ms)".
func (f chartedFigure) axisLabel() string {
	if f.Unit == "" {
		return f.Label
	}
	return f.Label + " (" + f.Unit + ")"
}

// value is the point's figure as the chart draws it: a "%" figure as a
// percentage.
func (f chartedFigure) value(p report.Point) *float64 {
	v := p.Figure(f.FigureSpec)
	if v != nil && f.Unit == "%" {
		pct := *v * 100
		return &pct
	}
	return v
}

// titleMark ends every chart title of a set with a simulated run:
// " — SIMULATED"; "" otherwise.
func titleMark(s *report.Set) string {
	if s.Simulated() {
		return " — " + report.SimulatedMark
	}
	return ""
}

func subtitle(s *report.Set) string {
	var gpus []string
	for _, src := range s.Sources {
		if g := src.Doc.GPU; g != nil && !slices.Contains(gpus, *g) {
			gpus = append(gpus, *g)
		}
	}
	parts := []string{}
	if s.Simulated() {
		parts = append(parts, report.SimulatedMark+": predicted by the simulator, not measured")
	}
	if len(gpus) > 0 {
		parts = append(parts, strings.Join(gpus, ", "))
	}
	var files []string
	for _, f := range s.Files() {
		files = append(files, filepath.Base(f))
	}
	parts = append(parts, strings.Join(files, ", "))
	return strings.Join(parts, " · ")
}

// SVG draws the chart as a standalone SVG document.
func (c Chart) SVG() []byte { return c.scene().svg() }

// PNGScale is the PNG's pixels per SVG unit: 2 gives a sharp 1920×1080
// image.
const PNGScale = 2

// PNG draws the chart as a PNG image.
func (c Chart) PNG() ([]byte, error) { return c.scene().png(PNGScale) }

// WriteDir writes every chart as NAME.svg and NAME.png into dir (made if
// missing) and returns the paths written.
func WriteDir(dir string, charts []Chart) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	var paths []string
	for _, c := range charts {
		p := filepath.Join(dir, c.Name+".svg")
		if err := os.WriteFile(p, c.SVG(), 0o644); err != nil {
			return paths, fmt.Errorf("charts: %w", err)
		}
		paths = append(paths, p)
		img, err := c.PNG()
		if err != nil {
			return paths, err
		}
		p = filepath.Join(dir, c.Name+".png")
		if err := os.WriteFile(p, img, 0o644); err != nil {
			return paths, fmt.Errorf("charts: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Layout of the chart area, in SVG units.
const (
	width, height     = 960.0, 540.0
	left, right       = 84.0, 690.0
	top, bottom       = 74.0, 468.0
	legendX           = 712.0
	axisColor         = "#444444"
	gridColor         = "#e3e3e3"
	textColor         = "#222222"
	mutedColor        = "#666666"
	lineWidth         = 2.2
	markerRadius      = 3.6
	tickSize, lblSize = 12.0, 13.0
	barWidth, barCap  = 1.2, 4.0
)

var dashPattern = []float64{7, 5}

// A threshold line is red, finer than a series and dashed short-long so
// it reads as a limit, not a run.
const (
	thresholdColor = "#c0392b"
	thresholdWidth = 1.6
)

var thresholdDash = []float64{10, 3, 2, 3}

// scene lays the chart out.
func (c Chart) scene() *scene {
	s := &scene{W: width, H: height}
	s.add(&rect{X: 0, Y: 0, W: width, H: height, Fill: "#ffffff"})
	s.add(&text{X: left, Y: 30, S: c.Title, Size: 19, Bold: true, Color: textColor})
	if c.Subtitle != "" {
		s.add(&text{X: left, Y: 52, S: c.Subtitle, Size: 12.5, Color: mutedColor})
	}
	xs, ys := c.domain()
	xmap := logAxis(xs, left+14, right-14)
	var ymap func(float64) float64
	var yticks []float64
	if c.YLog {
		ymap, yticks = logYAxis(ys, bottom, top)
	} else {
		ymap, yticks = linearAxis(ys, c.YMax, bottom, top)
	}
	// Grid and ticks.
	for _, v := range yticks {
		y := ymap(v)
		s.add(&polyline{Pts: []pt{{left, y}, {right, y}}, Color: gridColor, Width: 1})
		s.add(&text{X: left - 8, Y: y + 4, S: tickLabel(v), Size: tickSize, Anchor: anchorEnd, Color: textColor})
	}
	for _, v := range xTicks(xs) {
		x := xmap(v)
		s.add(&polyline{Pts: []pt{{x, top}, {x, bottom}}, Color: gridColor, Width: 1})
		s.add(&polyline{Pts: []pt{{x, bottom}, {x, bottom + 5}}, Color: axisColor, Width: 1})
		s.add(&text{X: x, Y: bottom + 20, S: tickLabel(v), Size: tickSize, Anchor: anchorMiddle, Color: textColor})
	}
	s.add(&polyline{Pts: []pt{{left, top}, {left, bottom}, {right, bottom}}, Color: axisColor, Width: 1.2})
	s.add(&text{X: (left + right) / 2, Y: bottom + 44, S: c.XLabel, Size: lblSize, Anchor: anchorMiddle, Color: textColor})
	s.add(&text{X: 24, Y: (top + bottom) / 2, S: c.YLabel, Size: lblSize, Anchor: anchorMiddle, Vertical: true, Color: textColor})
	if c.Note != "" {
		s.add(&text{X: left, Y: height - 10, S: c.Note, Size: 11.5, Color: mutedColor})
	}
	// Lines and markers.
	for _, sr := range c.Series {
		var pts []pt
		for _, p := range sr.Points {
			pts = append(pts, pt{xmap(p.X), ymap(p.Y)})
		}
		if len(pts) > 1 {
			pl := &polyline{Pts: pts, Color: sr.Color, Width: lineWidth}
			if sr.Dashed {
				pl.Dash = dashPattern
			}
			s.add(pl)
		}
		for _, p := range pts {
			s.add(&circle{C: p, R: markerRadius, Color: sr.Color})
		}
		for _, p := range sr.Points {
			if p.Lo != nil && p.Hi != nil {
				errorBar(s, xmap(p.X), ymap(*p.Lo), ymap(*p.Hi), sr.Color)
			}
		}
	}
	for _, th := range c.Thresholds {
		y := ymap(th.Y)
		s.add(&polyline{Pts: []pt{{left, y}, {right, y}}, Color: thresholdColor, Width: thresholdWidth, Dash: thresholdDash})
	}
	if c.hasErrorBars() {
		c.Keys = append(slices.Clone(c.Keys), Key{Text: "bars: confidence interval", Bar: true})
	}
	for _, th := range c.Thresholds {
		c.Keys = append(slices.Clone(c.Keys), Key{Text: th.Text, Threshold: true})
	}
	c.legend(s)
	return s
}

// errorBar draws a confidence interval at x from y0 to y1 with caps.
func errorBar(s *scene, x, y0, y1 float64, color string) {
	s.add(&polyline{Pts: []pt{{x, y0}, {x, y1}}, Color: color, Width: barWidth})
	for _, y := range []float64{y0, y1} {
		s.add(&polyline{Pts: []pt{{x - barCap, y}, {x + barCap, y}}, Color: color, Width: barWidth})
	}
}

// hasErrorBars reports whether some point has an interval.
func (c Chart) hasErrorBars() bool {
	for _, sr := range c.Series {
		for _, p := range sr.Points {
			if p.Lo != nil && p.Hi != nil {
				return true
			}
		}
	}
	return false
}

// legend lists the named series, then the style keys.
func (c Chart) legend(s *scene) {
	y := top + 6
	for _, sr := range c.Series {
		if sr.Name == "" {
			continue
		}
		pl := &polyline{Pts: []pt{{legendX, y}, {legendX + 26, y}}, Color: sr.Color, Width: lineWidth}
		if sr.Dashed {
			pl.Dash = dashPattern
		}
		s.add(pl)
		s.add(&circle{C: pt{legendX + 13, y}, R: markerRadius, Color: sr.Color})
		s.add(&text{X: legendX + 34, Y: y + 4, S: legendName(sr.Name, 30), Size: 12, Color: textColor})
		y += 21
	}
	if len(c.Keys) > 0 {
		y += 8
	}
	for _, k := range c.Keys {
		if k.Threshold {
			s.add(&polyline{Pts: []pt{{legendX, y}, {legendX + 26, y}}, Color: thresholdColor, Width: thresholdWidth, Dash: thresholdDash})
			s.add(&text{X: legendX + 34, Y: y + 4, S: ellipsis(k.Text, 30), Size: 12, Color: textColor})
			y += 21
			continue
		}
		if k.Bar {
			errorBar(s, legendX+13, y-7, y+7, mutedColor)
			s.add(&text{X: legendX + 34, Y: y + 4, S: k.Text, Size: 12, Color: textColor})
			y += 21
			continue
		}
		pl := &polyline{Pts: []pt{{legendX, y}, {legendX + 26, y}}, Color: mutedColor, Width: lineWidth}
		if k.Dashed {
			pl.Dash = dashPattern
		}
		s.add(pl)
		s.add(&text{X: legendX + 34, Y: y + 4, S: k.Text, Size: 12, Color: textColor})
		y += 21
	}
}

// legendName shortens a series name to n runes, keeping a trailing
// " (SIMULATED)" whole: the label before it is shortened instead.
func legendName(s string, n int) string {
	mark := " (" + report.SimulatedMark + ")"
	if label, ok := strings.CutSuffix(s, mark); ok && len([]rune(s)) > n {
		return ellipsis(label, max(n-len(mark), 4)) + mark
	}
	return ellipsis(s, n)
}

// ellipsis shortens s to n runes.
func ellipsis(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// domain returns the distinct x values and all y values.
func (c Chart) domain() (xs, ys []float64) {
	seen := map[float64]bool{}
	for _, sr := range c.Series {
		for _, p := range sr.Points {
			if !seen[p.X] {
				seen[p.X] = true
				xs = append(xs, p.X)
			}
			ys = append(ys, p.Y)
			for _, e := range []*float64{p.Lo, p.Hi} {
				if e != nil && p.Lo != nil && p.Hi != nil {
					ys = append(ys, *e)
				}
			}
		}
	}
	if len(xs) > 0 {
		// A threshold is placed on the value axis only beside data.
		for _, th := range c.Thresholds {
			ys = append(ys, th.Y)
		}
	}
	sort.Float64s(xs)
	return xs, ys
}

// logAxis maps concurrency onto [a, b] on a log₂ scale with a margin.
func logAxis(xs []float64, a, b float64) func(float64) float64 {
	lo, hi := 1.0, 2.0
	if len(xs) > 0 {
		lo, hi = xs[0], xs[len(xs)-1]
	}
	l0, l1 := math.Log2(math.Max(lo, 1e-9)), math.Log2(math.Max(hi, 1e-9))
	if l1-l0 < 1e-9 {
		l0, l1 = l0-1, l1+1
	}
	pad := (l1 - l0) * 0.04
	l0, l1 = l0-pad, l1+pad
	return func(x float64) float64 { return a + (math.Log2(x)-l0)/(l1-l0)*(b-a) }
}

// xTicks are the measured concurrencies, or powers of two when there are
// too many to label.
func xTicks(xs []float64) []float64 {
	if len(xs) <= 12 {
		return xs
	}
	var out []float64
	for v := math.Pow(2, math.Floor(math.Log2(xs[0]))); v <= xs[len(xs)-1]; v *= 2 {
		if v >= xs[0] {
			out = append(out, v)
		}
	}
	return out
}

// linearAxis maps [0, max] onto [y0, y1] with 1-2-5 ticks. Values out of
// range (report.InRange) do not widen the axis; every value maps into
// [y0, y1], so one beyond the axis is drawn at its edge.
func linearAxis(ys []float64, fixedMax, y0, y1 float64) (func(float64) float64, []float64) {
	hi := fixedMax
	lo := 0.0
	for _, v := range ys {
		if !report.InRange(v) {
			continue
		}
		lo = math.Min(lo, v)
		if fixedMax == 0 {
			hi = math.Max(hi, v)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	top := math.Ceil(hi/step) * step
	if fixedMax == 0 && top < hi*1.04 {
		top += step
	}
	bot := math.Floor(lo/step) * step
	// The axis spans 0 and at most 2×MaxMagnitude, so n is about 5–7; the
	// bound keeps the loop short whatever rounding does.
	n := min(int(math.Round((top-bot)/step)), maxTicks)
	var ticks []float64
	for i := 0; i <= n; i++ {
		ticks = append(ticks, math.Round((bot+float64(i)*step)/step)*step)
	}
	return func(v float64) float64 { return clampTo(y0+(v-bot)/(top-bot)*(y1-y0), y0, y1) }, ticks
}

// maxTicks bounds the ticks of a value axis.
const maxTicks = 40

// clampTo limits y to the band between a and b (in either order); NaN
// becomes a.
func clampTo(y, a, b float64) float64 {
	lo, hi := math.Min(a, b), math.Max(a, b)
	if math.IsNaN(y) {
		return a
	}
	return math.Max(lo, math.Min(hi, y))
}

// logYAxis maps values onto [y0, y1] on a log₁₀ scale spanning whole 1-2-5
// steps around the data. Only values in (1/MaxMagnitude, MaxMagnitude)
// place the axis, so it spans at most 30 decades; a value beyond it is
// drawn at its edge.
func logYAxis(ys []float64, y0, y1 float64) (func(float64) float64, []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ys {
		if v > 1/report.MaxMagnitude && report.InRange(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	steps := []float64{1, 2, 5}
	var ticks []float64
	e0 := math.Floor(math.Log10(lo))
	decades := int(math.Floor(math.Log10(hi))-e0) + 1 // the decade above hi too
	d := math.Pow(10, e0)
	for range decades + 1 {
		for _, m := range steps {
			ticks = append(ticks, m*d)
		}
		d *= 10
	}
	// Keep ticks from the last one ≤ lo to the first one ≥ hi.
	i0, i1 := 0, len(ticks)-1
	for i, t := range ticks {
		if t <= lo {
			i0 = i
		}
		if t >= hi {
			i1 = i
			break
		}
	}
	ticks = ticks[i0 : i1+1]
	if len(ticks) < 2 {
		ticks = []float64{lo, lo * 10}
	}
	l0, l1 := math.Log10(ticks[0]), math.Log10(ticks[len(ticks)-1])
	if len(ticks) > 10 {
		// Too dense: keep powers of ten only, and of those every k-th.
		var p []float64
		for _, t := range ticks {
			if math.Abs(math.Log10(t)-math.Round(math.Log10(t))) < 1e-9 {
				p = append(p, t)
			}
		}
		k := (len(p) + 9) / 10
		ticks = ticks[:0]
		for i := 0; i < len(p); i += k {
			ticks = append(ticks, p[i])
		}
	}
	return func(v float64) float64 {
		if v <= 0 {
			return y0
		}
		return clampTo(y0+(math.Log10(v)-l0)/(l1-l0)*(y1-y0), y0, y1)
	}, ticks
}

// niceStep rounds a raw step up to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*e {
			return m * e
		}
	}
	return 10 * e
}

// tickLabel writes a tick value briefly: thousands separated by commas,
// fractions with up to two decimals.
func tickLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) >= 1000 {
		s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
		var b strings.Builder
		for i, r := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		if v < 0 {
			return "-" + b.String()
		}
		return b.String()
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
