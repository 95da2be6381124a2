package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/workload"
)

// parsedConfig is the configuration run's flags args parse into; the
// test fails when they do not.
func parsedConfig(t *testing.T, args ...string) runConfig {
	t.Helper()
	cfg, err := parseRunFlags(context.Background(), args, io.Discard)
	if err != nil {
		t.Fatalf("run %s: %v", strings.Join(args, " "), err)
	}
	return cfg
}

// TestConfigValidate calls each part of a parsed configuration's
// Validate directly: the part as parsed passes, and the part with one bad
// value fails with the one-line usage error that names its flag, as the
// flag itself would.
func TestConfigValidate(t *testing.T) {
	pool := parsedConfig(t, "--url", "http://127.0.0.1:8000", "--backend", "vllm", "--model", "m", "--scenario", "multiturn")
	rate := parsedConfig(t, "--url", "http://127.0.0.1:8000", "--backend", "vllm", "--model", "m",
		"--method", "rate", "--rate", "2", "--arrival", "ramp", "--ramp", "10s")
	users := parsedConfig(t, "--url", "http://127.0.0.1:8000", "--backend", "vllm", "--model", "m", "--users", "4")
	simCfg := parsedConfig(t, "--backend", "sim", "--gpu", "RTX 4090", "--model", "qwen2.5-7b")

	server := func(edit func(*serverConfig)) func() error {
		c := pool.serverConfig
		edit(&c)
		return c.Validate
	}
	work := func(base runConfig, edit func(*workloadConfig)) func() error {
		c := base.workloadConfig
		edit(&c)
		return c.Validate
	}
	body := func(edit func(*requestBody)) func() error {
		c := pool.requestBody
		edit(&c)
		return c.Validate
	}
	loads := func(base runConfig, edit func(*loadConfig)) func() error {
		c := base.loadConfig
		edit(&c)
		return c.Validate
	}
	outputs := func(edit func(*outputConfig)) func() error {
		c := pool.outputConfig
		edit(&c)
		return c.Validate
	}
	tele := func(edit func(*telemetrySettings)) func() error {
		c := pool.Telemetry
		edit(&c)
		return c.Validate
	}
	intervals := func(edit func(*intervalConfig)) func() error {
		c := pool.intervalConfig
		edit(&c)
		return c.Validate
	}
	simPart := func(edit func(*simTarget)) func() error {
		c := *simCfg.Sim
		edit(&c)
		return c.Validate
	}
	neg := -1.0

	tests := []struct {
		name     string
		validate func() error
		want     string // "": valid
	}{
		{"server as parsed", server(func(*serverConfig) {}), ""},
		{"server timeout", server(func(c *serverConfig) { c.Timeout = -time.Second }), "--timeout -1s: must not be negative"},
		{"server api", server(func(c *serverConfig) { c.API = "generate" }), `--api "generate": backend vllm takes chat or completions`},

		{"workload as parsed", work(pool, func(*workloadConfig) {}), ""},
		{"workload prompt", work(pool, func(c *workloadConfig) { c.PromptTokens = -1 }), fmt.Sprintf("--prompt-tokens -1: want 0 to %d", limits.MaxTokens)},
		{"workload output", work(pool, func(c *workloadConfig) { c.MaxTokens = limits.MaxTokens + 1 }), fmt.Sprintf("--max-tokens %d: want 1 to %d", limits.MaxTokens+1, limits.MaxTokens)},
		{"workload turns", work(pool, func(c *workloadConfig) { c.Turns = 0 }), fmt.Sprintf("--turns 0: want 1 to %d", limits.MaxTurns)},
		{"workload prefix", work(pool, func(c *workloadConfig) { c.SharedPrefixTokens, c.PrefixGroups = c.PromptTokens, 1 }),
			fmt.Sprintf("--shared-prefix-tokens %d: must be less than --prompt-tokens %d, the whole prompt's length", pool.PromptTokens, pool.PromptTokens)},
		{"workload prefix groups", work(pool, func(c *workloadConfig) { c.SharedPrefixTokens, c.PrefixGroups = 8, 0 }), "--prefix-groups 0: must be at least 1"},
		{"people as parsed", work(users, func(*workloadConfig) {}), ""},
		{"people turns", work(users, func(c *workloadConfig) { c.UserProfile.Turns = workload.Length{Mean: 0, Fixed: true} }), "--turns 0: must be at least 1"},

		{"body as parsed", body(func(*requestBody) {}), ""},
		{"body top-p", body(func(c *requestBody) { p := 2.0; c.Sampling.TopP = &p }), "--top-p 2: want a value in (0, 1]"},
		{"body temperature", body(func(c *requestBody) { c.Sampling.Temperature = &neg }), "--temperature -1: want 0 or more"},
		{"body stop", body(func(c *requestBody) { c.Sampling.Stop = []string{""} }), "--stop: empty stop sequence"},

		{"load as parsed", loads(pool, func(*loadConfig) {}), ""},
		{"load requests", loads(pool, func(c *loadConfig) { c.Requests = 0 }), "--requests 0: must be at least 1"},
		{"load repeats", loads(pool, func(c *loadConfig) { c.Repeats = 0 }), fmt.Sprintf("--repeats 0: want 1 to %d", limits.MaxRepeats)},
		{"rate as parsed", loads(rate, func(*loadConfig) {}), ""},
		{"rate burstiness", loads(rate, func(c *loadConfig) { c.Burstiness = 0 }), "--burstiness 0: must be positive (1 is poisson)"},
		{"rate ramp", loads(rate, func(c *loadConfig) { c.Ramp = 0 }), "--arrival ramp needs --ramp, the ramp's length (e.g. 60s)"},
		{"rate duration", loads(rate, func(c *loadConfig) { c.Duration = -time.Second }), "--duration -1s: must be positive"},
		{"rate span", loads(rate, func(c *loadConfig) { c.Rates = []float64{1e-6} }),
			fmt.Sprintf("--rate 1e-06: %d requests would take %s, more than the %s a level may take; give a higher --rate or fewer --requests",
				rate.Requests+rate.Warmup, fmtSeconds(float64(rate.Requests+rate.Warmup)/1e-6), fmtSeconds(limits.MaxSpan.Seconds()))},
		{"people load as parsed", loads(users, func(*loadConfig) {}), ""},

		{"outputs as parsed", outputs(func(*outputConfig) {}), ""},
		{"outputs price", outputs(func(c *outputConfig) { c.PricePerHour = -1 }), "--price-per-hour -1: want a positive price in USD"},
		{"outputs two prices", outputs(func(c *outputConfig) { c.PricePerHour, c.PricePerKWh = 2, 0.3 }),
			"--price-per-hour and --price-per-kwh are alternatives (a rented GPU, or your own): give one"},
		{"outputs folder", outputs(func(c *outputConfig) { c.Records = "/no-such-folder/r.jsonl" }), "--records /no-such-folder/r.jsonl: folder /no-such-folder does not exist"},

		{"telemetry as parsed", tele(func(*telemetrySettings) {}), ""},
		{"telemetry gpu index", tele(func(c *telemetrySettings) { c.GPUIndex = -1 }), "--gpu-index -1: must not be negative"},
		{"telemetry scrape", tele(func(c *telemetrySettings) { c.ScrapeInterval = time.Millisecond }), "--scrape-interval 1ms: must be at least 10ms"},

		{"intervals as parsed", intervals(func(*intervalConfig) {}), ""},
		{"intervals confidence", intervals(func(c *intervalConfig) { c.Confidence = 0.3 }), "--confidence 0.3: want a confidence between 0.5 and 0.999, e.g. 0.95"},

		{"sim as parsed", simPart(func(*simTarget) {}), ""},
		{"sim server setting", simPart(func(c *simTarget) { c.Config.Server.MaxNumSeqs = -1 }),
			fmt.Sprintf("%v: server setting max_num_seqs -1 out of range (0 to %d)", sim.ErrBadInput, 1<<20)},
	}
	if pool.Method != load.Pool || rate.Arrival != load.Ramp || users.Method != load.Users {
		t.Fatalf("baselines: pool %s, users %s, rate arrival %s", pool.Method, users.Method, rate.Arrival)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Validate: %v (%T), want a usage error", err, err)
			}
			if got := err.Error(); got != tt.want || strings.Contains(got, "\n") {
				t.Errorf("Validate:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestConfigGivenNone checks the flags whose value 0 the configuration
// reads as none or as the default: given as 0, each is refused by the
// step that reads it with the message its part's Validate gives for a
// bad value, and named by the command.
func TestConfigGivenNone(t *testing.T) {
	base := []string{"--url", "http://127.0.0.1:8000", "--backend", "vllm", "--model", "m"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--confidence", "0"}, "run: --confidence 0: want a confidence between 0.5 and 0.999, e.g. 0.95"},
		{[]string{"--max-tokens", "0"}, fmt.Sprintf("run: --max-tokens 0: want 1 to %d", limits.MaxTokens)},
		{[]string{"--mix", "text:0.5,chat:0.5", "--max-tokens", "0"}, fmt.Sprintf("run: --max-tokens 0: want 1 to %d", limits.MaxTokens)},
		{[]string{"--prefix-groups", "0"}, "run: --prefix-groups 0: must be at least 1"},
		{[]string{"--prefix-groups", "2"}, "run: --prefix-groups needs --shared-prefix-tokens (the length of the shared prefixes)"},
		{[]string{"--price-per-kwh", "0"}, "run: --price-per-kwh 0: want a positive price in USD"},
		{[]string{"--method", "rate", "--rate", "2", "--duration", "0s"}, "run: --duration 0s: must be positive"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseRunFlags(context.Background(), append(slices.Clone(base), tt.args...), io.Discard)
			var ue *UsageError
			if !errors.As(err, &ue) || err.Error() != tt.want {
				t.Fatalf("err %v (%T), want the usage error %q", err, err, tt.want)
			}
		})
	}
}
