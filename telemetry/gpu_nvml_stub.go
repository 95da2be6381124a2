//go:build !linux || !cgo || !nvml

package telemetry

import "errors"

// openNVML is left out of the default build: go-nvml's cgo prolog makes
// gcc print pages of -Wdeprecated-declarations warnings on every first
// build, which read as a broken install, while nvidia-smi (auto mode's
// fallback) reads the same memory figures. Build with -tags nvml (Linux,
// cgo) to read them through NVML instead.
func openNVML(index int) (gpuSource, error) {
	return nil, errors.New("NVML: not in this build (build with -tags nvml, on Linux with cgo)")
}
