//go:build !linux || !cgo

package telemetry

import "errors"

// openNVML is unavailable without cgo on Linux (go-nvml needs cgo to
// dlopen libnvidia-ml); auto mode falls back to nvidia-smi.
func openNVML(index int) (gpuSource, error) {
	return nil, errors.New("NVML: not in this build (needs cgo on Linux)")
}
