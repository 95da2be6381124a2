package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"qwen2.5-14b", "qwen2.5-72b", "qwen2.5-7b", "llama-3.1-8b"}
	cases := []struct {
		name, s string
		n       int
		want    []string
	}{
		{"one letter too many", "qwen2.5-7bb", 2, []string{"qwen2.5-72b", "qwen2.5-7b"}},
		{"case ignored", "LLAMA-3.1-8B", 1, []string{"llama-3.1-8b"}},
		{"more asked than there are", "x", 9, []string{"qwen2.5-7b", "qwen2.5-14b", "qwen2.5-72b", "llama-3.1-8b"}},
		{"none asked", "x", 0, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Closest(c.s, names, c.n); !slices.Equal(got, c.want) {
				t.Errorf("Closest(%q) = %q, want %q", c.s, got, c.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"rtx4090", "rtx5090", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNear(t *testing.T) {
	flags := []string{"concurrency", "max-concurrency", "context", "connection", "out", "records"}
	cases := []struct {
		name, s, want string
		ok            bool
	}{
		{"one letter missing", "concurency", "concurrency", true},
		{"transposed", "contxet", "context", true},
		{"case ignored", "CONCURRENCY", "concurrency", true},
		{"unique prefix", "rec", "records", true},
		{"ambiguous prefix falls back to distance", "con", "", false},
		{"nothing alike", "frobnicate", "", false},
		{"empty", "", "", false},
		{"short name within two edits", "ot", "out", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Near(c.s, flags)
			if got != c.want || ok != c.ok {
				t.Errorf("Near(%q) = %q, %v; want %q, %v", c.s, got, ok, c.want, c.ok)
			}
		})
	}
}
