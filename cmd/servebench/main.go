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
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cli.ExitCode(err, os.Stderr))
}
