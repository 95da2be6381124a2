package launch

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// redacted replaces a secret wherever servebench prints one.
const redacted = "<redacted>"

// secretName matches environment variable names whose values must never
// be printed (API keys, tokens, passwords, auth strings, cookies).
var secretName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASS|CREDENTIAL|AUTH|COOKIE|PRIVATE)`)

// RedactEnv returns kv ("KEY=VALUE") with the value replaced by <redacted>
// when KEY looks like a secret.
func RedactEnv(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	if secretName.MatchString(k) {
		return k + "=" + redacted
	}
	return kv
}

// secretFlagNames are the names (without dashes) of command-line flags
// whose value is a secret: vLLM's and llama-server's --api-key, token,
// auth and password flags.
const secretFlagNames = `api[-_]?key|api[-_]?token|access[-_]?token|hf[-_]?token|hf[-_]?auth|auth[-_]?token|auth|token|password|passwd|secret|credentials?`

// secretFlag matches a whole argument that is a secret flag.
var secretFlag = regexp.MustCompile(`(?i)^--?(` + secretFlagNames + `)$`)

// RedactArgv returns a copy of argv with the values of secret flags
// ("--api-key K" and "--api-key=K") replaced by <redacted>, so that a
// key put in a profile's command never reaches the terminal or a report.
func RedactArgv(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 1; i < len(out); i++ {
		name, _, inline := strings.Cut(out[i], "=")
		if !secretFlag.MatchString(name) {
			continue
		}
		if inline {
			out[i] = name + "=" + redacted
		} else if i+1 < len(out) {
			i++
			out[i] = redacted
		}
	}
	return out
}

// secretAssign matches a secret flag or field and its value inside a
// longer text — an argument such as `sh -c "... --api-key K"`, an env
// value, a server's log line: a flag of secretFlagNames as "--api-key K"
// or "--api-key=K", and a field "api_key=K", "api_key='K'", "'api_key':
// 'K'", "'api_key': ['K']" or "\"api_key\": \"K\"" (a bare "token" field
// is left alone: llama.cpp logs "EOS token = 2"). Group 1 is the name and
// separator, group 2 the value.
var secretAssign = regexp.MustCompile(`(?i)((?:(?:^|\s)--?(?:` + secretFlagNames + `)(?:=|\s+))|` +
	`(?:\b(?:api[-_]?key|api[-_]?token|access[-_]?token|hf[-_]?token|hf[-_]?auth|auth[-_]?token|password|passwd|secret)['"]?\s*[:=]\s*\[?['"]?))([^'"\s,)\]}]+)`)

// urlPassword matches the password of a URL's user info
// (scheme://user:PASSWORD@host); group 1 is what precedes it.
var urlPassword = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/?#\s:@]*:)([^@/?#\s]+)@`)

// RedactText replaces, anywhere in s, the values of secret flags and
// fields (secretAssign) and URL passwords (urlPassword) with <redacted>.
func RedactText(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	return secretAssign.ReplaceAllString(s, "${1}"+redacted)
}

// minSecretLen is the shortest env value redacted wherever it appears in a
// log line: shorter values of secret-looking names are flags such as
// TOKENIZERS_PARALLELISM=false, not keys, and replacing them everywhere
// would garble the line.
const minSecretLen = 6

// secretValues are the values the spec passes to the server that must not
// be quoted: those of secret flags in Argv, of secret-looking names in
// Env (the profile's env and knobs), and of secret-looking variables the
// profile's ${VAR}s took.
func (s *Spec) secretValues() []string {
	var out []string
	red := RedactArgv(s.Argv)
	for i, a := range s.Argv {
		if red[i] == a {
			continue
		}
		if name, v, inline := strings.Cut(a, "="); inline && secretFlag.MatchString(name) {
			a = v
		}
		out = append(out, a)
	}
	for _, kv := range s.Env {
		if k, v, _ := strings.Cut(kv, "="); secretName.MatchString(k) && len(v) >= minSecretLen {
			out = append(out, v)
		}
	}
	if s.Profile != nil {
		for _, v := range s.Profile.secretValues {
			if len(v) >= minSecretLen {
				out = append(out, v)
			}
		}
	}
	return out
}

// redactLine replaces in a server's log line the secret values the spec
// passed (secretValues) and any value printed after a secret flag or field
// name, or as a URL's password (RedactText), with <redacted>. It is for
// log lines quoted in error messages; the log file itself is left as the
// server wrote it.
func (s *Spec) redactLine(line string) string {
	for _, v := range s.secretValues() {
		if v != "" {
			line = strings.ReplaceAll(line, v, redacted)
		}
	}
	return RedactText(line)
}

// ShownArgv is the argument list as servebench prints it: elements that
// took a secret variable's value show <redacted> in its place, the values
// of secret flags (RedactArgv) and of secret flags, fields and URL
// passwords inside an element (RedactText) are redacted.
func (s *Spec) ShownArgv() []string {
	out := append([]string(nil), s.Argv...)
	if s.Profile != nil {
		for i, sh := range s.Profile.shownCommand {
			if i < len(out) {
				out[i] = sh
			}
		}
	}
	out = RedactArgv(out)
	for i := range out {
		out[i] = RedactText(out[i])
	}
	return out
}

// ShownEnv is Env as servebench prints it: values of secret-looking names
// (RedactEnv), values that took a secret variable's value, and secret
// flags, fields and URL passwords inside a value (RedactText) redacted.
func (s *Spec) ShownEnv() []string {
	out := make([]string, len(s.Env))
	for i, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		if s.Profile != nil {
			if sh, ok := s.Profile.shownEnv[k]; ok {
				v = sh
			}
		}
		out[i] = RedactEnv(k + "=" + RedactText(v))
	}
	return out
}

// WriteDryRun prints what launching s would run: the argument list one
// element a line, the environment it adds (secrets redacted) and removes,
// the health URL and deadline, and a copy-pasteable shell line. Secret
// values (ShownArgv, ShownEnv, URL passwords) are never printed.
func WriteDryRun(w io.Writer, s *Spec) error {
	var b strings.Builder
	fmt.Fprintf(&b, "label:    %s\n", s.Label)
	fmt.Fprintf(&b, "backend:  %s\n", s.Backend)
	fmt.Fprintf(&b, "model:    %s\n", RedactText(s.Model))
	fmt.Fprintf(&b, "url:      %s\n", RedactText(s.BaseURL))
	fmt.Fprintf(&b, "health:   %s (deadline %s)\n", RedactText(s.HealthURL), s.StartDeadline)
	fmt.Fprintf(&b, "stop:     SIGTERM to the process group and every process it started, SIGKILL after %s (a watchdog holds the tree)\n", s.StopGrace)
	b.WriteString("argv:\n")
	for i, a := range s.ShownArgv() {
		fmt.Fprintf(&b, "  [%d] %s\n", i, a)
	}
	b.WriteString("env (added to servebench's environment):\n")
	if len(s.Env) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, kv := range s.ShownEnv() {
		fmt.Fprintf(&b, "  %s\n", kv)
	}
	if len(s.Unset) > 0 {
		b.WriteString("env removed (controlled by profile knobs):\n")
		for _, k := range s.Unset {
			fmt.Fprintf(&b, "  %s\n", k)
		}
	}
	b.WriteString("shell equivalent:\n  ")
	b.WriteString(ShellLine(s))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// ShellLine renders s as one POSIX shell line (env -u ... K=V argv...),
// each word quoted where needed and secrets redacted; it is for people to
// read and paste, servebench itself never runs a shell.
func ShellLine(s *Spec) string {
	var words []string
	if len(s.Env) > 0 || len(s.Unset) > 0 {
		words = append(words, "env")
		for _, k := range s.Unset {
			words = append(words, "-u", shellQuote(k))
		}
		for _, kv := range s.ShownEnv() {
			words = append(words, shellQuote(kv))
		}
	}
	for _, a := range s.ShownArgv() {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
