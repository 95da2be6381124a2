package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// everyCommand is every command line that has flags of its own, as help
// names it.
var everyCommand = [][]string{
	{"calibrate"}, {"compare"}, {"find"}, {"launch"}, {"plan"}, {"report"}, {"run"},
	{"sim", "serve"}, {"sim", "fit"}, {"testbed", "model"}, {"version"},
}

// reHelpFlag is a flag line of help: two spaces, two dashes, the name.
var reHelpFlag = regexp.MustCompile(`(?m)^  (-+)([a-z0-9][a-z0-9-]*)`)

// helpFlags runs cmd --help and returns the dashes and names of the flags
// it lists.
func helpFlags(t *testing.T, cmd []string) (dashes, names []string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Run(context.Background(), append(append([]string{}, cmd...), "--help"), &out, &errb); err != nil {
		t.Fatalf("%s --help: %v", strings.Join(cmd, " "), err)
	}
	for _, m := range reHelpFlag.FindAllStringSubmatch(out.String(), -1) {
		dashes, names = append(dashes, m[1]), append(names, m[2])
	}
	return dashes, names
}

// TestMistypedFlagEveryCommand: in every command, a real flag with one
// letter dropped gets one line on stderr naming the flag meant and the
// command's help, exit 2, and nothing on stdout (no help dump). The
// flags come from the command's own help, which shows them with two
// dashes.
func TestMistypedFlagEveryCommand(t *testing.T) {
	for _, cmd := range everyCommand {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			dashes, flags := helpFlags(t, cmd)
			if name == "version" {
				flags = []string{"short"} // version has no flags: any is unknown
			}
			for _, d := range dashes {
				if d != "--" {
					t.Fatalf("help lists a flag with %q, want --", d)
				}
			}
			if len(flags) == 0 {
				t.Fatal("help lists no flags")
			}
			// The longest flag, with its second letter dropped, is nearer it
			// than any other.
			long := flags[0]
			for _, f := range flags {
				if len(f) > len(long) {
					long = f
				}
			}
			typo := long[:1] + long[2:]
			code, stdout, stderr := run(t, append(append([]string{}, cmd...), "--"+typo, "1")...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %d bytes; want 2 and none", code, len(stdout))
			}
			line := strings.TrimSpace(stderr)
			if strings.Contains(line, "\n") {
				t.Fatalf("stderr is not one line:\n%s", stderr)
			}
			want := "unknown flag --" + typo
			if name != "version" {
				want += " (did you mean --" + long + "?)"
			}
			want += "; see 'servebench " + name + " --help'"
			if !strings.Contains(line, want) {
				t.Fatalf("stderr %q lacks %q", line, want)
			}
		})
	}
}

// TestFlagValueErrors: a bad value gets one line naming the flag with two
// dashes, the value, and what the flag's kind wants, for each kind of flag.
func TestFlagValueErrors(t *testing.T) {
	plan := []string{"plan", "--model", "llama-3.1-8b", "--gpu", "RTX 4090"}
	with := func(args ...string) []string { return append(append([]string{}, plan...), args...) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"token count", with("--context", "8.5k"), `plan: --context "8.5k": want a token count such as 8192 or 8k (k = 1,024)`},
		{"token count with two suffixes", with("--context", "8kk"), `--context "8kk": want a token count`},
		{"whole number", with("--gpus", "two"), `plan: --gpus "two": want a whole number`},
		{"number", with("--gpu-gib", "lots"), `plan: --gpu-gib "lots": want a number`},
		{"boolean", with("--json=maybe"), `plan: --json "maybe": want true or false`},
		{"duration", []string{"run", "--timeout", "5"}, `run: --timeout "5": want a duration in Go's syntax such as 500ms, 30s or 1m30s`},
		{"missing value", []string{"run", "--concurrency"}, `run: --concurrency needs a value; see 'servebench run --help'`},
		{"unknown flag nothing like any", []string{"run", "--frobnicate"}, `run: unknown flag --frobnicate; see 'servebench run --help'`},
		{"unknown flag with a value", []string{"run", "--concurency=4"}, `run: unknown flag --concurency (did you mean --concurrency?)`},
		{"mistyped subcommand", []string{"sim", "serv"}, `sim: unknown subcommand "serv" (did you mean serve?); see 'servebench sim --help'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantUsageLine(t, c.args, c.want) })
	}
}

// TestTokenCountSuffix: a token count flag takes k = 1,024 as model cards
// write it; plan's answer for --context 8k is its answer for 8192.
func TestTokenCountSuffix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"8192", 8192, true}, {"8k", 8192, true}, {"128k", 131072, true}, {"128K", 131072, true},
		{"-1", -1, true}, {"0", 0, true}, {" 4k", 4096, true},
		{"1.5k", 0, false}, {"k", 0, false}, {"8kk", 0, false}, {"8m", 0, false}, {"", 0, false},
		{"9999999999999999k", 0, false},
	} {
		got, err := parseTokenCount(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseTokenCount(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	plan := func(ctx string) string {
		code, stdout, stderr := run(t, "plan", "--model", "llama-3.1-8b", "--gpu", "RTX 4090", "--context", ctx, "--json")
		if code != 0 {
			t.Fatalf("plan --context %s: exit %d: %s", ctx, code, stderr)
		}
		return stdout
	}
	if a, b := plan("8k"), plan("8192"); a != b {
		t.Errorf("plan --context 8k differs from --context 8192:\n%s\n%s", a, b)
	}
}

func TestIsTokenCount(t *testing.T) {
	for name, want := range map[string]bool{
		"context": true, "max-tokens": true, "prompt-tokens": true, "max-num-batched-tokens": true,
		"block-size": true, "concurrency": false, "requests": false, "max-num-seqs": false, "seed": false,
	} {
		if got := isTokenCount(name); got != want {
			t.Errorf("isTokenCount(%q) = %v, want %v", name, got, want)
		}
	}
}
