// Package suggest finds the names closest to a misspelt one, for the
// "closest: …" part of an error about an unknown preset or GPU.
package suggest

import (
	"sort"
	"strings"
)

// Closest returns up to n names nearest to s by edit distance, nearest
// first; names at the same distance keep their order.
func Closest(s string, names []string, n int) []string {
	s = strings.ToLower(s)
	type cand struct {
		name string
		d    int
	}
	cs := make([]cand, len(names))
	for i, nm := range names {
		cs[i] = cand{nm, editDistance(s, nm)}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := []string{}
	for i := 0; i < n && i < len(cs); i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Near returns the one name a misspelt s most likely meant, for a "did you
// mean" hint: the only name s is a prefix of, else the nearest by edit
// distance when that distance is at most a third of s's length (at least
// 2), so a name unlike every other gets no hint rather than a random one.
// Case is ignored; ok is false when no name is near enough.
func Near(s string, names []string) (name string, ok bool) {
	s = strings.ToLower(s)
	if s == "" {
		return "", false
	}
	var prefixed []string
	for _, nm := range names {
		if strings.HasPrefix(strings.ToLower(nm), s) {
			prefixed = append(prefixed, nm)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0], true
	}
	best, bestD := "", -1
	for _, nm := range names {
		if d := editDistance(s, strings.ToLower(nm)); bestD < 0 || d < bestD {
			best, bestD = nm, d
		}
	}
	if bestD < 0 || bestD > max(2, len(s)/3) {
		return "", false
	}
	return best, true
}
