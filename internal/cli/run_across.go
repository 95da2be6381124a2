package cli

import (
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// The rules between the concerns of a run's configuration (server,
// workload, load, outputs, telemetry, the simulated server), in one
// place: on the flags given, before the steps that read them
// (simConflicts, loadConflicts, profileConflicts), and on the parsed
// parts once the workload and the load are known (validateAcross). A
// rule inside one concern is that part's Validate or its parse step's.

// loadConflicts refuses the flags that --users, --trace and --mix
// replace (another load, the schedule and lengths, the scenario), naming
// both, before the workload and load steps read them.
func (f *runFlags) loadConflicts(_ *runConfig, set map[string]bool) error {
	for _, rule := range []func(map[string]bool) error{f.usersConflicts, f.traceConflicts, f.mixConflicts} {
		if err := rule(set); err != nil {
			return err
		}
	}
	return nil
}

// notWithSim are run's flags about a real server, which a simulated one
// has no use for.
var notWithSim = []string{"url", "api-key", "connection", "profile", "metrics-url", "scrape-interval", "gpu-index", "server-pid"}

// simConflicts refuses the simulated server's flags without --backend
// sim, and a real server's flags with it.
func (f *runFlags) simConflicts(_ *runConfig, set map[string]bool) error {
	if strings.TrimSpace(*f.backend) != backendSim {
		for _, n := range f.sim.engine.names {
			if set[n] {
				return configf("--%s applies only to --backend sim", n)
			}
		}
		return nil
	}
	for _, n := range notWithSim {
		if set[n] {
			return configf("--%s does not apply to --backend sim (no server is measured)", n)
		}
	}
	return nil
}

// usersExcludes are the flags that choose another load than people.
var usersExcludes = []string{"concurrency", "rate", "trace", "scenario", "mix", "arrival", "max-concurrency", "repeats", "duration", "ramp", "rate-start", "burstiness"}

// usersConflicts refuses the flags that pick another load or workload
// than --users's people.
func (f *runFlags) usersConflicts(set map[string]bool) error {
	if !set["users"] {
		if set["user-profile"] {
			return configf("--user-profile applies only with --users")
		}
		if f.method != nil && *f.method == string(load.Users) {
			return configf("--method users: give --users N (the numbers of people) instead")
		}
		return nil
	}
	for _, name := range usersExcludes {
		if set[name] {
			return configf("--users and --%s do not go together (--users is the load: people who think between turns)", name)
		}
	}
	if set["method"] {
		return configf("--users and --method %s do not go together (--users is its own load method)", *f.method)
	}
	return nil
}

// traceExcludes are the flags a trace makes meaningless: it brings its
// own schedule, count and lengths.
var traceExcludes = []string{"rate", "arrival", "burstiness", "rate-start", "ramp", "duration", "requests",
	"concurrency", "repeats", "scenario", "prompt-tokens", "max-tokens", "mix",
	"turns", "followup-tokens", "think-time", "prefix-groups"}

// traceConflicts refuses the flags a trace replaces, a --method other
// than rate with it (a trace is an open-loop schedule: methodName), and
// the trace's own flags without it.
func (f *runFlags) traceConflicts(set map[string]bool) error {
	if !set["trace"] { // find refuses --trace before this (findShapeFlags)
		for _, name := range []string{"trace-format", "trace-speed", "trace-window"} {
			if set[name] {
				return configf("--%s applies only with --trace", name)
			}
		}
		return nil
	}
	for _, name := range traceExcludes {
		if set[name] {
			return configf("--%s does not apply with --trace (the trace gives the schedule, the requests and their lengths, its sessions' turns and times, and its prefix groups)", name)
		}
	}
	if set["method"] && *f.method != string(load.Rate) {
		return configf("--method %s does not apply with --trace (a trace is an open-loop schedule: --method rate)", *f.method)
	}
	return nil
}

// methodName is the load method the flags name: --method's, or rate
// with --trace (an open-loop schedule), which traceConflicts allows with
// no other --method. No step rewrites the flag for the steps after it.
func (f *runFlags) methodName(set map[string]bool) string {
	if set["trace"] {
		return string(load.Rate)
	}
	return *f.method
}

// mixConflicts refuses the flags a mix's classes replace, and a mix
// under --method batch.
func (f *runFlags) mixConflicts(set map[string]bool) error {
	if !set["mix"] {
		return nil
	}
	for _, name := range []string{"scenario", "prompt-tokens"} {
		if set[name] {
			return configf("--%s does not apply with --mix (each class takes its scenario's prompt)", name)
		}
	}
	if f.method != nil && *f.method == string(load.Batch) { // find has no --method
		return configf("--mix does not apply to --method batch (its records compare one workload at a time); use pool or rate")
	}
	return nil
}

// profileConflicts refuses the flags a --profile names: its server, model
// and label.
func profileConflicts(_ *runConfig, set map[string]bool) error {
	if !set["profile"] {
		return nil
	}
	for _, n := range []string{"backend", "url", "model", "label"} {
		if set[n] {
			return configf("--%s cannot be combined with --profile (each profile names its server, model and label)", n)
		}
	}
	return nil
}

// acrossStep is validateAcross as a step of (*runFlags).config.
func (cfg *runConfig) acrossStep(map[string]bool) error { return cfg.validateAcross() }

// validateAcross checks the rules between parsed parts: a request API
// that cannot carry the workload's images (the scenario's, a mix
// class's, a trace row's), and sessions under a method that has none.
func (cfg *runConfig) validateAcross() error {
	if cfg.API == backend.Completions {
		switch {
		case cfg.Scenario == workload.Image:
			return configf("--api completions cannot carry images; use --api chat with --scenario image")
		case hasImages(cfg.Mix):
			return configf("--mix has an image class but --api completions cannot carry images; use --api chat")
		}
		if n := traceImageRows(cfg.Trace); n > 0 {
			return configf("--trace: %d rows carry images but --api completions cannot; use --api chat", n)
		}
	}
	if cfg.Scenario == workload.Multiturn && cfg.Method == load.Batch {
		return configf("--scenario multiturn runs under --method pool or rate, not batch")
	}
	return nil
}
