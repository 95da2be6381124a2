// Package cputime reads the process's own CPU time. Divided by the work
// done it gives a cost per request, chunk or simulated token that a busy
// shared machine does not distort the way it distorts rates: the
// benchmarks of bench, sim, simserve and run --backend sim report it.
package cputime
