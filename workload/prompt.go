package workload

import (
	"math/rand/v2"
	"strings"
)

// Prompts generates the deterministic text of each request of a run.
//
// The text of request seq is an endless stream of words; a prompt is a
// prefix of it (see Text). Its first word is unique among the first
// len(words) requests of a run and its first two words among the first
// len(words)² (93,025), so no two prompts share even their first token on
// tokenizers that keep common words whole; the rest is random words. The
// same seed gives the same prompts.
type Prompts struct {
	seed   uint64
	first  []int // permutation of word indices for the first word
	second []int // permutation for the second word
}

// NewPrompts returns the prompt generator for seed.
func NewPrompts(seed int64) *Prompts {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5e7eb0))
	return &Prompts{seed: uint64(seed), first: r.Perm(len(words)), second: r.Perm(len(words))}
}

// Text returns the first n bytes of request seq's word stream (all ASCII,
// so n characters), cutting the last word if needed. Two calls with the
// same arguments return the same text, and Text(seq, n) is a prefix of
// Text(seq, m) for n ≤ m.
func (p *Prompts) Text(seq, n int) string { return p.Variant(seq, 0, n) }

// Variant is Text with another filler: the same two leading words, then a
// different stream of random words for each variant (variant 0 is Text).
// Exact-length prompts use it when no prefix of one stream tokenizes to the
// target exactly.
func (p *Prompts) Variant(seq, variant, n int) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n + 16)
	L := len(words)
	b.WriteString(words[p.first[mod(seq, L)]])
	b.WriteByte(' ')
	b.WriteString(words[p.second[mod(seq/L, L)]])
	r := rand.New(rand.NewPCG(p.seed+uint64(variant)*0x2545f4914f6cdd1d, uint64(int64(seq))^0x9e3779b97f4a7c15))
	for b.Len() < n {
		b.WriteByte(' ')
		b.WriteString(words[r.IntN(L)])
	}
	return b.String()[:n]
}

func mod(a, m int) int {
	a %= m
	if a < 0 {
		a += m
	}
	return a
}
