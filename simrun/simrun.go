// Package simrun is `servebench run --backend sim`: the engine of package
// sim behind load's Client and Clock, in virtual time (sim.Virtual), so
// that a whole sweep — every method, level, warm-up, mix, trace, session
// and model of people that run supports — is predicted in seconds by the
// same code that measures a real server.
//
// # Design: one definition of each load method
//
// The load methods (pool, batch, rate with its arrival laws, warm-up,
// mixes, traces, sessions, users) are defined once, in package load, and
// the virtual clock that drives them on the engine once, in package sim
// (sim.Virtual, whose doc says how virtual time moves). The engine-only
// levels that fitting and planning simulate (sim.RunLevel) go through the
// same two. What simrun adds is how a run's HTTP-level request becomes an
// engine request: its prompt counted with sim serve's tokenizer (chat
// template included under --api chat), a shared system prompt as a prefix
// group, and a conversation's earlier turns as its cached history.
package simrun

import (
	"hash/fnv"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
)

// Options configure a simulated server.
type Options struct {
	// Seed draws the clients' send delays.
	Seed int64
	// Jitter is the mean send delay (0: sim.DefaultJitter; negative:
	// none).
	Jitter time.Duration
	// Chat says prompts go through a chat template (run's --api chat):
	// they then count the template's tokens, as sim serve does.
	Chat bool
	// Timeout fails a request not finished this long after it was
	// written (run's --timeout; 0: none), as a real client's would.
	Timeout time.Duration
	// Base is the clock time the server starts at (zero:
	// sim.VirtualBase): a fresh server for each level of a sweep carries
	// on the sweep's timeline (sim.VirtualOptions.Base).
	Base time.Time
}

// New returns a simulated server on an engine for cfg, at virtual time
// zero: its Clock, Client and Observer for a load.Sweep. The calling
// goroutine holds its first token (sim.Virtual): it is the goroutine that
// then runs the sweep (calibration probes included).
func New(cfg sim.Config, opt Options) (*sim.Virtual, error) {
	eng, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	sh := shaper{chat: opt.Chat, tokens: &sim.TokenCounter{}}
	return sim.NewVirtual(eng, sim.VirtualOptions{Seed: opt.Seed, Jitter: opt.Jitter, Timeout: opt.Timeout, Shape: sh.shape, Base: opt.Base}), nil
}

// shaper turns a run's requests into engine requests; tokens counts
// their texts (sim serve's tokenizer, a conversation's earlier messages
// remembered from its earlier turns).
type shaper struct {
	chat   bool
	tokens *sim.TokenCounter
}

// shape is req as the engine sees it: its conversation's tokens, its
// output tokens and images, its shared prefix and its conversation.
func (sh shaper) shape(req *backend.Request, res *record.Result) sim.Request {
	history := make([]string, len(req.History))
	for i, m := range req.History {
		history[i] = m.Content
	}
	// The history is counted once: the prompt's tokens are the history's
	// (with the template of an empty last message) and the last message's
	// own (ConversationTokens adds them so).
	historyTokens := sh.tokens.ConversationTokens(history, "", sh.chat)
	r := sim.Request{PromptTokens: max(historyTokens+sh.tokens.Count(req.Prompt), 1), OutputTokens: req.MaxTokens, Images: len(req.Images)}
	r.PrefixGroup, r.SharedPrefixTokens = sh.sharedPrefix(req)
	r.Conversation, r.HistoryTokens = sh.conversation(req, res, historyTokens)
	return r
}

// sharedPrefix names the prefix req shares with other requests, for the
// engine's prefix caching: a shared system prompt (run
// --shared-prefix-tokens, a trace's prefix groups) is a group keyed by its
// text, its tokens (template included) the shared length; 0, 0 for none.
// A conversation's earlier turns are its own cached prefix (conversation).
func (sh shaper) sharedPrefix(req *backend.Request) (group, tokens int) {
	if len(req.History) == 0 || req.History[0].Role != backend.System {
		return 0, 0
	}
	sys := req.History[0].Content
	h := fnv.New32a()
	h.Write([]byte(sys))
	group = int(h.Sum32()&0x7fffffff) | 1
	// The system message with its template tokens, as the conversation's
	// count has it.
	return group, sim.ConversationTokens([]string{sys}, "", sh.chat) - sim.ConversationTokens(nil, "", sh.chat)
}

// conversation names the conversation a session's turn belongs to and
// the tokens of its history (the earlier turns' messages and answers, the
// system prompt included, template tokens as the conversation's count
// has them), for the engine's prefix and slot caches: the session's
// number + 1 (0 outside sessions), and 0 tokens for a first turn.
// counted is the history's count, ConversationTokens(history, "", chat).
func (sh shaper) conversation(req *backend.Request, res *record.Result, counted int) (conv, historyTokens int) {
	if res.Session == nil {
		return 0, 0
	}
	conv = *res.Session + 1
	if len(req.History) > 0 && req.History[len(req.History)-1].Role == backend.Assistant {
		historyTokens = counted
	}
	return conv, historyTokens
}
