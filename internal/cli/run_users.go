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

// usersConfig reads --users and --user-profile into cfg (the load, and
// the people's profile in the workload), with the profile's lengths
// overridden by --turns, --prompt-tokens, --followup-tokens and
// --max-tokens, and its think times by --think-time; loadConflicts
// (run_across.go) refuses the flags of another load.
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
	for _, o := range []struct {
		name string
		v    int
		l    *workload.Length
	}{
		{"turns", *sf.turns, &p.Turns}, {"prompt-tokens", *f.promptTokens, &p.First},
		{"followup-tokens", *sf.followupTokens, &p.Message}, {"max-tokens", *f.maxTokens, &p.Answer},
	} {
		if set[o.name] {
			*o.l = workload.Length{Mean: float64(o.v), Fixed: true}
		}
	}
	cfg.UserProfile = p
	if err := cfg.validateProfile(); err != nil {
		return err
	}
	if set["think-time"] {
		if cfg.Think, err = load.ParseThinkTime(*sf.thinkTime); err != nil {
			return configf("--think-time: %v", err)
		}
	}
	cfg.Method, cfg.Users, cfg.Concurrency = load.Users, levels, nil
	cfg.PromptTokens, cfg.MaxTokens = int(math.Round(p.First.Mean)), int(math.Round(p.Answer.Mean))
	if !set["requests"] {
		cfg.Requests = defaultUserTurns
	}
	return nil
}

// validateProfile checks the lengths the flags fixed in the people's
// profile (none without --users): each at least 1.
func (c workloadConfig) validateProfile() error {
	p := c.UserProfile
	for _, o := range []struct {
		name string
		l    workload.Length
	}{{"turns", p.Turns}, {"prompt-tokens", p.First}, {"followup-tokens", p.Message}, {"max-tokens", p.Answer}} {
		if o.l.Fixed && o.l.Mean < 1 {
			return configf("--%s %d: must be at least 1", o.name, int(o.l.Mean))
		}
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
