// Package simservetest starts simulated LLM servers (package simserve)
// for tests of other packages: in-process, on a free loopback port, gone
// when the test ends.
package simservetest

import (
	"net/http/httptest"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
)

// Spec is a small, fast simulated server for tests: Qwen2.5-7B in AWQ on
// an H100 (decode steps of a few milliseconds), with kind as the
// engine's family ("" = the personality's).
func Spec(kind backend.Kind) sim.Spec {
	return sim.Spec{Backend: kind, GPU: "H100 80GB", Model: "Qwen/Qwen2.5-7B-Instruct-AWQ"}
}

// Start starts a simulated server with opts (opts.Spec empty: Spec("")),
// serving on a free loopback port, and returns it and its base URL. The
// server stops when the test ends: the engine first, so that streams a
// test left open (a stall) end, then the listener.
func Start(t testing.TB, opts simserve.Options) (*simserve.Server, string) {
	t.Helper()
	if opts.Spec.GPU == "" && opts.Spec.Model == "" {
		opts.Spec = Spec(opts.Spec.Backend)
	}
	srv, err := simserve.New(opts)
	if err != nil {
		t.Fatalf("simserve.New: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // runs first: ends the streams ts.Close would wait for
	return srv, ts.URL
}
