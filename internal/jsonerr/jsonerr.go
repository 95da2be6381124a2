// Package jsonerr rewrites encoding/json's errors as one line that names
// the field, for the readers of files people write by hand (a Hugging
// Face config.json, a calibration file).
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Describe returns err, from json.Unmarshal, as "field F: got JSON X,
// want Y", "not valid JSON at byte N: …" or "invalid JSON: …".
func Describe(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Errorf("field (top level): got JSON %s, want an object", te.Value)
		}
		return fmt.Errorf("field %s: got JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}
