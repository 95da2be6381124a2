package stats

import (
	"reflect"

	"github.com/servebench/servebench/document"
)

// levelMemo is the last summary an Accumulator made, with the number of
// Adds and the Options it was made at: find summarizes each level as it
// ends and again, unchanged, in the final document, and a summary of a
// simulated level of thousands of requests (its intervals' bootstrap
// resamples, its sorts) costs more than the rest of the document.
type levelMemo struct {
	ok   bool
	adds int
	opts Options
	l    document.Level
}

// get is the memo's summary, a deep copy (callers own what Level returns,
// pointers included), when it was made at adds Adds and opts.
func (m *levelMemo) get(adds int, opts Options) (document.Level, bool) {
	if !m.ok || m.adds != adds || !reflect.DeepEqual(m.opts, opts) {
		return document.Level{}, false
	}
	return deepCopy(m.l), true
}

// put keeps a deep copy of l, made at adds Adds and opts.
func (m *levelMemo) put(adds int, opts Options, l document.Level) {
	*m = levelMemo{ok: true, adds: adds, opts: deepCopy(opts), l: deepCopy(l)}
}

// deepCopy is a copy of v that shares no memory with it: every pointer,
// slice and map it reaches is copied too (the summary's types hold no
// cycles, channels or functions). The *float64 figures, most of a
// summary, are carved out of shared slabs rather than allocated one by
// one.
func deepCopy[T any](v T) T {
	var out T
	var c copier
	c.value(reflect.ValueOf(&out).Elem(), reflect.ValueOf(v))
	return out
}

// copier deep-copies values; floats is the rest of its current slab.
type copier struct{ floats []float64 }

// floatSlab is how many float64 one slab holds.
const floatSlab = 64

// value sets dst, settable and of src's type, to a deep copy of src.
func (c *copier) value(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if src.Type().Elem() == reflect.TypeFor[float64]() {
			if len(c.floats) == 0 {
				c.floats = make([]float64, floatSlab)
			}
			p := &c.floats[0]
			c.floats = c.floats[1:]
			*p = src.Elem().Float()
			dst.Set(reflect.ValueOf(p))
			return
		}
		p := reflect.New(src.Type().Elem())
		c.value(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		for i := range src.NumField() {
			c.value(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		c.elems(s, src)
		dst.Set(s)
	case reflect.Array:
		c.elems(dst, src)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(src.Type().Key()).Elem()
			c.value(k, it.Key())
			v := reflect.New(src.Type().Elem()).Elem()
			c.value(v, it.Value())
			m.SetMapIndex(k, v)
		}
		dst.Set(m)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		v := reflect.New(src.Elem().Type()).Elem()
		c.value(v, src.Elem())
		dst.Set(v)
	default:
		dst.Set(src)
	}
}

// elems deep-copies the elements of src, a slice or an array, into dst,
// of its type and length.
func (c *copier) elems(dst, src reflect.Value) {
	for i := range src.Len() {
		c.value(dst.Index(i), src.Index(i))
	}
}
