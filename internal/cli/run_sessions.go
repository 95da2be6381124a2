package cli

import (
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// sessions checks the flags of sessions and shared prefixes (issue 14)
// into cfg: --turns and --think-time belong to --scenario multiturn, which
// runs under the pool or rate method; --prefix-groups needs
// --shared-prefix-tokens.
func (f *runFlags) sessions(cfg *runConfig, set map[string]bool) error {
	cfg.SharedPrefixTokens, cfg.PrefixGroups = *f.sharedPrefixTokens, *f.prefixGroups
	switch {
	case cfg.SharedPrefixTokens < 0:
		return usagef("run: --shared-prefix-tokens %d: must not be negative", cfg.SharedPrefixTokens)
	case cfg.PrefixGroups < 1:
		return usagef("run: --prefix-groups %d: must be at least 1", cfg.PrefixGroups)
	case set["prefix-groups"] && cfg.SharedPrefixTokens == 0:
		return usagef("run: --prefix-groups needs --shared-prefix-tokens (the length of the shared prefixes)")
	case cfg.SharedPrefixTokens > 0 && cfg.PromptTokens > 0 && cfg.SharedPrefixTokens >= cfg.PromptTokens:
		return usagef("run: --shared-prefix-tokens %d: must be less than --prompt-tokens %d, the whole prompt's length", cfg.SharedPrefixTokens, cfg.PromptTokens)
	}
	if cfg.SharedPrefixTokens == 0 {
		cfg.PrefixGroups = 0
	}
	if cfg.Scenario != workload.Multiturn {
		if set["turns"] || set["think-time"] || set["followup-tokens"] {
			return usagef("run: --turns, --followup-tokens and --think-time apply only to --scenario multiturn")
		}
		return nil
	}
	if *f.turns < 1 {
		return usagef("run: --turns %d: must be at least 1", *f.turns)
	}
	if *f.followupTokens < 0 {
		return usagef("run: --followup-tokens %d: must not be negative", *f.followupTokens)
	}
	cfg.FollowupTokens = *f.followupTokens
	think, err := load.ParseThinkTime(*f.thinkTime)
	if err != nil {
		return usagef("run: --think-time: %v", err)
	}
	if *f.method == string(load.Batch) {
		return usagef("run: --scenario multiturn runs under --method pool or rate, not batch")
	}
	cfg.Turns, cfg.Think = *f.turns, think
	return nil
}
