package chart

import (
	"bytes"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/report/reporttest"

	"github.com/servebench/servebench/internal/testenv"

	"github.com/servebench/servebench/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// loadSeed reads a reference document of examples/ as a report set.
func loadSeed(t testing.TB, name string) *report.Set { return reporttest.LoadSeed(t, name) }

func names(cs []Chart) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return strings.Join(n, " ")
}

func TestChartsPerShape(t *testing.T) {
	if got := names(ForSet(loadSeed(t, "multi-backend-sweep.json"))); got != "throughput ttft tpot per_request kv_cache vram" {
		t.Errorf("sweep charts: %s", got)
	}
	// The batch example has no TTFT and no KV usage.
	if got := names(ForSet(loadSeed(t, "vllm-text-image-example.json"))); got != "throughput tpot per_request vram" {
		t.Errorf("batch charts: %s", got)
	}
}

// TestSVGGolden keeps every chart of both references as golden SVG.
func TestSVGGolden(t *testing.T) {
	for _, seed := range []string{"multi-backend-sweep.json", "vllm-text-image-example.json"} {
		for _, c := range ForSet(loadSeed(t, seed)) {
			name := strings.TrimSuffix(seed, ".json") + "." + c.Name + ".svg"
			path := filepath.Join("testdata", name)
			testenv.Golden(t, path, c.SVG(), *update, "go test ./report/chart -update")
		}
	}
}

// TestPNGMatchesScene draws the throughput chart and checks that every
// marker of the scene is in the PNG, in its series' colour, at the scaled
// position — so the PNG shows the same data as the SVG.
func TestPNGMatchesScene(t *testing.T) {
	c := ForSet(loadSeed(t, "multi-backend-sweep.json"))[0]
	data, err := c.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != width*PNGScale || b.Dy() != height*PNGScale {
		t.Fatalf("PNG is %v, want %v×%v", b, width*PNGScale, height*PNGScale)
	}
	markers := 0
	for _, it := range c.scene().items {
		ci, ok := it.(*circle)
		if !ok {
			continue
		}
		markers++
		want := parseColor(ci.Color)
		r, g, b, _ := img.At(int(ci.C.X*PNGScale), int(ci.C.Y*PNGScale)).RGBA()
		// The marker may be overdrawn by a later series' marker; accept
		// any palette colour but not the white background or grey grid.
		if uint8(r>>8) == 0xff && uint8(g>>8) == 0xff && uint8(b>>8) == 0xff {
			t.Errorf("marker at %v is blank in the PNG (want %v)", ci.C, want)
		}
	}
	// 31 levels plus one legend marker per run.
	if markers != 31+9 {
		t.Errorf("%d markers, want 40", markers)
	}
	// vllm-fp8kv-chat c=16 is drawn last at its point: exact colour.
	var top *circle
	for _, it := range c.scene().items {
		if ci, ok := it.(*circle); ok && ci.Color == colorOf(7) && (top == nil || ci.C.Y < top.C.Y) {
			top = ci
		}
	}
	r, g, b, _ := img.At(int(top.C.X*PNGScale), int(top.C.Y*PNGScale)).RGBA()
	want := parseColor(colorOf(7))
	if uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
		t.Errorf("top marker pixel %d,%d,%d, want %v", r>>8, g>>8, b>>8, want)
	}
}

func TestLogAxis(t *testing.T) {
	m := logAxis([]float64{1, 4, 16}, 0, 100)
	d1, d2 := m(4)-m(1), m(16)-m(4)
	if math.Abs(d1-d2) > 1e-9 || m(1) <= 0 || m(16) >= 100 {
		t.Errorf("log axis: 1→%v 4→%v 16→%v", m(1), m(4), m(16))
	}
	_, ticks := logYAxis([]float64{110, 53126}, 400, 0)
	if ticks[0] != 100 || ticks[len(ticks)-1] != 100000 {
		t.Errorf("log y ticks %v, want 100 … 100000", ticks)
	}
	_, lt := linearAxis([]float64{1209.9}, 0, 400, 0)
	if lt[0] != 0 || lt[len(lt)-1] < 1209.9 {
		t.Errorf("linear ticks %v", lt)
	}
}

func TestDashes(t *testing.T) {
	segs := dashes([]pt{{0, 0}, {10, 0}, {10, 10}}, []float64{3, 1})
	// 20 px of path with a 4 px period: 5 dashes of 3 px.
	if len(segs) != 5 {
		t.Fatalf("%d dashes, want 5: %v", len(segs), segs)
	}
	// The third dash, 8 to 11 px, turns the corner at (10, 0).
	if len(segs[2]) != 3 || segs[2][0] != (pt{8, 0}) || segs[2][1] != (pt{10, 0}) || segs[2][2] != (pt{10, 1}) {
		t.Errorf("corner dash %v", segs[2])
	}
}

// TestEscapedLabels draws a run whose label is markup: the SVG must carry
// it as text.
func TestEscapedLabels(t *testing.T) {
	s := loadSeed(t, "multi-backend-sweep.json")
	s.Runs[0].Label = "<script>alert(1)</script>"
	svg := string(ForSet(s)[0].SVG())
	if strings.Contains(svg, "<script") || !strings.Contains(svg, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("label not escaped in SVG")
	}
	if _, err := ForSet(s)[0].PNG(); err != nil {
		t.Error(err)
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteDir(filepath.Join(dir, "charts"), ForSet(loadSeed(t, "vllm-text-image-example.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 8 {
		t.Errorf("wrote %v, want 4 SVG + 4 PNG", paths)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestPNGConcurrent draws the charts of a set on several goroutines at
// once, as a caller may (run with -race).
func TestPNGConcurrent(t *testing.T) {
	charts := ForSet(loadSeed(t, "vllm-text-image-example.json"))
	errs := make(chan error, len(charts))
	for _, c := range charts {
		go func() {
			_, err := c.PNG()
			errs <- err
		}()
	}
	for range charts {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestErrorBars: a level with intervals gets a bar from the low to the
// high end with a cap at each, in its series' colour, and the legend says
// what the bars are; the axis reaches the ends.
func TestErrorBars(t *testing.T) {
	lo, hi := 900.0, 1300.0
	c := Chart{Name: "t", Title: "t", Series: []Series{{Name: "r", Color: "#4e79a7", Points: []XY{{X: 1, Y: 500}, {X: 4, Y: 1100, Lo: &lo, Hi: &hi}}}}}
	s := c.scene()
	bars := 0
	for _, it := range s.items {
		if pl, ok := it.(*polyline); ok && pl.Color == "#4e79a7" && pl.Width == barWidth {
			bars++
		}
	}
	if bars != 3 {
		t.Fatalf("%d bar strokes in the series colour, want a bar and two caps", bars)
	}
	svg := string(c.SVG())
	if !strings.Contains(svg, "bars: confidence interval") {
		t.Error("legend does not explain the bars")
	}
	_, ys := c.domain()
	if !containsAll(ys, 900, 1300) {
		t.Errorf("domain %v lacks the interval's ends", ys)
	}
	// Charts of documents with intervals carry them.
	bars = 0
	for _, ch := range ForSet(reporttest.LoadRecords(t, "record/testdata/ollama-testbed-pool.jsonl")) {
		for _, sr := range ch.Series {
			for _, p := range sr.Points {
				if p.Lo != nil {
					bars++
				}
			}
		}
	}
	if bars == 0 {
		t.Error("no error bars from a records file")
	}
}

func containsAll(xs []float64, want ...float64) bool {
	for _, w := range want {
		found := false
		for _, x := range xs {
			found = found || x == w
		}
		if !found {
			return false
		}
	}
	return true
}
