package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// usersArgs is a simulated users run of the 4090 question's server.
func usersArgs(args ...string) []string {
	return append([]string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "awq", "--context", "4096", "--quiet"}, args...)
}

// TestRunUsersFlagErrors: a bad --users run is one line naming the flags
// at fault, exit 2, before anything runs.
func TestRunUsersFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no people", usersArgs("--users", "0"), "run: --users:"},
		{"with concurrency", usersArgs("--users", "4", "--concurrency", "4"), "run: --users and --concurrency do not go together"},
		{"with rate", usersArgs("--users", "4", "--rate", "1"), "run: --users and --rate do not go together"},
		{"with batch", usersArgs("--users", "4", "--method", "batch"), "run: --users and --method batch do not go together"},
		{"with trace", usersArgs("--users", "4", "--trace", "t.jsonl"), "run: --users and --trace do not go together"},
		{"with scenario", usersArgs("--users", "4", "--scenario", "multiturn"), "run: --users and --scenario do not go together"},
		{"negative think", usersArgs("--users", "4", "--think-time", "const:-1s"), "run: --think-time:"},
		{"think over an hour", usersArgs("--users", "4", "--think-time", "exp:2h"), "run: --think-time:"},
		{"unknown profile", usersArgs("--users", "4", "--user-profile", "gamer"), `run: --user-profile: unknown profile "gamer"`},
		{"profile without users", usersArgs("--user-profile", "rag"), "run: --user-profile applies only with --users"},
		{"method users alone", usersArgs("--method", "users"), "run: --method users: give --users N"},
		{"no turns", usersArgs("--users", "4", "--turns", "0"), "run: --turns 0: must be at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
}

// TestUsersLittlesLaw: N people who think between turns make messages at
// N / (mean think + mean E2E) (Little's law over a person's cycle), within
// 10%, and far fewer than N closed-loop clients (--concurrency N), which
// never think. Measured on the simulator; 400 counted turns a level keep
// the rate's sampling error near 5%.
func TestUsersLittlesLaw(t *testing.T) {
	dir := t.TempDir()
	p, err := workload.LookupProfile("chat")
	if err != nil {
		t.Fatal(err)
	}
	think := p.MeanThink().Seconds()
	for _, n := range []int{4, 16} {
		out := filepath.Join(dir, "users.json")
		if code, _, stderr := run(t, usersArgs("--users", itoa(n), "--requests", "400", "--out", out)...); code != 0 {
			t.Fatalf("users run: exit %d: %s", code, stderr)
		}
		l := readDoc(t, out).Runs[0].Levels[0]
		if l.MessageRate == nil || l.E2EMeanMs == nil || l.Conversations == nil {
			t.Fatalf("%d users: message rate %v, E2E mean %v, conversations %v; want all three", n, l.MessageRate, l.E2EMeanMs, l.Conversations)
		}
		want := float64(n) / (think + *l.E2EMeanMs/1000)
		got := *l.MessageRate
		t.Logf("%d users: %d turns of %d conversations, %.4f messages/s; N/(think %.1f s + E2E %.2f s) = %.4f (%.1f%%)",
			n, l.Requests, *l.Conversations, got, think, *l.E2EMeanMs/1000, want, 100*(got/want-1))
		if got < 0.9*want || got > 1.1*want {
			t.Errorf("%d users: %.4f messages/s, want within 10%% of N/(think + E2E) = %.4f", n, got, want)
		}

		pool := filepath.Join(dir, "pool.json")
		if code, _, stderr := run(t, usersArgsPool(n, pool)...); code != 0 {
			t.Fatalf("pool run: exit %d: %s", code, stderr)
		}
		pl := readDoc(t, pool).Runs[0].Levels[0]
		poolRate := float64(pl.Requests) / *pl.WallSeconds
		t.Logf("--concurrency %d: %.3f requests/s", n, poolRate)
		if got > poolRate/10 {
			t.Errorf("%d users make %.4f messages/s, --concurrency %d %.3f requests/s: people who think should send far less", n, got, n, poolRate)
		}
	}
}

// TestUsersLittlesLawManyPeople: at hundreds of people a users level is
// counted in steady state, so its message rate is N / (mean think + mean
// E2E) within 10% at the default --requests, as capacity measures it.
// People who started in a ramp (a uniform start within one mean think,
// counting the first 72 turns after one cycle, over the wall time to the
// last answer) made 4.4 messages/s at 1,024 people against 9.5 by the law.
func TestUsersLittlesLawManyPeople(t *testing.T) {
	dir := t.TempDir()
	p, err := workload.LookupProfile("chat")
	if err != nil {
		t.Fatal(err)
	}
	think := p.MeanThink().Seconds()
	for _, n := range []int{512, 1024} {
		out := filepath.Join(dir, "users.json")
		if code, _, stderr := run(t, usersArgs("--users", itoa(n), "--out", out)...); code != 0 {
			t.Fatalf("users run: exit %d: %s", code, stderr)
		}
		l := readDoc(t, out).Runs[0].Levels[0]
		if l.MessageRate == nil || l.E2EMeanMs == nil {
			t.Fatalf("%d users: message rate %v, E2E mean %v; want both", n, l.MessageRate, l.E2EMeanMs)
		}
		if l.Requests < n {
			t.Errorf("%d users: %d counted turns, want at least one per person (about one mean cycle)", n, l.Requests)
		}
		want := float64(n) / (think + *l.E2EMeanMs/1000)
		got := *l.MessageRate
		t.Logf("%d users: %d turns, %.3f messages/s; N/(think %.1f s + E2E %.2f s) = %.3f (%+.1f%%)",
			n, l.Requests, got, think, *l.E2EMeanMs/1000, want, 100*(got/want-1))
		if got < 0.9*want || got > 1.1*want {
			t.Errorf("%d users: %.3f messages/s, want within 10%% of N/(think + E2E) = %.3f", n, got, want)
		}
	}
}

// usersArgsPool is the closed loop of n clients with the chat profile's
// mean lengths.
func usersArgsPool(n int, out string) []string {
	return []string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--quant", "awq", "--context", "4096", "--quiet",
		"--concurrency", itoa(n), "--prompt-tokens", "70", "--max-tokens", "215", "--requests", "200", "--out", out}
}

// TestProgressLevelName: a level's progress name says what its load is:
// people for a users level ("users 5", not a pool's "c=5"), a rate, a
// trace, or clients.
func TestProgressLevelName(t *testing.T) {
	tests := []struct {
		l    load.Level
		m    load.Method
		want string
	}{
		{load.Level{Concurrency: 5}, load.Users, "users 5"},
		{load.Level{Concurrency: 5}, load.Pool, "c=5"},
		{load.Level{Concurrency: 64, Rate: 2}, load.Rate, "rate=2/s"},
		{load.Level{Concurrency: 64, Rate: 1.5, Arrival: string(load.Trace)}, load.Rate, "trace (mean 1.5/s)"},
	}
	for _, tc := range tests {
		if got := levelName(tc.l, tc.m); got != tc.want {
			t.Errorf("levelName(%+v, %s) = %q, want %q", tc.l, tc.m, got, tc.want)
		}
	}
}

// TestUsersProgressLine: a users run's progress lines name each level
// "users N".
func TestUsersProgressLine(t *testing.T) {
	args := usersArgs("--users", "3,5", "--out", filepath.Join(t.TempDir(), "u.json"))
	var kept []string
	for _, a := range args {
		if a != "--quiet" {
			kept = append(kept, a)
		}
	}
	code, _, stderr := run(t, kept...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"level 1 of 2 users 3", "level 2 of 2 users 5"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "c=") {
		t.Errorf("progress %q names a users level as clients (c=)", stderr)
	}
}

// TestUsersSLOAnswer: report --slo of a users run answers in people —
// "holds up to users", "best … at N users" — never in clients (c=).
func TestUsersSLOAnswer(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	out := filepath.Join(t.TempDir(), "u.json")
	if code, _, stderr := run(t, usersArgs("--users", "3,5", "--out", out)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "report", out, "--slo", "ttft_p95=60s")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	slo := stdout[strings.Index(stdout, "== SLO"):]
	for _, want := range []string{"holds up to users", "first break users", "at 5 users"} {
		if !strings.Contains(slo, want) {
			t.Errorf("the SLO answer lacks %q:\n%s", want, slo)
		}
	}
	if strings.Contains(slo, "c=") || strings.Contains(slo, "concurrency") {
		t.Errorf("the SLO answer names people as clients:\n%s", slo)
	}
}

// TestSimUsersOverflowWarning: people on a simulated server whose
// sequence or slot holds less than a conversation's p95 (llama.cpp's
// --context is the total over its --parallel slots) are warned that the
// turns past it are refused and counted as errors; a server whose slot
// holds the p95 is not.
func TestSimUsersOverflowWarning(t *testing.T) {
	p, err := workload.LookupProfile("chat")
	if err != nil {
		t.Fatal(err)
	}
	held := p.HeldTokensP95(1)
	sim := func(family, quant string, context int, extra ...string) []string {
		return append([]string{"run", "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-14b", "--scheduler", family, "--quant", quant,
			"--context", itoa(context), "--users", "2", "--requests", "4", "--quiet"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		warn bool
	}{
		{"llama.cpp, the p95 over 4 slots", sim("llamacpp", "q4_k_m", held), true},
		{"llama.cpp, twice the p95 a slot", sim("llamacpp", "q4_k_m", 2*held*4), false},
		{"llama.cpp, 2 slots of half the p95", sim("llamacpp", "q4_k_m", held, "--parallel", "2"), true},
		{"vLLM, half the p95", sim("vllm", "awq", held/2), true},
		{"vLLM, twice the p95", sim("vllm", "awq", 2*held), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, append(tc.args, "--out", filepath.Join(t.TempDir(), "run.json"))...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			warned := strings.Contains(stderr, "refused (HTTP 400)") && strings.Contains(stderr, itoa(held))
			if warned != tc.warn {
				t.Errorf("warned %v, want %v: %s", warned, tc.warn, stderr)
			}
		})
	}
}
