// Package gguf reads the header, metadata and tensor table of a GGUF model
// file (ggml/docs/gguf.md): the metadata keys the planner uses and the
// tensors' total size, which is the weights' real memory.
//
// This is servebench's own reader rather than
// github.com/gpustack/gguf-parser-go: the planner needs only a few
// metadata keys and the tensors' sizes, and a reader of outside files
// must bound what it allocates. This one checks every count and length
// against the bytes left in the file before it reads or allocates
// anything, keeps only the keys it uses, skips the rest (the tokenizer's
// large arrays included) without buffering them, and never panics on a
// truncated or hostile file (fuzzed in FuzzParse).
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// GGUF metadata value types (ggml/docs/gguf.md).
const (
	gUint8 = iota
	gInt8
	gUint16
	gInt16
	gUint32
	gInt32
	gFloat32
	gBool
	gString
	gArray
	gUint64
	gInt64
	gFloat64
)

// gScalarSize is the size of each fixed-size value type.
var gScalarSize = map[uint32]int64{
	gUint8: 1, gInt8: 1, gUint16: 2, gInt16: 2, gUint32: 4, gInt32: 4, gFloat32: 4,
	gBool: 1, gUint64: 8, gInt64: 8, gFloat64: 8,
}

// ggufFileTypes names general.file_type values (llama_ftype).
var ggufFileTypes = map[uint64]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
	12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
	19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
	26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
	36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

// Limits on what a GGUF file may declare (far above real models).
const (
	maxGGUFKeyLen    = 1 << 16
	maxGGUFStringLen = 1 << 24
	maxGGUFDims      = 4
	maxGGUFIntArray  = 1 << 16
)

// Info is what Read found: metadata the planner uses and the tensors'
// total size.
type Info struct {
	// Version is the GGUF format version (2 or 3).
	Version uint32
	// Arch is general.architecture ("llama", "qwen2", "gemma3", ...).
	Arch string
	// Ints holds numeric metadata (integers; floats as their integer
	// part), Strings the "general.*" strings, IntArrays the per-layer
	// integer arrays the planner reads.
	Ints      map[string]uint64
	IntArrays map[string][]uint64
	Strings   map[string]string
	// TokenCount is the length of tokenizer.ggml.tokens (the vocabulary).
	TokenCount uint64
	// Tensors is the number of tensors and TensorBytes their total size
	// computed from shape and GGML type: the weights' real bytes.
	Tensors     int
	TensorBytes int64
	// HasOutput is false when the file has no output.weight (the
	// embeddings are tied).
	HasOutput bool
	// LayerBytes is the size of each repeating layer's tensors (blk.N.*,
	// indexed by N); OutputBytes, OutputNormBytes and TokenEmbdBytes those
	// of output.weight, output_norm.* and token_embd.*: what llama.cpp and
	// Ollama place on a device layer by layer.
	LayerBytes                                   []int64
	OutputBytes, OutputNormBytes, TokenEmbdBytes int64
}

// maxGGUFLayers bounds the blk.N index a file may use (real models have
// at most a few hundred layers).
const maxGGUFLayers = 1 << 14

// addTensor counts a tensor of b bytes named name into the per-layer and
// non-repeating sizes.
func (info *Info) addTensor(name string, b int64, nTensors uint64) error {
	switch {
	case strings.HasPrefix(name, "blk."):
		rest := name[len("blk."):]
		dot := strings.IndexByte(rest, '.')
		n, err := strconv.Atoi(rest[:max(dot, 0)])
		if dot < 0 || err != nil || n < 0 {
			return nil // not a numbered layer: counted in TensorBytes only
		}
		if n >= maxGGUFLayers || uint64(n) >= nTensors {
			return fmt.Errorf("tensor %q: layer index %d out of range", name, n)
		}
		for len(info.LayerBytes) <= n {
			info.LayerBytes = append(info.LayerBytes, 0)
		}
		info.LayerBytes[n] += b
	case name == "output.weight":
		info.OutputBytes += b
	case strings.HasPrefix(name, "output_norm."):
		info.OutputNormBytes += b
	case strings.HasPrefix(name, "token_embd."):
		info.TokenEmbdBytes += b
	}
	return nil
}

// gr reads little-endian GGUF values and counts the bytes left.
type gr struct {
	r    *bufio.Reader
	left int64
	err  error
}

var errTrunc = errors.New("file is truncated")

func (g *gr) need(n int64) bool {
	if g.err != nil {
		return false
	}
	if n < 0 || n > g.left {
		g.err = errTrunc
		return false
	}
	return true
}

func (g *gr) read(n int) []byte {
	if !g.need(int64(n)) {
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(g.r, b); err != nil {
		g.err = errTrunc
		return nil
	}
	g.left -= int64(n)
	return b
}

func (g *gr) skip(n int64) {
	if !g.need(n) {
		return
	}
	if _, err := g.r.Discard(int(n)); err != nil {
		g.err = errTrunc
		return
	}
	g.left -= n
}

func (g *gr) u32() uint32 {
	b := g.read(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (g *gr) u64() uint64 {
	b := g.read(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// str reads a GGUF string of at most max bytes; longer ones are skipped
// and returned as "".
func (g *gr) str(max uint64) string {
	n := g.u64()
	if g.err != nil {
		return ""
	}
	if n > uint64(g.left) {
		g.err = errTrunc
		return ""
	}
	if n > max {
		g.skip(int64(n))
		return ""
	}
	return string(g.read(int(n)))
}

// scalar reads one fixed-size value as uint64 (floats as their integer
// part; signed negatives as 0).
func (g *gr) scalar(t uint32) uint64 {
	sz := gScalarSize[t]
	b := g.read(int(sz))
	if b == nil {
		return 0
	}
	switch t {
	case gUint8, gBool:
		return uint64(b[0])
	case gInt8:
		return uint64(max(int8(b[0]), 0))
	case gUint16:
		return uint64(binary.LittleEndian.Uint16(b))
	case gInt16:
		return uint64(max(int16(binary.LittleEndian.Uint16(b)), 0))
	case gUint32:
		return uint64(binary.LittleEndian.Uint32(b))
	case gInt32:
		return uint64(max(int32(binary.LittleEndian.Uint32(b)), 0))
	case gFloat32:
		f := math.Float32frombits(binary.LittleEndian.Uint32(b))
		if f > 0 && f < 1e18 {
			return uint64(f)
		}
		return 0
	case gUint64:
		return binary.LittleEndian.Uint64(b)
	case gInt64:
		return uint64(max(int64(binary.LittleEndian.Uint64(b)), 0))
	case gFloat64:
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if f > 0 && f < 1e18 {
			return uint64(f)
		}
		return 0
	}
	return 0
}

// FileType names the file's general.file_type (llama_ftype: "Q4_K_M",
// "F16", ...); "" when the key is absent or unknown.
func (info *Info) FileType() string {
	ft, ok := info.Ints["general.file_type"]
	if !ok {
		return ""
	}
	return ggufFileTypes[ft]
}

// Read reads the header, metadata and tensor infos of a GGUF file.
func Read(path string) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	info, err := Parse(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return info, nil
}

// Parse reads size bytes of GGUF from r. Errors name the field (or the
// tensor) that is wrong; none panics, whatever the bytes.
func Parse(r io.Reader, size int64) (*Info, error) {
	g := &gr{r: bufio.NewReaderSize(r, 1<<16), left: size}
	magic := g.read(4)
	if g.err != nil || string(magic) != "GGUF" {
		return nil, errors.New("not a GGUF file (magic)")
	}
	info := &Info{Version: g.u32(), Ints: map[string]uint64{}, IntArrays: map[string][]uint64{}, Strings: map[string]string{}}
	if g.err == nil && (info.Version < 2 || info.Version > 3) {
		return nil, fmt.Errorf("field version: GGUF version %d not supported (want 2 or 3)", info.Version)
	}
	nTensors, nKV := g.u64(), g.u64()
	// Each KV takes at least 13 bytes and each tensor info 24: larger
	// counts cannot be honest and are refused before any allocation.
	if g.err == nil && (nKV > uint64(g.left)/13 || nTensors > uint64(g.left)/24) {
		return nil, fmt.Errorf("field tensor_count/metadata_kv_count (%d/%d) exceed what the file can hold", nTensors, nKV)
	}
	for i := uint64(0); i < nKV && g.err == nil; i++ {
		g.kv(info)
	}
	if g.err != nil {
		return nil, fmt.Errorf("metadata: %v", g.err)
	}
	info.Arch = info.Strings["general.architecture"]
	for i := uint64(0); i < nTensors && g.err == nil; i++ {
		if err := g.tensorInfo(info, nTensors, size); err != nil {
			return nil, err
		}
	}
	if g.err != nil {
		return nil, fmt.Errorf("tensor infos: %v", g.err)
	}
	return info, nil
}

// tensorInfo reads one tensor's info (name, dimensions, type, offset) and
// adds its bytes to info, refusing a tensor the size-byte file cannot
// hold. A read error is left in g.err.
func (g *gr) tensorInfo(info *Info, nTensors uint64, size int64) error {
	name := g.str(maxGGUFKeyLen)
	nd := g.u32()
	if g.err == nil && nd > maxGGUFDims {
		return fmt.Errorf("tensor %q: field n_dims = %d (max %d)", name, nd, maxGGUFDims)
	}
	elems := uint64(1)
	for d := uint32(0); d < nd; d++ {
		n := g.u64()
		if n != 0 && elems > math.MaxInt64/n {
			return fmt.Errorf("tensor %q: field ne: dimensions overflow", name)
		}
		elems *= n
	}
	t := g.u32()
	g.u64() // offset
	if g.err != nil {
		return nil
	}
	bt, ok := Type(t).Block()
	if !ok {
		return fmt.Errorf("tensor %q: field type = %d is not a known GGML type", name, t)
	}
	// Compare in blocks first: elems × bytes per block can overflow.
	blocks := elems / uint64(bt.Elems)
	if blocks > uint64(size)/uint64(bt.Bytes) {
		return fmt.Errorf("tensor %q: %d blocks of %d bytes do not fit a %d-byte file", name, blocks, bt.Bytes, size)
	}
	tb := int64(blocks * uint64(bt.Bytes))
	info.TensorBytes += tb
	if info.TensorBytes > size {
		return fmt.Errorf("tensors total %d bytes, more than the %d-byte file", info.TensorBytes, size)
	}
	if err := info.addTensor(name, tb, nTensors); err != nil {
		return err
	}
	info.Tensors++
	if name == "output.weight" {
		info.HasOutput = true
	}
	return nil
}

// kv reads one metadata pair, keeping the keys the planner uses.
func (g *gr) kv(info *Info) {
	key := g.str(maxGGUFKeyLen)
	t := g.u32()
	if g.err != nil {
		return
	}
	switch {
	case t == gString:
		s := g.str(1 << 12)
		if strings.HasPrefix(key, "general.") {
			info.Strings[key] = s
		}
	case t == gArray:
		g.array(info, key)
	case gScalarSize[t] > 0:
		info.Ints[key] = g.scalar(t)
	default:
		g.err = fmt.Errorf("key %q: unknown value type %d", key, t)
	}
}

// array reads or skips an array value; integer arrays up to
// maxGGUFIntArray are kept, token lists only counted.
func (g *gr) array(info *Info, key string) {
	et, n := g.u32(), g.u64()
	if g.err != nil {
		return
	}
	if key == "tokenizer.ggml.tokens" {
		info.TokenCount = n
	}
	switch {
	case et == gString:
		if n > uint64(g.left)/8 {
			g.err = errTrunc
			return
		}
		for i := uint64(0); i < n && g.err == nil; i++ {
			l := g.u64()
			if g.err == nil {
				if l > uint64(g.left) {
					g.err = errTrunc
					return
				}
				g.skip(int64(l))
			}
		}
	case gScalarSize[et] > 0:
		sz := gScalarSize[et]
		if n > uint64(g.left)/uint64(sz) {
			g.err = errTrunc
			return
		}
		// Only per-layer integer arrays the planner reads are kept (head
		// counts, feed-forward widths), so that
		// allocation stays a small multiple of the keys the planner uses.
		if et == gFloat32 || et == gFloat64 || n > maxGGUFIntArray || !keptArray(key) {
			g.skip(int64(n) * sz)
			return
		}
		vals := make([]uint64, n)
		for i := range vals {
			vals[i] = g.scalar(et)
		}
		info.IntArrays[key] = vals
	default:
		g.err = fmt.Errorf("key %q: array of unsupported type %d", key, et)
	}
}

// keptArray reports whether an integer array under key is one the
// planner reads.
func keptArray(key string) bool {
	for _, suf := range []string{".attention.head_count_kv", ".attention.head_count", ".feed_forward_length"} {
		if strings.HasSuffix(key, suf) {
			return true
		}
	}
	return false
}
