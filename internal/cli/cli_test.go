package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/testenv"
)

// run calls Run like main does and returns the exit code and outputs.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), args, &out, &errb)
	code = ExitCode(err, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no command", nil, 2, "no command given"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"mistyped command", []string{"reprot"}, 2, `unknown command "reprot" (did you mean report?); see 'servebench --help'`},
		{"help", []string{"--help"}, 0, ""},
		{"version", []string{"version"}, 0, ""},
		{"version rejects arguments", []string{"version", "x"}, 2, `unexpected argument "x"`},
		{"unknown flag", []string{"version", "--bogus"}, 2, "unknown flag --bogus"},
		{"testbed without subcommand", []string{"testbed"}, 2, "missing subcommand"},
		{"testbed model without --out", []string{"testbed", "model"}, 2, "--out is required"},
		{"testbed model bad heads", []string{"testbed", "model", "--out", "x.gguf", "--heads", "3"}, 2, "--dim: must be a positive multiple of --heads 3"},
		{"testbed model bad kv heads", []string{"testbed", "model", "--out", "x.gguf", "--kv-heads", "3"}, 2, "--kv-heads: must divide --heads 4"},
		{"testbed model zero layers", []string{"testbed", "model", "--out", "x.gguf", "--layers", "0"}, 2, "--layers"},
		{"testbed model short ctx", []string{"testbed", "model", "--out", "x.gguf", "--ctx", "8"}, 2, "--ctx: must be at least 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := run(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("stderr %q does not contain %q", stderr, tt.wantErr)
			}
			if tt.args != nil && tt.wantErr != "" && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("error is not one line: %q", stderr)
			}
			if _, err := os.Stat("x.gguf"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed run left x.gguf behind")
			}
		})
	}
}

func TestVersionNamesModuleAndGo(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := run(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d", args[0], code)
		}
		if !regexp.MustCompile(`^servebench \S+.* \((\S+, )?go1\.\d+\S* \w+/\w+\)$`).MatchString(strings.TrimSpace(stdout)) || !strings.Contains(stdout, runtime.Version()) {
			t.Fatalf("%s: version output %q", args[0], stdout)
		}
	}
}

// TestVersionLine: the revision, its time and "dirty" from the build
// information, and a release's stamped version over the module's.
func TestVersionLine(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T21:00:00Z"}}
	cases := []struct {
		name    string
		info    *debug.BuildInfo
		stamped string
		want    string
	}{
		{"no build info", nil, "", "servebench (unknown) (go1.x linux/amd64)"},
		{"checkout without VCS", &debug.BuildInfo{}, "", "servebench (devel) (go1.x linux/amd64)"},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "", "servebench v0.3.0 (go1.x linux/amd64)"},
		{"checkout with VCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "",
			"servebench (devel) 0123456789ab (2026-12-01T21:00:00Z, go1.x linux/amd64)"},
		{"dirty", &debug.BuildInfo{Settings: append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "",
			"servebench (devel) 0123456789ab dirty (2026-12-01T21:00:00Z, go1.x linux/amd64)"},
		{"pseudo-version of a dirty checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201230646-0123456789ab+dirty"},
			Settings: append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "",
			"servebench v0.0.0-20261201230646-0123456789ab+dirty (2026-12-01T21:00:00Z, go1.x linux/amd64)"},
		{"release stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "v1.0.0",
			"servebench v1.0.0 0123456789ab (2026-12-01T21:00:00Z, go1.x linux/amd64)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := buildOf(c.info, c.stamped)
			b.Go, b.OS, b.Arch = "go1.x", "linux", "amd64"
			if got := versionLine(b); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestTestbedModelWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	code, stdout, stderr := run(t, "testbed", "model", "--out", out, "--layers", "1", "--dtype", "f16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("GGUF\x03\x00\x00\x00")) {
		t.Fatalf("%s does not start with the GGUF v3 header", out)
	}
	if !strings.Contains(stdout, "1 layers") {
		t.Fatalf("stdout %q", stdout)
	}
}

func TestHelpListsCommands(t *testing.T) {
	_, stdout, _ := run(t, "--help")
	for _, name := range []string{"version", "testbed"} {
		if !strings.Contains(stdout, name) {
			t.Errorf("help does not list %s:\n%s", name, stdout)
		}
	}
}

// TestQuickstart: servebench alone shows the five quick-start lines before
// the command list, and the ones that need no server work as written (the
// report line on a reference document in place of the glob). The sim line
// is checked once `run --backend sim` exists.
func TestQuickstart(t *testing.T) {
	code, _, stderr := run(t)
	qs, cmds := strings.Index(stderr, "Quick start:"), strings.Index(stderr, "Commands:")
	if code != 2 || qs < 0 || cmds < qs {
		t.Fatalf("exit %d; no quick start before the commands:\n%s", code, stderr)
	}
	lines := strings.Split(quickstart, "\n")
	if len(lines) != 5 {
		t.Fatalf("quick start has %d lines, want 5", len(lines))
	}
	example := testenv.RepoFile(t, "examples/multi-backend-sweep.json")
	for _, l := range lines[1:] {
		cmd, _, _ := strings.Cut(l, "#")
		args := shellWords(t, strings.TrimSpace(cmd))
		if args[0] != "servebench" {
			t.Fatalf("quick start line %q does not start with servebench", l)
		}
		switch args[1] {
		case "plan":
		case "report":
			args[2] = example
		case "run":
			if len(args) == 2 {
				continue // run needs a server (TestRunScansLocalPorts)
			}
			// run --backend sim predicts, in virtual time: as written.
		default:
			t.Fatalf("quick start line %q: no case for %s", l, args[1])
		}
		if code, _, stderr := run(t, args[1:]...); code != 0 {
			t.Errorf("%q: exit %d: %s", l, code, stderr)
		}
	}
}

// shellWords splits a command line at spaces, keeping double-quoted words
// whole.
func shellWords(t *testing.T, s string) []string {
	var out []string
	for s != "" {
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, `"`) {
			w, rest, ok := strings.Cut(s[1:], `"`)
			if !ok {
				t.Fatalf("unclosed quote in %q", s)
			}
			out, s = append(out, w), rest
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		if w != "" {
			out = append(out, w)
		}
		s = rest
	}
	return out
}
