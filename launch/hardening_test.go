package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExpandDollar (item 13): $$ is a literal $, and a $ that
// starts no variable is an error saying so; before, "$$" said
// "environment variable $ is not set" and a literal $ could not be
// written.
func TestExpandDollar(t *testing.T) {
	t.Setenv("SBTEST_HOME", "/home/x")
	cases := []struct {
		in, want, wantErr string
	}{
		{in: "$$", want: "$"},
		{in: "cost $$5", want: "cost $5"},
		{in: "$$SBTEST_HOME", want: "$SBTEST_HOME"},
		{in: "p$$$$w", want: "p$$w"},
		{in: "${SBTEST_HOME}/bin:$SBTEST_HOME", want: "/home/x/bin:/home/x"},
		{in: "a$", wantErr: `column 2: a "$" that starts no variable name (write $$ for a literal $)`},
		{in: "$1", wantErr: "write $$ for a literal $"},
		{in: "$(id)", wantErr: "write $$ for a literal $"},
		{in: "${SBTEST_HOME", wantErr: `"${" without its "}"`},
		{in: "${1X}", wantErr: "${1X}: not a variable name"},
		{in: "$SBTEST_SURELY_UNSET", wantErr: "environment variable SBTEST_SURELY_UNSET is not set"},
	}
	for _, c := range cases {
		e, err := expand(c.in, os.LookupEnv)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("expand(%q): err %v, want %q", c.in, err, c.wantErr)
		case c.wantErr == "" && (err != nil || e.Value != c.want):
			t.Errorf("expand(%q) = %q, %v; want %q", c.in, e.Value, err, c.want)
		}
	}
	p, err := Parse("p.yaml", []byte("backend: ollama\nenv: {PASSPHRASE_HINT: \"starts with $$\", PRICE: \"$$5\"}\ncommand: [ollama, serve]\n"))
	if err != nil || p.Env["PRICE"] != "$5" || p.Env["PASSPHRASE_HINT"] != "starts with $" {
		t.Fatalf("profile with $$: %v %q", err, p.Env)
	}
	_, err = Parse("p.yaml", []byte("backend: ollama\nenv: {PRICE: \"5$\"}\n"))
	if err == nil || !strings.Contains(err.Error(), "profile p.yaml: env: PRICE: column 2:") || !strings.Contains(err.Error(), "write $$") {
		t.Fatalf("lone $: %v", err)
	}
}

// TestDryRunRedactsSecrets (item 8): launch --dry-run prints no
// secret however the profile passes it: a secret variable's value under a
// plain env name, a secret flag inside an argument (sh -c "… --api-key
// S") or an env value, a name such as HF_AUTH, and URL passwords (in the
// command, env, model and health URL). Log lines quoted in errors lose the
// secret variable's value too.
func TestDryRunRedactsSecrets(t *testing.T) {
	t.Setenv("SBTEST_OPENAI_API_KEY", "sk-var-7f3a9c")
	t.Setenv("SBTEST_PLAIN_DIR", "/opt/plain")
	data := `backend: vllm
model: https://user:modelpw-1@hf.example/org/m
port: 8000
health_url: http://mon:healthpw-2@127.0.0.1:8000/health
command: ["sh", "-c", "exec vllm serve m --api-key sk-shell-3 --port 8000", "--hf-token", "hf-flag-4", "--proxy=http://admin:urlpw-5@proxy:3128", "--key-file=${SBTEST_OPENAI_API_KEY}", "${SBTEST_PLAIN_DIR}/x"]
env:
  PLAIN: "${SBTEST_OPENAI_API_KEY}"
  MIXED: "prefix-$SBTEST_OPENAI_API_KEY-suffix"
  VLLM_ARGS: "--served-model-name m --api-key sk-envflag-6"
  HF_AUTH: "hfauth-7"
  HTTPS_PROXY: "http://u:proxypw-8@proxy:3128"
  PLAIN_SETTING: "visible-9"
`
	p, err := Parse("p.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(p, "secret-test")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteDryRun(&out, s); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, secret := range []string{"sk-var-7f3a9c", "modelpw-1", "healthpw-2", "sk-shell-3", "hf-flag-4", "urlpw-5", "sk-envflag-6", "hfauth-7", "proxypw-8"} {
		if strings.Contains(got, secret) {
			t.Errorf("dry run prints secret %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{"PLAIN=<redacted>", "MIXED=prefix-<redacted>-suffix", "--api-key <redacted> --port 8000", "'VLLM_ARGS=--served-model-name m --api-key <redacted>'",
		"HF_AUTH=<redacted>", "http://u:<redacted>@proxy:3128", "--key-file=<redacted>", "/opt/plain/x", "PLAIN_SETTING=visible-9", "https://user:<redacted>@hf.example/org/m"} {
		if !strings.Contains(got, want) {
			t.Errorf("dry run lacks %q:\n%s", want, got)
		}
	}
	if line := s.redactLine("loaded key sk-var-7f3a9c from the environment"); strings.Contains(line, "sk-var-7f3a9c") {
		t.Errorf("log line keeps the secret variable's value: %q", line)
	}
	// What the server gets is unchanged.
	if p.Env["PLAIN"] != "sk-var-7f3a9c" || !strings.Contains(strings.Join(s.Argv, " "), "--api-key sk-shell-3") {
		t.Errorf("redaction changed what the server gets: %q %q", p.Env, s.Argv)
	}
}

// TestRelativeCommandRunsTheProfilesFile (item 9): command
// ["./x.sh"] in a profile given by a relative path runs the x.sh beside
// the profile, never a same-named program on $PATH (before, it became
// "x.sh" and exec looked it up in $PATH).
func TestRelativeCommandRunsTheProfilesFile(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "path")
	os.Mkdir(onPath, 0o755)
	os.WriteFile(filepath.Join(onPath, "x.sh"), []byte("#!/bin/sh\necho the-wrong-program\n"), 0o755)
	profDir := filepath.Join(dir, "profiles")
	os.Mkdir(profDir, 0o755)
	os.WriteFile(filepath.Join(profDir, "x.sh"), []byte("#!/bin/sh\necho the-profiles-own-script\n"), 0o755)
	os.WriteFile(filepath.Join(profDir, "p.yaml"), []byte("backend: ollama\ncommand: [\"./x.sh\"]\nport: 0\n"), 0o644)
	t.Setenv("PATH", onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(profDir)

	p, err := Load("p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(profDir, "x.sh"); p.Command[0] != want {
		t.Fatalf("command[0] = %q, want %q", p.Command[0], want)
	}
	s, err := Build(p, "relative")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "server.log")
	srv, err := Start(s, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	select {
	case <-srv.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the script did not exit")
	}
	b, _ := os.ReadFile(logPath)
	if !strings.Contains(string(b), "the-profiles-own-script") {
		t.Errorf("ran the wrong program; log:\n%s", b)
	}
}

// FuzzExpand: expand never panics; text without $ is unchanged; a
// successful expansion of text whose only $s are $$ pairs halves them.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "$$", "${HOME}", "$", "a$b$$c", "${", "${}", "$1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lookup := func(k string) (string, bool) { return "<" + k + ">", k != "UNSET" }
		e, err := expand(s, lookup)
		if !strings.Contains(s, "$") && (err != nil || e.Value != s || e.Shown != s) {
			t.Fatalf("expand(%q) = %q, %v", s, e.Value, err)
		}
		if err == nil && strings.Count(s, "$") == 2*strings.Count(s, "$$") && strings.Count(e.Value, "$") != strings.Count(s, "$$") {
			t.Fatalf("expand(%q) = %q: $$ not halved", s, e.Value)
		}
	})
}
