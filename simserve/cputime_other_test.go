//go:build !unix

package simserve_test

import "time"

// cpuTime is unknown here: the benchmark reports wall time instead.
func cpuTime() time.Duration { return 0 }
