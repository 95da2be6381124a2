package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/trace"
)

// LengthMode is how a Builder reaches the target prompt length.
type LengthMode string

// Length modes.
const (
	// Exact builds each prompt to exactly the target count with the
	// server's tokenizer (Client.Tokenize: vLLM, llama.cpp), after
	// measuring the chat template's overhead with a probe request.
	Exact LengthMode = "exact"
	// Calibrated scales prompt length in characters by the tokens per
	// character the server reported for probe requests (the server has no
	// tokenizer endpoint: Ollama, SGLang, TGI, generic OpenAI).
	Calibrated LengthMode = "calibrated"
	// Unenforced does not control the length (image scenario: the image's
	// tokens depend on the model; or no target).
	Unenforced LengthMode = "unenforced"
)

// Spec describes the requests of a run.
type Spec struct {
	// Scenario picks the number of images per request.
	Scenario Scenario
	// PromptTokens is the target prompt length as the server counts it;
	// 0 sends prompts of unmeasured length.
	PromptTokens int
	// MaxTokens is the number of output tokens every request asks for.
	MaxTokens int
	// Seed makes prompts and images deterministic.
	Seed int64
	// ImageWidth, ImageHeight and ImageFormat describe generated images.
	ImageWidth, ImageHeight int
	ImageFormat             ImageFormat

	// Shared prefixes and sessions.

	// SharedPrefixTokens is the length of a system prompt every request
	// begins with, in tokens of its own text (exact with the server's
	// tokenizer, calibrated elsewhere); 0 means none. PromptTokens stays
	// the whole prompt's length, prefix included.
	SharedPrefixTokens int
	// PrefixGroups is the number of different shared prefixes; request seq
	// (or session id) uses prefix seq mod PrefixGroups. 0 means 1.
	PrefixGroups int
	// Turns is the number of turns of each session (Sessions); the
	// Multiturn scenario's requests are sessions' turns.
	Turns int
	// FollowupTokens is the length of each later turn's new user message,
	// in tokens of its own text; 0 makes it as long as the first turn's.
	FollowupTokens int
}

// Item is one prepared request and the prompt length it aims at.
type Item struct {
	Request backend.Request
	// ExpectedPromptTokens is the server-counted prompt length aimed at,
	// 0 when the length is not enforced.
	ExpectedPromptTokens int
	// Class is the request class of a mix (the scenario drawn for it);
	// empty outside a mix. It is copied into record.Result.Class.
	Class string
	// Due is when a replayed trace sends the request, from the level's
	// start (after --trace-window and --trace-speed); zero outside a
	// trace. load's Trace arrival paces by it.
	Due time.Duration
	// Trace is the trace row the request replays; nil outside a trace.
	Trace *trace.Row

	// PrefixGroup is the shared prefix the request begins with; nil when
	// it has none.
	PrefixGroup *int
	// Session and Turn place the request in a multi-turn session: the
	// session's number and the turn, from 1. Session is nil outside
	// sessions.
	Session *int
	Turn    int
}

// Builder prepares requests to a Spec for one server.
type Builder struct {
	spec    Spec
	client  backend.Client
	prompts *Prompts
	mode    LengthMode
	// overhead is the server's prompt tokens beyond the text's own
	// (chat template, BOS), measured by a probe.
	overhead int
	// fixed and perChar model the server's prompt tokens as
	// fixed + perChar × characters (Calibrated mode).
	fixed, perChar float64
	// slope is the tokens per character over the probes' whole range
	// (64 to 256 characters), before the secant steps make the model
	// exact at the target only: the shared prefix's length comes from it.
	slope float64
	notes []string
	// prefix is the run's shared prefixes (prefix.go); empty without.
	prefix sharedPrefixes
}

// probeSeq is the first request number used for probes, far from any real
// request so probes never share a prompt with one.
const probeSeq = 1 << 30

// NewBuilder returns a Builder for spec; call Calibrate before Items.
func NewBuilder(spec Spec, client backend.Client) *Builder {
	return &Builder{spec: spec, client: client, prompts: NewPrompts(spec.Seed), mode: Unenforced, perChar: 0.25, slope: 0.25}
}

// Mode is the length mode Calibrate chose.
func (b *Builder) Mode() LengthMode { return b.mode }

// Notes are findings of the calibration for the run's warnings (a server
// that reported no prompt tokens, a tokenizer that failed).
func (b *Builder) Notes() []string { return b.notes }

// Calibrate decides how to reach the target prompt length and measures
// what it needs with probe requests of one output token: the template
// overhead (Exact), or tokens per character (Calibrated; three probes, a
// linear fit refined by a secant step at the target); then it builds the
// shared prefixes and measures what they cost (calibratePrefix). An error
// means the server could not answer a probe at all.
func (b *Builder) Calibrate(ctx context.Context) error {
	if err := b.calibrateLength(ctx); err != nil {
		return err
	}
	return b.calibratePrefix(ctx)
}

// calibrateLength decides how to reach the target prompt length (see
// Calibrate).
func (b *Builder) calibrateLength(ctx context.Context) error {
	if b.spec.PromptTokens <= 0 || b.spec.Scenario == Image {
		b.mode = Unenforced
		return nil
	}
	n, err := b.client.Tokenize(ctx, b.prompts.Text(probeSeq, 64))
	switch {
	case err == nil && n > 0:
		return b.calibrateExact(ctx)
	case err != nil && !errors.Is(err, backend.ErrUnsupported):
		b.notes = append(b.notes, fmt.Sprintf("tokenizer endpoint failed (%v); prompt length calibrated from probe requests instead", err))
	}
	return b.calibrateProbes(ctx)
}

func (b *Builder) calibrateExact(ctx context.Context) error {
	text := b.prompts.Text(probeSeq, 256)
	own, err := b.client.Tokenize(ctx, text)
	if err != nil {
		return fmt.Errorf("tokenize probe: %w", err)
	}
	got, err := b.probe(ctx, probeSeq, 256)
	if err != nil {
		return err
	}
	b.mode = Exact
	b.overhead = max(got-own, 0)
	// Tokens per character of this text, for prompts built from blocks
	// (trace replay's shared prefixes), whose length is modelled.
	b.perChar = float64(own) / float64(len(text))
	b.fixed = float64(b.overhead)
	return nil
}

func (b *Builder) calibrateProbes(ctx context.Context) error {
	b.mode = Calibrated
	c1, c2 := 64, 256
	p1, err := b.probe(ctx, probeSeq+1, c1)
	if err != nil {
		return err
	}
	p2, err := b.probe(ctx, probeSeq+2, c2)
	if err != nil {
		return err
	}
	if p2 <= p1 {
		b.notes = append(b.notes, fmt.Sprintf("probe prompts of %d and %d characters reported %d and %d prompt tokens; assuming 4 characters per token", c1, c2, p1, p2))
		b.fixed, b.perChar, b.slope = float64(p1)-float64(c1)/4, 0.25, 0.25
		return nil
	}
	b.fit(c1, p1, c2, p2)
	b.slope = b.perChar
	// Secant steps at the target itself, so the model is exact where it is
	// used even when tokens are not linear in characters.
	for i := range calibrationSteps {
		c3 := b.chars()
		if c3 == c2 {
			return nil
		}
		p3, err := b.probe(ctx, probeSeq+3+i, c3)
		if err != nil {
			return err
		}
		if p3 == b.spec.PromptTokens || p3 == p2 {
			b.fixed = float64(p3) - b.perChar*float64(c3)
			return nil
		}
		b.fit(c2, p2, c3, p3)
		c2, p2 = c3, p3
	}
	return nil
}

// calibrationSteps bounds the secant probes of the Calibrated mode.
const calibrationSteps = 3

// fit sets the linear model through (c1, p1) and (c2, p2), keeping a
// positive slope.
func (b *Builder) fit(c1, p1, c2, p2 int) {
	if c1 == c2 || (p2-p1)*(c2-c1) <= 0 {
		b.fixed = float64(p2) - b.perChar*float64(c2)
		return
	}
	b.perChar = float64(p2-p1) / float64(c2-c1)
	b.fixed = float64(p1) - b.perChar*float64(c1)
}

// chars is the character count the Calibrated model maps to the target.
func (b *Builder) chars() int { return b.charsFor(b.spec.PromptTokens) }

// charsFor is the character count the Calibrated model maps to a prompt
// of tokens tokens.
func (b *Builder) charsFor(tokens int) int {
	return max(int(math.Round((float64(tokens)-b.fixed)/b.perChar)), 1)
}

// probe sends a one-token request whose text is n characters of request
// seq's prompt and returns the prompt tokens the server reported.
func (b *Builder) probe(ctx context.Context, seq, n int) (int, error) {
	rq := backend.Request{Prompt: b.prompts.Text(seq, n)}
	if b.prefix.inProbes {
		b.prefix.apply(&rq, 0)
	}
	return b.probeRequest(ctx, &rq)
}

// probeRequest sends rq with one output token and returns the prompt
// tokens the server reported.
func (b *Builder) probeRequest(ctx context.Context, rq *backend.Request) (int, error) {
	var res record.Result
	rq.MaxTokens, rq.Seed = 1, b.spec.Seed
	b.client.Do(ctx, rq, &res)
	if !res.OK() {
		return 0, fmt.Errorf("probe request failed: %s", res.Error)
	}
	if res.PromptTokens == nil {
		return 0, errors.New("probe request: the server reported no prompt token count, so prompt length cannot be calibrated (use --prompt-tokens 0 to send unmeasured prompts)")
	}
	return *res.PromptTokens, nil
}

// Items prepares requests seq0 … seq0+n−1: their prompts (to the target
// length by the chosen mode), images and output length.
func (b *Builder) Items(ctx context.Context, seq0, n int) ([]Item, error) {
	items := make([]Item, n)
	for i := range items {
		it, err := b.item(ctx, seq0+i)
		if err != nil {
			return nil, err
		}
		items[i] = it
	}
	return items, nil
}

func (b *Builder) item(ctx context.Context, seq int) (Item, error) {
	return b.shaped(ctx, seq, b.shape(), seq)
}

// GroupItem prepares request seq like Items, with the shared prefix of
// group (mod Spec.PrefixGroups) rather than its number's: for a source
// that names each request's prefix group.
func (b *Builder) GroupItem(ctx context.Context, seq, group int) (Item, error) {
	return b.shaped(ctx, seq, b.shape(), group)
}

// Shape is the size of one request: its prompt length in tokens as the
// server counts them (0: not controlled), its output tokens and its
// images.
type Shape struct {
	PromptTokens, MaxTokens, Images int
}

// shape is the Shape of the Spec's requests.
func (b *Builder) shape() Shape {
	return Shape{PromptTokens: b.spec.PromptTokens, MaxTokens: b.spec.MaxTokens, Images: b.spec.Scenario.Defaults().Images}
}

// shaped prepares request seq to sh: its prompt (to sh.PromptTokens by
// the chosen mode, the shared prefix included), images and output length,
// with the shared prefix of group prefix.group(groupOf) (a request's own
// number, its session's, or a group a trace names) when the run has
// shared prefixes. A request with images is not held to its prompt length
// (its image tokens depend on the model): its text is sh.PromptTokens
// long and its ExpectedPromptTokens 0.
func (b *Builder) shaped(ctx context.Context, seq int, sh Shape, groupOf int) (Item, error) {
	it := Item{Request: backend.Request{MaxTokens: sh.MaxTokens, Seed: b.spec.Seed, ReusePrefix: b.reusesPrefixes()}}
	var err error
	if it.Request.Prompt, err = b.userText(ctx, seq, sh.PromptTokens); err != nil {
		return it, err
	}
	if b.mode != Unenforced && sh.PromptTokens > 0 {
		it.ExpectedPromptTokens = sh.PromptTokens
	}
	if b.prefix.on() {
		g := b.prefix.group(groupOf)
		b.prefix.apply(&it.Request, g)
		it.PrefixGroup = &g
	}
	if err := b.addImages(&it, seq, sh.Images); err != nil {
		return it, err
	}
	return it, nil
}

// addImages attaches n generated images to request seq; a request with
// images is not held to its prompt length.
func (b *Builder) addImages(it *Item, seq, n int) error {
	for i := range n {
		im, err := MakeImage(b.spec.Seed+int64(i), seq, b.spec.ImageWidth, b.spec.ImageHeight, b.spec.ImageFormat)
		if err != nil {
			return err
		}
		it.Request.Images = append(it.Request.Images, im)
	}
	if n > 0 {
		it.ExpectedPromptTokens = 0
	}
	return nil
}

// userText is request seq's own text (the user message after any shared
// prefix): of the length that brings the whole prompt to target tokens by
// the chosen mode, the shared prefix's cost taken off; target 0 (not
// controlled) gives a short text.
func (b *Builder) userText(ctx context.Context, seq, target int) (string, error) {
	switch {
	case b.mode == Exact && target > 0:
		return b.exactText(ctx, seq, target-b.overhead-b.prefix.userCost)
	case b.mode == Calibrated && target > 0:
		return b.prompts.Text(seq, b.charsFor(target-b.prefix.userCost)), nil
	}
	return b.prompts.Text(seq, max(target-b.spec.SharedPrefixTokens, 8)*4), nil
}

// reusesPrefixes reports whether the workload means requests to share
// prefixes (shared prefixes, sessions), so the server's prompt cache must
// stay on.
func (b *Builder) reusesPrefixes() bool {
	return b.spec.SharedPrefixTokens > 0 || b.spec.Turns > 1
}

// exactVariants is how many filler variants exactText tries before it
// settles for variant 0's longest prefix below the target.
const exactVariants = 4

// exactText returns a prompt for request seq that the server tokenizes to
// exactly target tokens: the shortest prefix of the request's word stream
// that reaches target, by binary search on its length; where adding one
// character jumps past target, the next filler variant is tried, and after
// exactVariants variant 0's longest prefix below target is taken (its
// shortfall shows in the report's achieved prompt length).
func (b *Builder) exactText(ctx context.Context, seq, target int) (string, error) {
	if target <= 0 {
		return b.prompts.Text(seq, 1), nil
	}
	var best string
	for v := range exactVariants {
		n, exact, err := b.prefixFor(ctx, seq, v, target)
		if err != nil {
			return "", err
		}
		text := b.prompts.Variant(seq, v, n)
		if exact {
			return text, nil
		}
		if v == 0 {
			best = text
		}
	}
	return best, nil
}

// prefixFor finds the shortest length n whose prefix of variant v of
// request seq's stream counts at least target tokens; exact reports whether
// it counts exactly target. When it does not, n is shortened by one so the
// prefix stays below target.
func (b *Builder) prefixFor(ctx context.Context, seq, v, target int) (n int, exact bool, err error) {
	count := func(n int) (int, error) { return b.client.Tokenize(ctx, b.prompts.Variant(seq, v, n)) }
	lo, hi := 1, target*2 // characters; hi grows until it holds target tokens
	for {
		c, err := count(hi)
		if err != nil {
			return 0, false, fmt.Errorf("tokenize: %w", err)
		}
		if c >= target {
			break
		}
		if hi > target*64 {
			return hi, false, nil
		}
		lo, hi = hi, hi*2
	}
	for lo < hi { // invariant: count(hi) ≥ target
		mid := (lo + hi) / 2
		c, err := count(mid)
		if err != nil {
			return 0, false, fmt.Errorf("tokenize: %w", err)
		}
		if c >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	c, err := count(hi)
	if err != nil {
		return 0, false, fmt.Errorf("tokenize: %w", err)
	}
	if c == target {
		return hi, true, nil
	}
	return max(hi-1, 1), false, nil
}
