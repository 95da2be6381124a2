//go:build !race

package filecap

// raceEnabled: the race detector changes what allocations count.
const raceEnabled = false
