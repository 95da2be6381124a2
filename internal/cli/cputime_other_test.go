//go:build !unix

package cli

import "time"

// processCPU is unknown here: benchmarks fall back to wall time.
func processCPU() time.Duration { return 0 }
