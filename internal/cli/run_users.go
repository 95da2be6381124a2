package cli

import (
	"flag"
	"fmt"
	"math"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// `servebench run --users N`: a model of people (load's users method,
// workload's profiles). --turns, --think-time and the length flags
// override the profile.

// usersFlags are the raw values of the people flags.
type usersFlags struct {
	users, profile *string
}

// defineUsersFlags adds the people flags.
func defineUsersFlags(fs *flag.FlagSet) usersFlags {
	return usersFlags{
		users:   fs.String("users", "", "comma-separated numbers of people, one level each, e.g. 5,10,20: each person sends the conversation so far, reads the answer, thinks, sends the next turn; a finished conversation's person is replaced at once (docs/users.md). Replaces --concurrency, --rate and --method"),
		profile: fs.String("user-profile", string(workload.ChatProfile), "what the --users people send and how long they think: chat, rag, code or agent (docs/users.md gives each figure's source)"),
	}
}

// usersExcludes are the flags that choose another load than people.
var usersExcludes = []string{"concurrency", "rate", "trace", "scenario", "mix", "arrival", "max-concurrency", "repeats", "duration", "ramp", "rate-start", "burstiness"}

// usersConflicts rejects, before the other steps read them, the flags
// that pick another load than --users, naming both.
func (f *runFlags) usersConflicts(_ *runConfig, set map[string]bool) error {
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

// usersConfig reads --users and --user-profile into cfg, with the
// profile's lengths overridden by --turns, --prompt-tokens,
// --followup-tokens and --max-tokens, and its think times by
// --think-time.
func (f *runFlags) usersConfig(cfg *runConfig, set map[string]bool) error {
	if !set["users"] {
		return nil
	}
	levels, err := parseLevels(*f.people.users)
	if err != nil {
		return configf("--users: %v", err)
	}
	p, err := workload.LookupProfile(*f.people.profile)
	if err != nil {
		return configf("--user-profile: %v", err)
	}
	sf := f.sessions
	fixed := func(name string, v int, min int, l *workload.Length) error {
		if !set[name] {
			return nil
		}
		if v < min {
			return configf("--%s %d: must be at least %d", name, v, min)
		}
		*l = workload.Length{Mean: float64(v), Fixed: true}
		return nil
	}
	for _, o := range []struct {
		name string
		v    int
		l    *workload.Length
	}{
		{"turns", *sf.turns, &p.Turns}, {"prompt-tokens", *f.promptTokens, &p.First},
		{"followup-tokens", *sf.followupTokens, &p.Message}, {"max-tokens", *f.maxTokens, &p.Answer},
	} {
		if err := fixed(o.name, o.v, 1, o.l); err != nil {
			return err
		}
	}
	if set["think-time"] {
		if cfg.Think, err = load.ParseThinkTime(*sf.thinkTime); err != nil {
			return configf("--think-time: %v", err)
		}
	}
	cfg.Method, cfg.Users, cfg.UserProfile, cfg.Concurrency = load.Users, levels, p, nil
	cfg.PromptTokens, cfg.MaxTokens = int(math.Round(p.First.Mean)), int(math.Round(p.Answer.Mean))
	if !set["requests"] {
		cfg.Requests = defaultUserTurns
	}
	return nil
}

// defaultUserTurns is the counted turns of a users level: the requests
// a two-sided 95% interval of a p95 needs (docs/metrics.md).
const defaultUserTurns = 72

// overflowNote warns, for people on a simulated server, when a sequence
// (vLLM's and SGLang's max_model_len) or a slot (llama.cpp's -c over its
// slots, Ollama's num_ctx) holds fewer tokens than the profile's p95
// conversation: the turns that outgrow it are refused (HTTP 400) and
// count as errors, which a latency SLO does not judge. llama.cpp's
// --context is the total over --parallel slots (4 by default), so
// --context 4096 leaves 1024 tokens a slot.
func (f *runFlags) overflowNote(cfg *runConfig, _ map[string]bool) error {
	if cfg.Sim == nil || cfg.Method != load.Users {
		return nil
	}
	s, fam := cfg.Sim.Config.Server, cfg.Sim.Config.Backend
	held := cfg.UserProfile.HeldTokensP95(cfg.Seed)
	what, limit, fix := "a sequence", s.MaxModelLen, held
	if s.SlotContext > 0 {
		what, limit = "a slot", s.SlotContext
		if fam == backend.LlamaCpp {
			what, fix = fmt.Sprintf("a slot (--context over %d slots)", s.Slots), held*s.Slots
		}
	}
	if limit <= 0 || limit >= held {
		return nil
	}
	cfg.ServerNotes = append(cfg.ServerNotes, fmt.Sprintf("%s of the simulated %s holds %d tokens, fewer than the %d a %s conversation holds at its p95: the turns past it are refused (HTTP 400) and counted as errors, which the latency SLO does not judge; --context %d holds it",
		what, fam.Name(), limit, held, cfg.UserProfile.Name, fix))
	return nil
}
