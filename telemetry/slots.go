package telemetry

import (
	"encoding/json"
	"fmt"
	"io"
)

// parseSlots maps llama.cpp's GET /slots (one object per slot) to a Sample
// whose Running is the number of slots with is_processing true: llama.cpp
// builds without --metrics still answer /slots (unless --no-slots).
func parseSlots(r io.Reader) (Sample, error) {
	var slots []struct {
		IsProcessing *bool `json:"is_processing"`
	}
	if err := json.NewDecoder(r).Decode(&slots); err != nil {
		return Sample{}, fmt.Errorf("parse /slots: %w", err)
	}
	busy, known := 0.0, false
	for _, s := range slots {
		if s.IsProcessing == nil {
			continue
		}
		known = true
		if *s.IsProcessing {
			busy++
		}
	}
	if !known {
		return Sample{}, fmt.Errorf("parse /slots: no slot has is_processing")
	}
	return Sample{Running: &busy}, nil
}
