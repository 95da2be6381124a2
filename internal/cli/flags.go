package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/suggest"
)

// Flag handling shared by every command: help that shows flags as users
// type them (--name), token counts that take model cards' "8k", and parse
// errors that fit on one line, name the flag, say what was wanted and the
// nearest real name. It works on any flag a command defines, with no code
// per flag: commands only call newFlagSet and parseFlags.

// newFlagSet returns a flag set for subcommand name whose parse errors are
// usage errors and whose --help prints the synopsis and flags on stdout.
func newFlagSet(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: servebench %s\n\n", synopsis)
		printFlags(stdout, fs)
	}
	return fs
}

// parseFlags parses args into fs, turning --help into errHelp (after
// printing the help) and any other failure into a one-line *UsageError
// that names the flag. The flag package calls Usage on every error; only
// a request for help prints it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	acceptTokenSuffixes(fs)
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	return nil
}

// printFlags lists fs's flags as flag.PrintDefaults does, but with two
// dashes, the way the documentation and users write them.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		if placeholder == "value" && kindOf(f) == kindTokens {
			placeholder = "tokens" // flag.UnquoteUsage knows only its own types
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		if placeholder != "" {
			b.WriteString(" " + placeholder)
		}
		if b.Len() <= 5 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := defaultText(f); d != "" {
			fmt.Fprintf(&b, " (default %s)", d)
		}
		fmt.Fprintln(w, b.String())
	})
}

// defaultText is f's default as help shows it: quoted for a string, empty
// for a zero value (which help leaves unsaid).
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	if kindOf(f) == kindString {
		return strconv.Quote(f.DefValue)
	}
	return f.DefValue
}

// flagKind is what a flag's value is, for help and for saying what a bad
// value should have been.
type flagKind int

const (
	kindOther flagKind = iota
	kindString
	kindBool
	kindInt
	kindTokens
	kindFloat
	kindDuration
)

// kindOf reads f's kind from the Go type of its value (flag.Getter).
func kindOf(f *flag.Flag) flagKind {
	if _, ok := f.Value.(tokenValue); ok {
		return kindTokens
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return kindOther
	}
	switch g.Get().(type) {
	case string:
		return kindString
	case bool:
		return kindBool
	case int, int64, uint, uint64:
		return kindInt
	case float64:
		return kindFloat
	case time.Duration:
		return kindDuration
	}
	return kindOther
}

// want is what a value of kind k looks like, for an error about a bad one.
func (k flagKind) want() string {
	switch k {
	case kindBool:
		return "want true or false"
	case kindInt:
		return "want a whole number"
	case kindTokens:
		return "want a token count such as 8192 or 8k (k = 1,024)"
	case kindFloat:
		return "want a number"
	case kindDuration:
		return "want a duration in Go's syntax such as 500ms, 30s or 1m30s"
	}
	return ""
}

// The flag package's parse errors, which flagError rewrites.
var (
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	reInvalid   = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-+([^:]+): (.*)$`)
	reNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagError turns an error of fs.Parse into one line: the command, the
// flag with two dashes, what was wrong, and where to look.
func flagError(fs *flag.FlagSet, err error) error {
	cmd := fs.Name()
	see := fmt.Sprintf("see 'servebench %s --help'", cmd)
	msg := err.Error()
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		if near, ok := suggest.Near(name, flagNames(fs)); ok {
			return usagef("%s: unknown flag --%s (did you mean --%s?); %s", cmd, name, near, see)
		}
		return usagef("%s: unknown flag --%s; %s", cmd, name, see)
	}
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		value, name, cause := m[1], m[2], m[3]
		if f := fs.Lookup(name); f != nil {
			if want := kindOf(f).want(); want != "" {
				cause = want
			}
		}
		return usagef("%s: --%s %s: %s", cmd, name, value, cause)
	}
	if m := reNoValue.FindStringSubmatch(msg); m != nil {
		return usagef("%s: --%s needs a value; %s", cmd, m[1], see)
	}
	return usagef("%s: %v; %s", cmd, err, see)
}

// flagNames are the names of fs's flags.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// isTokenCount reports whether the flag called name counts tokens: its
// name ends in "tokens", or it is one of the engines' token sizes that do
// not say so (a context length, a KV block, a batch).
func isTokenCount(name string) bool {
	switch name {
	case "context", "ctx", "max-model-len", "block-size", "ubatch", "n-batch", "chunked-prefill-size":
		return true
	}
	return strings.HasSuffix(name, "tokens")
}

// acceptTokenSuffixes lets every whole-number token-count flag of fs take
// a "k" suffix, as model cards write context lengths. It wraps the flag's
// own value, so the command reads it where it always did; calling it
// again (parseInterspersed parses in rounds) changes nothing.
func acceptTokenSuffixes(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if isTokenCount(f.Name) && kindOf(f) == kindInt {
			f.Value = tokenValue{f.Value}
		}
	})
}

// tokenValue is a token count flag: a whole number, or one with a "k"
// suffix meaning 1,024 (8k = 8,192; 128k = 131,072), handed to the flag's
// own value as digits.
type tokenValue struct{ inner flag.Value }

// Set parses s as a token count and sets the wrapped value.
func (v tokenValue) Set(s string) error {
	n, err := parseTokenCount(s)
	if err != nil {
		return err
	}
	return v.inner.Set(strconv.FormatInt(n, 10))
}

// String is the wrapped value's.
func (v tokenValue) String() string { return v.inner.String() }

// Get is the wrapped value's.
func (v tokenValue) Get() any {
	if g, ok := v.inner.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}

// parseTokenCount reads "8192", "8k" or "8K" (k = 1,024), and negative
// numbers, which some flags use as "off" (-1); "1.5k" and "8kk" are errors.
// Any int64 is read, so the flag's own bound check names its range.
func parseTokenCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if strings.HasSuffix(t, "k") || strings.HasSuffix(t, "K") {
		t, mult = t[:len(t)-1], 1024
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, errors.New("want a token count such as 8192 or 8k (k = 1,024)")
	}
	return n * mult, nil
}
