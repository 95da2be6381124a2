package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	type doc struct {
		Layers int `json:"num_hidden_layers"`
	}
	cases := []struct {
		name, in, want string
	}{
		{"wrong type names the field", `{"num_hidden_layers":"many"}`, "field num_hidden_layers: got JSON string, want int"},
		{"array at the top", `[1]`, "field (top level): got JSON array, want an object"},
		{"syntax error gives the byte", `{"num_hidden_layers":`, "not valid JSON at byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			err := Describe(json.Unmarshal([]byte(c.in), &d))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}
