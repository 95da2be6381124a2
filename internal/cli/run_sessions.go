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

// sessionsConfig reads the session and shared-prefix flags into w, in
// the workload step: --turns, --followup-tokens and --think-time belong
// to --scenario multiturn (with --users, usersConfig reads them into the
// people's profile); --prefix-groups needs --shared-prefix-tokens. Their
// values are validateSessions's.
func (f *runFlags) sessionsConfig(w *workloadConfig, set map[string]bool) error {
	sf := f.sessions
	if err := f.prefixConfig(w, set); err != nil {
		return err
	}
	if set["users"] {
		return nil // usersConfig reads them into the people's profile
	}
	if w.Scenario != workload.Multiturn {
		if set["turns"] || set["think-time"] || set["followup-tokens"] {
			return configf("--turns, --followup-tokens and --think-time apply only to --scenario multiturn")
		}
		return nil
	}
	think, err := load.ParseThinkTime(*sf.thinkTime)
	if err != nil {
		return configf("--think-time: %v", err)
	}
	w.Turns, w.FollowupTokens, w.Think = *sf.turns, *sf.followupTokens, think
	return nil
}

// prefixConfig reads the shared-prefix flags into w and checks them
// (validatePrefix): --prefix-groups needs --shared-prefix-tokens, and
// without a shared prefix there are no groups (0).
func (f *runFlags) prefixConfig(w *workloadConfig, set map[string]bool) error {
	sf := f.sessions
	w.SharedPrefixTokens, w.PrefixGroups = *sf.sharedPrefixTokens, *sf.prefixGroups
	if err := w.validatePrefix(); err != nil {
		return err
	}
	if w.SharedPrefixTokens == 0 {
		if set["prefix-groups"] {
			if w.PrefixGroups < 1 {
				return badPrefixGroups(w.PrefixGroups)
			}
			return configf("--prefix-groups needs --shared-prefix-tokens (the length of the shared prefixes)")
		}
		w.PrefixGroups = 0
	}
	return nil
}

// validateSessions checks a multi-turn run's turns and follow-up length
// and the shared prefixes (validatePrefix).
func (c workloadConfig) validateSessions() error {
	switch {
	case c.Scenario == workload.Multiturn && (c.Turns < 1 || c.Turns > limits.MaxTurns):
		return configf("--turns %d: want 1 to %d", c.Turns, limits.MaxTurns)
	case c.FollowupTokens < 0:
		return configf("--followup-tokens %d: must not be negative", c.FollowupTokens)
	}
	return c.validatePrefix()
}

// validatePrefix checks the shared prefixes, which must leave room in
// the scenario's prompt. A trace's rows and a mix's classes have prompts
// of their own lengths: traceGroups checks the trace's, each class's
// Builder its own.
func (c workloadConfig) validatePrefix() error {
	switch {
	case c.SharedPrefixTokens < 0:
		return configf("--shared-prefix-tokens %d: must not be negative", c.SharedPrefixTokens)
	case c.PrefixGroups < 0 || c.SharedPrefixTokens > 0 && c.PrefixGroups < 1:
		return badPrefixGroups(c.PrefixGroups)
	case c.SharedPrefixTokens > 0 && c.PromptTokens > 0 && c.SharedPrefixTokens >= c.PromptTokens && c.Trace == nil && c.Mix == nil:
		return configf("--shared-prefix-tokens %d: must be less than --prompt-tokens %d, the whole prompt's length", c.SharedPrefixTokens, c.PromptTokens)
	}
	return nil
}

// badPrefixGroups is the usage error for a --prefix-groups value.
func badPrefixGroups(n int) error {
	return configf("--prefix-groups %d: must be at least 1", n)
}
