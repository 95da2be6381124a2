package workload

import (
	"context"
	"fmt"
	"math"

	"github.com/servebench/servebench/backend"
)

// sharedPrefixes are the shared system prompts of a run (Spec.
// SharedPrefixTokens, Spec.PrefixGroups): one text per group, and where
// they go in a request.
type sharedPrefixes struct {
	// texts holds each group's prefix; empty when the run has none.
	texts []string
	// inUserMessage sends the prefix at the start of the first user
	// message instead of as a system message: the server's chat template
	// drops system messages (the Ollama testbed's model has a bare
	// {{ .Prompt }} template).
	inUserMessage bool
	// cost is the prompt tokens the server counts for the prefix, its
	// template included, measured by probes.
	cost int
	// inProbes makes probe requests carry group 0's prefix, so that the
	// Calibrated fit measures whole prompts, prefix included.
	inProbes bool
	// userCost is what the user text's target leaves for the prefix:
	// cost in Exact mode, 0 in Calibrated mode (whose fit includes the
	// prefix).
	userCost int
}

func (p *sharedPrefixes) on() bool { return len(p.texts) > 0 }

// group is the prefix group of request (or session) i.
func (p *sharedPrefixes) group(i int) int { return mod(i, len(p.texts)) }

// apply puts group g's prefix into rq: as a system message before any
// history, or at the start of the user's text.
func (p *sharedPrefixes) apply(rq *backend.Request, g int) {
	if p.inUserMessage {
		rq.Prompt = p.texts[g] + backend.PromptSeparator + rq.Prompt
		return
	}
	rq.History = append([]backend.Message{{Role: backend.System, Content: p.texts[g]}}, rq.History...)
}

// prefixSeq numbers the word streams of prefix texts apart from every
// request's (requests count up from 0, probes from probeSeq).
func prefixSeq(g int) int { return -1 - g }

// MinUserTokens is the shortest user text, in tokens, a prompt keeps
// beside its shared prefix.
const MinUserTokens = 4

// calibratePrefix builds the shared prefixes and measures what the server
// counts for them, with probes of one output token: the same user text
// with and without group 0's prefix as a system message. A server whose
// template drops system messages counts less than half the prefix's
// tokens for it; the prefix then goes at the start of the user message
// and is measured again. The run's notes say what was found.
func (b *Builder) calibratePrefix(ctx context.Context) error {
	k := b.spec.SharedPrefixTokens
	if k <= 0 {
		return nil
	}
	groups := max(b.spec.PrefixGroups, 1)
	b.prefix.texts = make([]string, groups)
	for g := range groups {
		text, err := b.prefixText(ctx, g, k)
		if err != nil {
			return err
		}
		b.prefix.texts[g] = text
	}
	if err := b.measurePrefix(ctx, k); err != nil {
		if b.mode != Unenforced {
			return err
		}
		b.notes = append(b.notes, fmt.Sprintf("shared prefix: not measured (%v); it is sent as a system message of about %d tokens", err, k))
		return nil
	}
	b.prefix.userCost = b.prefix.cost
	if b.mode == Calibrated {
		// Fit the user text's length again, on probes that carry the
		// prefix: the whole prompt is what must reach the target.
		b.prefix.inProbes, b.prefix.userCost = true, 0
		if err := b.calibrateProbes(ctx); err != nil {
			return err
		}
	}
	if b.mode != Unenforced && b.spec.PromptTokens-b.prefix.cost < MinUserTokens {
		return fmt.Errorf("--prompt-tokens %d leaves no room for a user message beside the %d-token shared prefix, which this server counts as %d prompt tokens (want --prompt-tokens at least %d)",
			b.spec.PromptTokens, k, b.prefix.cost, b.prefix.cost+MinUserTokens)
	}
	where := "a system message"
	if b.prefix.inUserMessage {
		where = "the start of the first user message"
	}
	b.notes = append(b.notes, fmt.Sprintf("shared prefix: %d group(s) of %d tokens (%s length), sent as %s; the server counts %d prompt tokens for it, template included",
		groups, k, b.mode, where, b.prefix.cost))
	return nil
}

// prefixText is group g's prefix, k tokens long by the length mode:
// exact with the tokenizer, by the calibrated tokens per character, or at
// four characters a token.
func (b *Builder) prefixText(ctx context.Context, g, k int) (string, error) {
	switch b.mode {
	case Exact:
		return b.exactText(ctx, prefixSeq(g), k)
	case Calibrated:
		return b.prompts.Text(prefixSeq(g), max(int(math.Round(float64(k)/b.slope)), 1)), nil
	}
	return b.prompts.Text(prefixSeq(g), k*4), nil
}

// prefixProbeChars is the user text of the prefix probes.
const prefixProbeChars = 64

// measurePrefix sets the prefix's placement and cost (see calibratePrefix).
func (b *Builder) measurePrefix(ctx context.Context, k int) error {
	user := b.prompts.Text(probeSeq+16, prefixProbeChars)
	plain, err := b.probeRequest(ctx, &backend.Request{Prompt: user})
	if err != nil {
		return fmt.Errorf("shared prefix probe: %w", err)
	}
	with := func() (int, error) {
		rq := backend.Request{Prompt: user}
		b.prefix.apply(&rq, 0)
		return b.probeRequest(ctx, &rq)
	}
	n, err := with()
	if err != nil {
		return fmt.Errorf("shared prefix probe: %w", err)
	}
	if 2*(n-plain) < k {
		b.notes = append(b.notes, fmt.Sprintf("shared prefix: the server counted %d tokens for a %d-token system prompt (its chat template drops system messages); the prefix is sent at the start of the first user message instead", n-plain, k))
		b.prefix.inUserMessage = true
		if n, err = with(); err != nil {
			return fmt.Errorf("shared prefix probe: %w", err)
		}
	}
	b.prefix.cost = n - plain
	return nil
}
