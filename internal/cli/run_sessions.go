package cli

import (
	"flag"

	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// `servebench run`'s sessions and shared prefixes: multi-turn
// sessions (--scenario multiturn, --turns, --followup-tokens,
// --think-time) and shared system prompts (--shared-prefix-tokens,
// --prefix-groups).

// sessionFlags are the raw values of run's session and shared-prefix
// flags.
type sessionFlags struct {
	turns, followupTokens            *int
	sharedPrefixTokens, prefixGroups *int
	thinkTime                        *string
}

// defineSessionFlags adds the session and shared-prefix flags to run's
// flags.
func defineSessionFlags(fs *flag.FlagSet) sessionFlags {
	return sessionFlags{
		turns:              fs.Int("turns", 4, "turns per session (multiturn): each sends the conversation so far and a new message; a level runs ⌈requests/turns⌉ sessions, --concurrency of them in flight (pool) or --rate of them started per second (rate)"),
		followupTokens:     fs.Int("followup-tokens", 0, "tokens of each later turn's new user message (multiturn; default: as long as the first turn's own text)"),
		thinkTime:          fs.String("think-time", "const:0s", "pause between a session's answer and its next turn (multiturn): const:1s, exp:2s (exponential, mean 2 s) or uniform:0.5s-3s, seeded by --seed"),
		sharedPrefixTokens: fs.Int("shared-prefix-tokens", 0, "a system prompt of this many tokens shared by all requests (exact with the server's tokenizer, calibrated elsewhere); --prompt-tokens stays the whole prompt's length"),
		prefixGroups:       fs.Int("prefix-groups", 1, "number of different shared prefixes (with --shared-prefix-tokens); request (or session) i uses prefix i mod groups"),
	}
}

// sessionsConfig checks the session and shared-prefix flags into cfg:
// --turns, --followup-tokens and --think-time belong to --scenario
// multiturn, which runs under the pool or rate method; --prefix-groups
// needs --shared-prefix-tokens, which must leave room in --prompt-tokens.
func (f *runFlags) sessionsConfig(cfg *runConfig, set map[string]bool) error {
	sf := f.sessions
	if err := f.prefixConfig(cfg, set); err != nil {
		return err
	}
	if set["users"] {
		return nil // usersConfig reads them into the people's profile
	}
	if cfg.Scenario != workload.Multiturn {
		if set["turns"] || set["think-time"] || set["followup-tokens"] {
			return configf("--turns, --followup-tokens and --think-time apply only to --scenario multiturn")
		}
		return nil
	}
	if err := checkTurns(*sf.turns); err != nil {
		return err
	}
	if *sf.followupTokens < 0 {
		return configf("--followup-tokens %d: must not be negative", *sf.followupTokens)
	}
	think, err := load.ParseThinkTime(*sf.thinkTime)
	if err != nil {
		return configf("--think-time: %v", err)
	}
	if f.method != nil && *f.method == string(load.Batch) { // find has no --method
		return configf("--scenario multiturn runs under --method pool or rate, not batch")
	}
	cfg.Turns, cfg.FollowupTokens, cfg.Think = *sf.turns, *sf.followupTokens, think
	return nil
}

// prefixConfig checks the shared-prefix flags into cfg: --prefix-groups
// needs --shared-prefix-tokens, which must leave room in --prompt-tokens.
func (f *runFlags) prefixConfig(cfg *runConfig, set map[string]bool) error {
	sf := f.sessions
	cfg.SharedPrefixTokens, cfg.PrefixGroups = *sf.sharedPrefixTokens, *sf.prefixGroups
	switch {
	case cfg.SharedPrefixTokens < 0:
		return configf("--shared-prefix-tokens %d: must not be negative", cfg.SharedPrefixTokens)
	case cfg.PrefixGroups < 1:
		return configf("--prefix-groups %d: must be at least 1", cfg.PrefixGroups)
	case set["prefix-groups"] && cfg.SharedPrefixTokens == 0:
		return configf("--prefix-groups needs --shared-prefix-tokens (the length of the shared prefixes)")
	case cfg.SharedPrefixTokens > 0 && cfg.PromptTokens > 0 && cfg.SharedPrefixTokens >= cfg.PromptTokens && !set["trace"] && !set["mix"]:
		// A trace's rows and a mix's classes have prompts of their own
		// lengths: traceConfig checks the trace's, each class's Builder
		// its own.
		return configf("--shared-prefix-tokens %d: must be less than --prompt-tokens %d, the whole prompt's length", cfg.SharedPrefixTokens, cfg.PromptTokens)
	}
	if cfg.SharedPrefixTokens == 0 {
		cfg.PrefixGroups = 0
	}
	return nil
}

// checkTurns bounds --turns (limits.MaxTurns): every turn resends the
// conversation so far.
func checkTurns(n int) error {
	if n < 1 || n > limits.MaxTurns {
		return configf("--turns %d: want 1 to %d", n, limits.MaxTurns)
	}
	return nil
}
