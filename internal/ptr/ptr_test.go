package ptr

import "testing"

func TestTo(t *testing.T) {
	v := 3
	p := To(v)
	v = 4
	if *p != 3 {
		t.Fatalf("*To(3) = %d after the variable changed: To must copy", *p)
	}
	if a, b := To(1.5), To(1.5); a == b {
		t.Fatal("two calls share a pointer")
	}
}

func TestEqual(t *testing.T) {
	a, b, c := To("x"), To("x"), To("y")
	tests := []struct {
		name string
		x, y *string
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and value", nil, a, false},
		{"value and nil", a, nil, false},
		{"equal values", a, b, true},
		{"different values", a, c, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.x, tt.y); got != tt.want {
				t.Fatalf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}
