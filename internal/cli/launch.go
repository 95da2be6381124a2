package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench/launch"
)

// runLaunch is `servebench launch --profile P [--dry-run] [--log FILE]`.
// With --dry-run it prints the exact argument list and environment the
// server would get. Without, it starts the server in its own process
// group, waits for its health URL, says where it listens, and keeps it up
// until Ctrl-C (SIGINT/SIGTERM), when it stops the whole group; a server
// that exits on its own ends the command with its exit status and log tail.
func runLaunch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("launch", "launch --profile FILE [--dry-run] [--log FILE]", stdout)
	profile := fs.String("profile", "", "launch profile, YAML or JSON (required)")
	dry := fs.Bool("dry-run", false, "print the command and environment, start nothing")
	logPath := fs.String("log", "", "file for the server's stdout and stderr (default <label>.log)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("launch: unexpected argument %q", fs.Arg(0))
	}
	if *profile == "" {
		return usagef("launch: --profile is required")
	}
	p, err := launch.Load(*profile)
	if err != nil {
		return usagef("launch: %v", err)
	}
	spec, err := launch.Build(p, launch.Labels([]*launch.Profile{p})[0])
	if err != nil {
		return usagef("launch: %v", err)
	}
	if *dry {
		return launch.WriteDryRun(stdout, spec)
	}
	if *logPath == "" {
		*logPath = filepath.Join(".", spec.Label+".log")
	}
	return serveUntilInterrupt(ctx, spec, *logPath, stdout)
}

func serveUntilInterrupt(ctx context.Context, spec *launch.Spec, logPath string, stdout io.Writer) (err error) {
	srv, err := launch.Start(spec, logPath)
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	for _, w := range srv.Warnings {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	fmt.Fprintf(stdout, "started %s (pid %d), log %s; waiting for %s\n", spec.Label, srv.PID(), logPath, launch.RedactText(spec.HealthURL))
	if err := srv.WaitHealthy(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stdout, "interrupted: stopping the server")
			return nil
		}
		return err
	}
	fmt.Fprintf(stdout, "%s is up at %s; Ctrl-C stops it\n", spec.Label, spec.BaseURL)
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "interrupted: stopping the server")
		return nil
	case <-srv.Done():
		_, how := srv.Exited()
		return fmt.Errorf("server %s exited (%s); last lines of %s:\n  %s", spec.Label, how, logPath,
			strings.Join(srv.Tail(launch.TailLines), "\n  "))
	}
}
