package gguf

// Type is a GGML tensor element type (ggml_type), as a GGUF file's
// tensor infos give it.
type Type uint32

// The GGML types servebench names (ggml.h's enum ggml_type).
const (
	TypeF32    Type = 0
	TypeF16    Type = 1
	TypeQ4_0   Type = 2
	TypeQ4_1   Type = 3
	TypeQ5_0   Type = 6
	TypeQ5_1   Type = 7
	TypeQ8_0   Type = 8
	TypeQ8_1   Type = 9
	TypeQ2_K   Type = 10
	TypeQ3_K   Type = 11
	TypeQ4_K   Type = 12
	TypeQ5_K   Type = 13
	TypeQ6_K   Type = 14
	TypeQ8_K   Type = 15
	TypeIQ4_NL Type = 20
	TypeBF16   Type = 30
	TypeMXFP4  Type = 39
)

// Block is a GGML type's storage unit: Elems elements in Bytes bytes
// (ggml_type_traits' blck_size and type_size).
type Block struct{ Elems, Bytes int64 }

// blocks is the one table of GGML block sizes, from ggml's type traits
// (ggml/src/ggml.c, type_traits): every reader of GGUF files and every
// estimate of GGML tensor or KV-cache sizes in servebench uses it.
var blocks = map[Type]Block{
	0: {1, 4}, 1: {1, 2}, 2: {32, 18}, 3: {32, 20}, 6: {32, 22}, 7: {32, 24}, 8: {32, 34}, 9: {32, 36},
	10: {256, 84}, 11: {256, 110}, 12: {256, 144}, 13: {256, 176}, 14: {256, 210}, 15: {256, 292},
	16: {256, 66}, 17: {256, 74}, 18: {256, 98}, 19: {256, 50}, 20: {32, 18}, 21: {256, 110}, 22: {256, 82},
	23: {256, 136}, 24: {1, 1}, 25: {1, 2}, 26: {1, 4}, 27: {1, 8}, 28: {1, 8}, 29: {256, 56}, 30: {1, 2},
	34: {256, 54}, 35: {256, 66}, 39: {32, 17},
}

// Block returns t's block and whether t is a type the table knows.
func (t Type) Block() (Block, bool) {
	b, ok := blocks[t]
	return b, ok
}

// RowBytes is ggml_row_size: the bytes of n elements of type t (n a
// multiple of its block; 0 for a type the table does not know).
func (t Type) RowBytes(n int64) int64 {
	b, ok := blocks[t]
	if !ok {
		return 0
	}
	return n / b.Elems * b.Bytes
}

// BytesPerElement is t's average size of one element (Q4_K: 144/256).
func (t Type) BytesPerElement() float64 {
	b, ok := blocks[t]
	if !ok {
		return 0
	}
	return float64(b.Bytes) / float64(b.Elems)
}

// BlockElems is t's elements per block (1 for a type the table does not
// know).
func (t Type) BlockElems() int64 {
	if b, ok := blocks[t]; ok {
		return b.Elems
	}
	return 1
}
