package tinymodel

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
)

// GGUF value types (gguf.md in the ggml repository).
const (
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
)

// GGML tensor types used here.
const (
	ggmlF32 = 0
	ggmlF16 = 1
)

// alignment is GGUF's default general.alignment.
const alignment = 32

// ggufWriter writes little-endian GGUF primitives and remembers the first
// error, so the caller checks once at the end.
type ggufWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (g *ggufWriter) bytes(b []byte) {
	if g.err != nil {
		return
	}
	var n int
	n, g.err = g.w.Write(b)
	g.n += int64(n)
}

func (g *ggufWriter) u32(v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	g.bytes(b[:])
}

func (g *ggufWriter) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	g.bytes(b[:])
}

func (g *ggufWriter) f32(v float32) { g.u32(math.Float32bits(v)) }

func (g *ggufWriter) f16(v float32) {
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], float32ToFloat16(v))
	g.bytes(b[:])
}

func (g *ggufWriter) str(s string) {
	g.u64(uint64(len(s)))
	g.bytes([]byte(s))
}

func (g *ggufWriter) pad() {
	for g.n%alignment != 0 && g.err == nil {
		g.bytes([]byte{0})
	}
}

// kv is one metadata key-value pair; value is uint32, int32, float32, bool,
// string, []string, []float32 or []int32.
type kv struct {
	key   string
	value any
}

func (g *ggufWriter) kv(p kv) {
	g.str(p.key)
	switch v := p.value.(type) {
	case uint32:
		g.u32(ggufUint32)
		g.u32(v)
	case int32:
		g.u32(ggufInt32)
		g.u32(uint32(v))
	case float32:
		g.u32(ggufFloat32)
		g.f32(v)
	case bool:
		g.u32(ggufBool)
		if v {
			g.bytes([]byte{1})
		} else {
			g.bytes([]byte{0})
		}
	case string:
		g.u32(ggufString)
		g.str(v)
	case []string:
		g.u32(ggufArray)
		g.u32(ggufString)
		g.u64(uint64(len(v)))
		for _, s := range v {
			g.str(s)
		}
	case []float32:
		g.u32(ggufArray)
		g.u32(ggufFloat32)
		g.u64(uint64(len(v)))
		for _, f := range v {
			g.f32(f)
		}
	case []int32:
		g.u32(ggufArray)
		g.u32(ggufInt32)
		g.u64(uint64(len(v)))
		for _, i := range v {
			g.u32(uint32(i))
		}
	default:
		panic("tinymodel: unsupported metadata type for " + p.key)
	}
}

// tensor is one weight tensor: dims in GGML order (ne0 = the contiguous,
// input dimension first) and its values in row-major order over those dims.
type tensor struct {
	name string
	dims []uint64
	data []float32
	f16  bool
}

func (t *tensor) size() int64 {
	if t.f16 {
		return int64(len(t.data)) * 2
	}
	return int64(len(t.data)) * 4
}

// writeGGUF writes a GGUF v3 file: header, metadata, tensor infos, padding,
// then the aligned tensor data.
func writeGGUF(w io.Writer, meta []kv, tensors []*tensor) error {
	g := &ggufWriter{w: bufio.NewWriterSize(w, 1<<16)}
	g.bytes([]byte("GGUF"))
	g.u32(3)
	g.u64(uint64(len(tensors)))
	g.u64(uint64(len(meta)))
	for _, p := range meta {
		g.kv(p)
	}
	var offset int64
	for _, t := range tensors {
		g.str(t.name)
		g.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			g.u64(d)
		}
		if t.f16 {
			g.u32(ggmlF16)
		} else {
			g.u32(ggmlF32)
		}
		g.u64(uint64(offset))
		offset += alignUp(t.size())
	}
	g.pad()
	for _, t := range tensors {
		start := g.n
		for _, v := range t.data {
			if t.f16 {
				g.f16(v)
			} else {
				g.f32(v)
			}
		}
		for (g.n-start)%alignment != 0 && g.err == nil {
			g.bytes([]byte{0})
		}
	}
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

func alignUp(n int64) int64 { return (n + alignment - 1) / alignment * alignment }

// float32ToFloat16 converts f to IEEE 754 half precision, rounding to
// nearest even; values beyond the half range become ±Inf.
func float32ToFloat16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case bits&0x7fffffff == 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := uint16(mant >> shift)
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | half
	}
	half := uint16(exp)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++
	}
	return sign | half
}
