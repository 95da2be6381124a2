package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release's version, set by the release script
// (scripts/release) with -ldflags "-X …/internal/cli.version=v1.2.3". A
// build without it reports the version the Go toolchain stamped: the
// module's tag under go install …@version, "(devel)" in a checkout.
var version string

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", "version\n\nPrints the module version, the VCS revision and time it was built from (\"dirty\" when the\nchecked-out files differed from that revision), the Go version and the platform.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version: unexpected argument %q", fs.Arg(0))
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(buildOf(info, version)))
	return nil
}

// build is what a binary knows of where it came from.
type build struct {
	// Version is the release's or the module's version, "(devel)" for
	// a checkout and "(unknown)" without build information.
	Version string
	// Revision and Time are the VCS commit and its time (RFC 3339), empty
	// when the build recorded none (-buildvcs=false, or no repository).
	Revision, Time string
	// Dirty is true when the working tree differed from Revision.
	Dirty bool
	// Go is the toolchain; OS and Arch the platform.
	Go, OS, Arch string
}

// buildOf reads info (nil when the binary has none), with the release's
// stamped version taking the place of the module's.
func buildOf(info *debug.BuildInfo, stamped string) build {
	b := build{Version: "(unknown)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if info != nil {
		b.Version = info.Main.Version
		if b.Version == "" {
			b.Version = "(devel)"
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Dirty = s.Value == "true"
			}
		}
	}
	if stamped != "" {
		b.Version = stamped
	}
	return b
}

// short is the version with the first 12 characters of the revision, and
// "dirty" when it applies: what documents name as their tool.
func (b build) short() string {
	// Go 1.24 and later stamp a checkout's build with a pseudo-version
	// that already holds the revision and "+dirty": said once.
	s := b.Version
	if rev := b.Revision[:min(12, len(b.Revision))]; rev != "" && !strings.Contains(s, rev) {
		s += " " + rev
	}
	if b.Dirty && !strings.HasSuffix(s, "+dirty") {
		s += " dirty"
	}
	return s
}

// versionLine is what servebench version prints: "servebench v1.2.3
// 0123456789ab dirty (2026-12-01T21:00:00Z, go1.26.0 linux/amd64)".
func versionLine(b build) string {
	when := ""
	if b.Time != "" {
		when = b.Time + ", "
	}
	return fmt.Sprintf("servebench %s (%s%s %s/%s)", b.short(), when, b.Go, b.OS, b.Arch)
}

// moduleVersion is this binary's version and revision (build.short), for
// the tool field of the documents it writes.
func moduleVersion() string {
	info, _ := debug.ReadBuildInfo()
	return buildOf(info, version).short()
}
