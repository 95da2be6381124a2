// Command servebench plans, measures and compares self-hosted LLM serving.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/servebench/servebench/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C the command winds down (in-flight requests
		// get a grace period, the partial report is written); restoring the
		// default handling lets a second Ctrl-C end the process at once.
		<-ctx.Done()
		stop()
	}()
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.ExitCode(err, os.Stderr))
}
