// Package cli wires servebench's subcommands: it parses flags, calls the
// packages that do the work and writes their results. It computes nothing
// itself.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// UsageError is a bad flag, argument or input file named on the command
// line. It maps to exit status 2.
type UsageError struct{ Msg string }

// Error is the message, which names the flag, argument or file.
func (e *UsageError) Error() string { return e.Msg }

// usagef returns a *UsageError with a formatted message.
func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned after help was printed on request; it exits 0.
var errHelp = errors.New("help requested")

// command is one subcommand. Each subcommand file registers itself in init
// so that adding one never edits this file.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("cli: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// Run executes the servebench command line args (without the program name).
// It returns nil on success, a *UsageError for bad usage, and any other
// error for a failure.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		printUsage(stdout)
		return nil
	}
	c, ok := commands[name]
	if !ok {
		return usagef("unknown command %q (see 'servebench --help')", name)
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "servebench plans, measures and compares self-hosted LLM serving.")
	fmt.Fprintln(w, "\nUsage: servebench <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'servebench <command> --help' for the flags of a command.")
}

// ExitCode reports err on stderr (one line) and returns the process exit
// status: 0 for nil, 2 for a *UsageError, 1 for anything else.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "servebench: "+strings.TrimSpace(err.Error()))
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// newFlagSet returns a flag set for subcommand name whose parse errors are
// usage errors and whose -h prints usage on stdout.
func newFlagSet(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: servebench %s\n\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args into fs, turning -h into errHelp and any other
// failure into a *UsageError naming the flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		// fs.Parse has already printed the usage (flag calls fs.Usage on -h).
		return errHelp
	}
	if err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}
