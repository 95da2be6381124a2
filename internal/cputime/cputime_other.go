//go:build !unix

package cputime

import "time"

// Process is unavailable here: 0, and benchmarks fall back to wall time.
func Process() time.Duration { return 0 }
