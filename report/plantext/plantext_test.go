package plantext

import "testing"

func TestNumberFormats(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"thousands", thousands(158048), "158,048"},
		{"thousands small", thousands(999), "999"},
		{"thousands negative", thousands(-1234567), "-1,234,567"},
		{"short k", shortTokens(32768), "32k"},
		{"short M", shortTokens(2 << 20), "2M"},
		{"short rounded", shortTokens(158048), "158k"},
		{"short small", shortTokens(2000), "2,000"},
		{"one slot", plural(1, "slot"), "1 slot"},
		{"slots", plural(4, "slot"), "4.0 slots"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
}
