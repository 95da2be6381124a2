package report

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// MaxMagnitude bounds the values a report shows and draws: 1e15 (in ms,
// thirty thousand years; in tok/s or GiB, far beyond any machine). A value
// at or beyond it, or one that is not finite, is shown as Null and drawn
// at the edge of a clamped axis, and the report warns about it
// (OutOfRange), so a hostile or corrupt document cannot make a table cell
// hundreds of digits wide or an axis loop without end.
const MaxMagnitude = 1e15

// InRange reports whether v is finite and smaller in magnitude than
// MaxMagnitude.
func InRange(v float64) bool {
	return !math.IsNaN(v) && math.Abs(v) < MaxMagnitude
}

// mayBeNegative names the numeric fields that can be below zero: the
// rate method's schedule lag (a request sent before its time).
var mayBeNegative = map[string]bool{"schedule_lag_p99_ms": true}

// OutOfRange lists, as warnings, the numeric fields of v (a
// document.Level or document.BatchRecord, by value) that are not finite,
// not below MaxMagnitude, or negative where no such value can be measured:
// "ttft_p50_ms 1e+308 is out of range; shown as —". Fields are found by
// reflection and named by their JSON names, so fields added to the
// documents later are checked too.
func OutOfRange(v any) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for _, sf := range reflect.VisibleFields(rv.Type()) {
		if sf.Anonymous {
			continue // its fields follow as the level's own (record.Observations)
		}
		f := rv.FieldByIndex(sf.Index)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() != reflect.Float64 {
			continue
		}
		x := f.Float()
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case !InRange(x):
			out = append(out, fmt.Sprintf("%s %s is out of range (not finite, or %g or more in magnitude); shown as %s and drawn at the edge of the axis",
				name, strconv.FormatFloat(x, 'g', 4, 64), MaxMagnitude, Null))
		case x < 0 && !mayBeNegative[name]:
			out = append(out, fmt.Sprintf("%s %s is negative, which no measurement gives; the document is corrupt or was edited",
				name, strconv.FormatFloat(x, 'g', 4, 64)))
		}
	}
	return out
}
