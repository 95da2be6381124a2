//go:build !unix

package sim

import "time"

// cpuTime is unavailable here; the benchmark falls back to wall time.
func cpuTime() time.Duration { return 0 }
