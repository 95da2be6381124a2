package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VLLMVersion is a vLLM release, compared by its numeric parts. The zero
// value means "the current release" (the accounting of the newest vLLM
// servebench knows).
type VLLMVersion struct {
	Major, Minor, Patch int
}

// vllmGraphEstimateDefault is the first release whose KV-cache sizing
// subtracts vLLM's estimate of the CUDA graphs' memory by default
// (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1; its log says "CUDA graph
// memory profiling is enabled (default since v0.21.0)"). Before, from the
// estimate's introduction (vLLM PR #30515, December 2025), it was opt-in
// and the graphs came out of the (1 − utilization) headroom instead.
var vllmGraphEstimateDefault = VLLMVersion{0, 21, 0}

// vllmVersionRe matches a vLLM version: major.minor[.patch[.fix]] and the
// suffixes Python packaging gives it (".post1", "rc2", ".dev12",
// "+cu128"), which do not change the accounting.
var vllmVersionRe = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+)(?:\.[0-9]+)?)?(?:\.?(?:post|dev|rc|a|b)[0-9]*)*(?:\+[0-9a-z.]+)?$`)

// ParseVLLMVersion reads "0.21.0", "v0.8.5.post1", "0.26.1rc2" or
// "latest" ("" also means latest). Only major.minor.patch count; a
// missing patch is 0.
func ParseVLLMVersion(s string) (VLLMVersion, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "latest" {
		return VLLMVersion{}, nil
	}
	m := vllmVersionRe.FindStringSubmatch(s)
	if m == nil {
		return VLLMVersion{}, fmt.Errorf("vLLM version %q: want MAJOR.MINOR[.PATCH] such as 0.21.0, or latest", s)
	}
	var v VLLMVersion
	for i, dst := range []*int{&v.Major, &v.Minor, &v.Patch} {
		if m[i+1] == "" {
			continue // no patch: 0
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n > MaxVersionPart {
			return VLLMVersion{}, fmt.Errorf("vLLM version %q: part %d is above %d", s, i+1, MaxVersionPart)
		}
		*dst = n
	}
	if v.latest() {
		return v, fmt.Errorf("vLLM version %q: there is no vLLM 0.0.0", s)
	}
	return v, nil
}

// latest reports whether v stands for the current release.
func (v VLLMVersion) latest() bool { return v == VLLMVersion{} }

// atLeast reports whether v is w or newer (the current release is newer
// than every numbered one).
func (v VLLMVersion) atLeast(w VLLMVersion) bool {
	if v.latest() {
		return true
	}
	if v.Major != w.Major {
		return v.Major > w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor > w.Minor
	}
	return v.Patch >= w.Patch
}

// String is "0.21.0", or "latest" for the zero value.
func (v VLLMVersion) String() string {
	if v.latest() {
		return "latest"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MarshalText writes the version as String does, for JSON.
func (v VLLMVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// GraphEstimate is whether vLLM subtracts its CUDA-graph estimate from the
// KV cache (its VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
type GraphEstimate string

// GraphEstimate settings.
const (
	// GraphEstimateAuto follows the version's default: on from v0.21.0.
	GraphEstimateAuto GraphEstimate = "auto"
	// GraphEstimateOn is VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (the
	// opt-in of the releases before v0.21.0 that have the estimate).
	GraphEstimateOn GraphEstimate = "on"
	// GraphEstimateOff is VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.
	GraphEstimateOff GraphEstimate = "off"
)

// ParseGraphEstimate reads auto, on or off ("" is auto).
func ParseGraphEstimate(s string) (GraphEstimate, error) {
	switch g := GraphEstimate(strings.ToLower(strings.TrimSpace(s))); g {
	case "":
		return GraphEstimateAuto, nil
	case GraphEstimateAuto, GraphEstimateOn, GraphEstimateOff:
		return g, nil
	}
	return "", fmt.Errorf("CUDA-graph estimate %q: want auto, on or off", s)
}
