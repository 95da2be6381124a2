// Package ptr is servebench's one home for pointer helpers. Values a
// server, a log or a machine may not give are pointers throughout (nil:
// not known, never a fake zero); these make and compare them.
package ptr

// To returns a pointer to a copy of v.
func To[T any](v T) *T { return &v }

// Equal reports whether a and b are both nil or both point to equal
// values.
func Equal[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
