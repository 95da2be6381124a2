// Command servebench plans, measures and compares self-hosted LLM serving.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/servebench/servebench/internal/cli"
	"github.com/servebench/servebench/internal/liblog"
)

func main() {
	// A closed terminal (SIGHUP) ends a run like Ctrl-C and SIGTERM: the
	// partial report is written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		// After the first Ctrl-C the command winds down (in-flight requests
		// get a grace period, the partial report is written); restoring the
		// default handling lets a second Ctrl-C end the process at once.
		<-ctx.Done()
		stop()
	}()
	// net/http reports some server misbehaviour only through the standard
	// logger, which has no per-client hook: route it, once for the
	// process, into the warnings of the run in progress (package liblog).
	logs := liblog.New(os.Stderr)
	log.SetOutput(logs)
	log.SetFlags(0)
	err := cli.Deps{LibraryLog: logs}.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.ExitCode(err, os.Stderr))
}
