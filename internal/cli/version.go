package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", "version", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version: unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintf(stdout, "servebench %s (%s)\n", moduleVersion(), runtime.Version())
	return nil
}

// moduleVersion is the main module's version as the Go toolchain stamped it
// ("(devel)" for a build from a checkout), followed by the VCS revision when
// the build recorded one.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
