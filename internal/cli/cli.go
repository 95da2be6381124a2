// Package cli wires servebench's subcommands: it parses flags, calls the
// packages that do the work and writes their results. It computes nothing
// itself.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/liblog"
	"github.com/servebench/servebench/internal/safetext"
	"github.com/servebench/servebench/internal/suggest"
	"github.com/servebench/servebench/launch"
	"github.com/servebench/servebench/load"
)

// UsageError is a bad flag, argument or input file named on the command
// line. It maps to exit status 2.
//
// Cmd is the command whose usage was bad: a step several commands share
// (run's configuration, which find and capacity check too) builds its
// error with configf, without a command, and the command that ran the
// step names itself with named; Error then reads "cmd: msg". An error
// built with usagef says its command in Msg itself.
type UsageError struct {
	Cmd string
	Msg string
	// unnamed: built by configf, its Cmd still to be set by named.
	unnamed bool
}

// Error is the message, which names the flag, argument or file, after
// the command when Cmd is set.
func (e *UsageError) Error() string {
	if e.Cmd == "" {
		return e.Msg
	}
	return e.Cmd + ": " + e.Msg
}

// usagef returns a *UsageError with a formatted message that names its
// command itself.
func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// configf returns the *UsageError of a shared configuration step: its
// Cmd is left to the command running the step (named).
func configf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...), unnamed: true}
}

// usageOf returns a *UsageError of command cmd; "" leaves it to the
// command running the step to name (configf).
func usageOf(cmd, format string, args ...any) error {
	return &UsageError{Cmd: cmd, Msg: fmt.Sprintf(format, args...), unnamed: cmd == ""}
}

// named gives err, when it is a usage error from a shared step not named
// yet, the command cmd; any other error is returned as it is. The command
// that runs a shared step names it; Deps.Run names what is left with the
// command line's command.
func named(err error, cmd string) error {
	var ue *UsageError
	if errors.As(err, &ue) && ue.unnamed {
		ue.Cmd, ue.unnamed = cmd, false
	}
	return err
}

// errHelp is returned after help was printed on request; it exits 0.
var errHelp = errors.New("help requested")

// Deps are the parts of the outside world that commands reach through
// seams tests replace: the client of the server under test, the starter of
// launched servers, the clock the load generator runs on, whether an
// output is a terminal and where run looks for a server by itself. Run
// uses DefaultDeps; a nil field of a Deps means its default.
type Deps struct {
	// NewClient makes the client of the server under test (backend.New).
	NewClient func(backend.Config) (backend.Client, error)
	// StartServer starts the server of a launch profile, its output going
	// to the log at logPath (launch.Start).
	StartServer func(spec *launch.Spec, logPath string) (*launch.Server, error)
	// Clock is the time of run's sweeps (load.Sweep.Clock) and of the
	// runs' start times (load.RealClock). backend's clients measure on the
	// real clock: another clock goes with a client that measures on it.
	Clock load.Clock
	// IsTerminal tells whether w is a terminal (isTerminal): run then
	// draws live progress bars on standard error, and ends with the
	// report's table on standard output, the document going to a file.
	IsTerminal func(w io.Writer) bool
	// LocalServers are where run looks for a server when --url is not
	// given (backend.LocalServers: the usual loopback port of each
	// family).
	LocalServers []backend.Candidate
	// LibraryLog, when set, is where the process's standard logger writes
	// (cmd/servebench sets it up): each run takes the lines logged while
	// it runs (net/http's "Unsolicited response received on idle HTTP
	// channel") into its warnings. nil leaves the standard logger alone.
	LibraryLog *liblog.Router
}

// DefaultDeps are the real parts: backend.New, launch.Start,
// load.RealClock, isTerminal and backend.LocalServers.
func DefaultDeps() Deps {
	return Deps{NewClient: backend.New, StartServer: launch.Start, Clock: load.RealClock{},
		IsTerminal: isTerminal, LocalServers: backend.LocalServers()}
}

// withDefaults fills the nil fields of d from DefaultDeps.
func (d Deps) withDefaults() Deps {
	def := DefaultDeps()
	if d.NewClient == nil {
		d.NewClient = def.NewClient
	}
	if d.StartServer == nil {
		d.StartServer = def.StartServer
	}
	if d.Clock == nil {
		d.Clock = def.Clock
	}
	if d.IsTerminal == nil {
		d.IsTerminal = def.IsTerminal
	}
	if d.LocalServers == nil {
		d.LocalServers = def.LocalServers
	}
	return d
}

// isTerminal reports whether w is a terminal (a file descriptor the
// terminal ioctl answers for; /dev/null and pipes are not).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands, in the (alphabetical) order help lists
// them.
func (d Deps) commands() []command {
	return []command{
		{"capacity", "how many people can this server serve: find --by users with the default SLO, TTFT p95 ≤ 1 s and TPOT p95 ≤ 100 ms", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runCapacity(ctx, d, args, stdout, stderr)
		}},
		{"calibrate", "hold the planner's KV-cache prediction against a server's log or live figures", runCalibrate},
		{"compare", "set two results side by side per level, with B/A ratios and significance", runCompare},
		{"find", "find the largest load that meets a latency budget (SLO), with goodput and its interval", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runFind(ctx, d, args, stdout, stderr)
		}},
		{"launch", "start a server from a launch profile (or --dry-run: print its command)", runLaunch},
		{"plan", "predict weights, KV-cache tokens and concurrency per backend and KV dtype", runPlan},
		{"report", "turn result documents into tables, charts, HTML and the capacity answer", runReport},
		{"run", "benchmark a running LLM server over a sweep of concurrency levels", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runRun(ctx, d, args, stdout, stderr)
		}},
		{"sim", "simulate a server on a GPU you do not own (sim serve: its HTTP API, in real time; sim fit: calibrate it to a measured sweep)", d.runSim},
		{"testbed", "make the tiny GGUF model the Ollama testbed serves", runTestbed},
		{"version", "print the version, VCS revision and time, and Go version (also --version)", runVersion},
	}
}

// Run executes the servebench command line args (without the program name)
// with the real parts (DefaultDeps). It returns nil on success, a
// *UsageError for bad usage, and any other error for a failure.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return DefaultDeps().Run(ctx, args, stdout, stderr)
}

// Run executes the command line args as the package's Run does, with the
// parts in d.
func (d Deps) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	d = d.withDefaults()
	cmds := d.commands()
	if len(args) == 0 {
		printUsage(stderr, cmds)
		return usagef("no command given")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		printUsage(stdout, cmds)
		return nil
	case "--version", "-version":
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == name })
	if i < 0 {
		return unknownCommand("", name, cmds)
	}
	err := cmds[i].run(ctx, args[1:], stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return named(err, name)
}

// quickstart is the five lines servebench with no arguments (or --help)
// shows before the command list: plan, a run against the server on this
// machine, its report, and a simulated run for those without the GPU.
const quickstart = `Quick start:
  servebench plan --model llama-3.1-8b --gpu "RTX 4090" --context 8192  # fits? how many users?
  servebench run                                                        # benchmark the LLM server on this machine
  servebench report servebench-*.json --slo ttft_p95=1.5s               # its table, capacity for a budget
  servebench run --backend sim --gpu "RTX 4090" --model qwen2.5-7b      # predict it without the GPU`

func printUsage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "servebench plans, measures and compares self-hosted LLM serving.")
	fmt.Fprintln(w, "\n"+quickstart)
	fmt.Fprintln(w, "\nUsage: servebench <command> [flags]\n\nCommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'servebench <command> --help' for the flags of a command.")
}

// ExitCode reports err on stderr (one line) and returns the process exit
// status: 0 for nil, 2 for a *UsageError, 1 for anything else.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	// Errors may quote a server (a body excerpt, a model name, a log
	// line): control characters and bidi overrides become visible
	// escapes.
	fmt.Fprintln(stderr, "servebench: "+safetext.Lines(strings.TrimSpace(err.Error())))
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// unknownCommand is the one-line error for a command (or, under parent, a
// subcommand) that does not exist, with the nearest real name.
func unknownCommand(parent, name string, cmds []command) error {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	prefix, see := "unknown command", "servebench --help"
	if parent != "" {
		prefix, see = parent+": unknown subcommand", "servebench "+parent+" --help"
	}
	if near, ok := suggest.Near(name, names); ok {
		return usagef("%s %q (did you mean %s?); see '%s'", prefix, name, near, see)
	}
	return usagef("%s %q (want one of: %s); see '%s'", prefix, name, strings.Join(names, ", "), see)
}
