package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestURLSecretsRefused: a key passed in a URL (user name, password,
// query string, fragment) of --url, --metrics-url or calibrate's --url is
// refused with a usage error that does not quote it.
func TestURLSecretsRefused(t *testing.T) {
	const key = "sk-url-5e1d"
	srvRun := func(url string) []string {
		return []string{"run", "--backend", "vllm", "--url", url, "--model", "m"}
	}
	metrics := func(url string) []string {
		return []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:1", "--metrics-url", url, "--model", "m"}
	}
	calibrate := func(url string) []string {
		return []string{"calibrate", "--backend", "vllm", "--url", url, "--model", "m"}
	}
	cases := []struct {
		name, flag string
		args       []string
	}{
		{"user name", "--url", srvRun("http://" + key + "@127.0.0.1:1/v1")},
		{"user and password", "--url", srvRun("http://" + key + ":" + key + "@127.0.0.1:1/v1")},
		{"query", "--url", srvRun("http://127.0.0.1:1/v1?api_key=" + key)},
		{"fragment", "--url", srvRun("http://127.0.0.1:1/v1#" + key)},
		{"unparsable with a user", "--url", srvRun("http://" + key + "@[::1")},
		{"metrics query", "--metrics-url", metrics("http://127.0.0.1:1/metrics?token=" + key)},
		{"metrics user", "--metrics-url", metrics("http://" + key + "@127.0.0.1:1/metrics")},
		{"calibrate query", "--url", calibrate("http://127.0.0.1:1?token=" + key)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.flag) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q: want 2 and one line naming %s", code, stderr, c.flag)
			}
			if strings.Contains(stderr, key) {
				t.Fatalf("the refusal quotes the key: %q", stderr)
			}
		})
	}
}

// TestRedactURLMasksEveryCredential: every part of a URL that may hold a
// key is masked where a URL is shown (calibration records and notes).
func TestRedactURLMasksEveryCredential(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://tok@gpu-box:8000", "http://xxxxx@gpu-box:8000"},
		{"http://h:8000/v1?api_key=K&x=1", "http://h:8000/v1?xxxxx"},
		{"http://h:8000/v1#K", "http://h:8000/v1#xxxxx"},
		{"http://K@[::1", "http://xxxxx"},
		{"K@[::1", "xxxxx"},
	} {
		if got := redactURL(c.in); got != c.want {
			t.Errorf("redactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := redactURLIn(`Get "http://u:***@h/metrics?token=K": refused`, "http://u:pw@h?token=K"); strings.Contains(got, "token=K") || strings.Contains(got, "u:") {
		t.Errorf("redactURLIn left a credential: %q", got)
	}
}

// TestTraceErrorRedactsKey: a trace line that holds the API key (a
// request log exported with its headers) is quoted in the parse error
// without it.
func TestTraceErrorRedactsKey(t *testing.T) {
	const key = "sk-trace-42ab9"
	for i, line := range []string{
		`{"t_ms":0,"input_tokens":4,"output_tokens":4,"image":"Bearer ` + key + `"}`,
		"Authorization: Bearer " + key,
	} {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		keyArgs := []string{"--api-key", key}
		if i == 1 {
			keyArgs = nil
			t.Setenv("OPENAI_API_KEY", key)
		}
		args := append([]string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:1", "--model", "m", "--method", "rate", "--trace", path}, keyArgs...)
		code, _, stderr := run(t, args...)
		if code != 2 || !strings.Contains(stderr, "--trace") {
			t.Fatalf("exit %d, stderr %q: want 2 naming --trace", code, stderr)
		}
		if strings.Contains(stderr, key) {
			t.Fatalf("the error quotes the key: %q", stderr)
		}
	}
}
