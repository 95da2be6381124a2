package workload

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
)

// Session is one conversation of a multi-turn workload: a new user message
// per turn, and the conversation so far. Turn k's request sends the shared
// prefix (if any), every earlier user message with the server's real
// answer to it, and turn k's message, so a server that caches prefixes can
// reuse the previous turn. A Session is used by one goroutine: Request(k),
// the request, Answered(k), then turn k+1.
//
// The turns of a generated session (Builder.Sessions) follow each other
// after the run's think time; those of a replayed trace's session
// (TraceSource) carry their own timing (Pause).
type Session struct {
	// ID numbers the sessions of a run from 0.
	ID int
	// turns holds each turn's own request, turn k at k−1: turn 1's whole
	// request (shared prefix applied), and for later turns the new user
	// message, output length and images. In a replayed trace each turn's
	// Due is its arrival and Trace its row.
	turns []Item
	// timed says the turns carry their own timing (a replayed trace).
	timed bool
	// messages is a drawn conversation's new-message tokens per turn
	// (People); nil otherwise.
	messages []int
	history  []backend.Message
	answer   strings.Builder
	answered int
}

// Turns is the number of turns of the session.
func (s *Session) Turns() int { return len(s.turns) }

// Due is when the session's first turn is due, from the level's start, in
// a replayed trace; zero otherwise.
func (s *Session) Due() time.Duration { return s.turns[0].Due }

// Request returns turn k's request (k from 1): the conversation so far and
// turn k's user message. Every turn but the last asks for its answer text
// (Request.Answer), which Answered adds to the conversation.
func (s *Session) Request(k int) Item {
	it := s.turns[k-1]
	id := s.ID
	it.Session, it.Turn = &id, k
	if k > 1 {
		it.Request.History = s.history
	}
	if k < len(s.turns) {
		it.Request.Answer = &s.answer
	}
	return it
}

// Answered adds turn k's user message and the answer the server streamed
// for it (what Request's Answer received; empty if the request failed) to
// the conversation that later turns send.
func (s *Session) Answered(k int) {
	if k != s.answered+1 || k >= len(s.turns) {
		return
	}
	s.answered = k
	if k == 1 {
		s.history = append(s.history, s.turns[0].Request.History...)
	}
	s.history = append(s.history,
		backend.Message{Role: backend.User, Content: s.turns[k-1].Request.Prompt},
		backend.Message{Role: backend.Assistant, Content: s.answer.String()})
	s.answer.Reset()
}

// Pause is how long after turn k−1 ended turn k (k ≥ 2) is due, when the
// session carries its own timing (a replayed trace): the think time its
// row gives (think_ms), or else the time from ended, turn k−1's end from
// the level's start, to turn k's arrival in the trace (0 when that arrival
// has passed: a turn never goes before the answer it follows). ok is false
// for a session without timing of its own, whose pause is the run's think
// time.
func (s *Session) Pause(k int, ended time.Duration) (pause time.Duration, ok bool) {
	if !s.timed || k < 2 || k > len(s.turns) {
		return 0, false
	}
	it := &s.turns[k-1]
	if it.Trace != nil && it.Trace.Think != nil {
		return *it.Trace.Think, true
	}
	return max(it.Due-ended, 0), true
}

// laterTurn is a session's later turn: a new user message of its own,
// asking for maxTokens tokens, in the conversation that first began (its
// prefix group, prompt-cache setting and seed); its prompt length is the
// server's (the answers' lengths are), so it aims at none.
func laterTurn(first Item, message string, maxTokens int) Item {
	return Item{
		Request:     backend.Request{Prompt: message, MaxTokens: maxTokens, Seed: first.Request.Seed, ReusePrefix: true},
		PrefixGroup: first.PrefixGroup,
		Class:       first.Class,
	}
}

// Arrival is one thing a level's schedule starts: a single request, or a
// session whose later turns follow its first on their own. A level of
// sessions is a list of them (load.SessionSource).
type Arrival struct {
	// Item is the single request; unused when Session is set.
	Item Item
	// Session is the session; nil for a single request.
	Session *Session
	// Seq is the number of the request, or of the session's first turn
	// (its turn k is Seq + k − 1).
	Seq int
}

// Due is when the arrival is due from the level's start in a replayed
// trace; zero otherwise.
func (a *Arrival) Due() time.Duration {
	if a.Session != nil {
		return a.Session.Due()
	}
	return a.Item.Due
}

// Sessions prepares sessions id0 … id0+n−1 of Spec.Turns turns each (at
// least one); session id0+i's requests are numbered seq0 + i×Turns + k − 1
// for turn k, and their texts come from those numbers, so every user
// message is unique. Session i uses prefix group i mod PrefixGroups.
func (b *Builder) Sessions(ctx context.Context, id0, seq0, n int) ([]*Session, error) {
	turns := max(b.spec.Turns, 1)
	out := make([]*Session, n)
	for i := range out {
		id, seq := id0+i, seq0+i*turns
		s := &Session{ID: id, turns: make([]Item, turns)}
		first, err := b.shaped(ctx, seq, b.shape(), id)
		if err != nil {
			return nil, err
		}
		s.turns[0] = first
		for k := 2; k <= turns; k++ {
			text, err := b.followupText(ctx, seq+k-1)
			if err != nil {
				return nil, err
			}
			s.turns[k-1] = laterTurn(first, text, b.spec.MaxTokens)
		}
		out[i] = s
	}
	return out, nil
}

// Arrivals prepares the n sessions of a multi-turn level (Sessions) as
// the level's arrivals: load's SessionSource.
func (b *Builder) Arrivals(ctx context.Context, id0, seq0, n int) ([]Arrival, error) {
	ss, err := b.Sessions(ctx, id0, seq0, n)
	if err != nil {
		return nil, err
	}
	out := make([]Arrival, len(ss))
	turns := max(b.spec.Turns, 1)
	for i, s := range ss {
		out[i] = Arrival{Session: s, Seq: seq0 + i*turns}
	}
	return out, nil
}

// followupText is the user message of a later turn, numbered seq: of
// Spec.FollowupTokens tokens of its own, or, when that is 0, as long as a
// first turn's own text.
func (b *Builder) followupText(ctx context.Context, seq int) (string, error) {
	if b.spec.FollowupTokens <= 0 {
		return b.userText(ctx, seq, b.spec.PromptTokens)
	}
	return b.messageText(ctx, seq, b.spec.FollowupTokens)
}

// messageText is a user message numbered seq of n tokens of its own text:
// exact with the server's tokenizer, by the tokens per character measured
// over the probes' range when calibrated, else at four characters a token.
func (b *Builder) messageText(ctx context.Context, seq, n int) (string, error) {
	switch b.mode {
	case Exact:
		return b.exactText(ctx, seq, n)
	case Calibrated:
		return b.prompts.Text(seq, max(int(math.Round(float64(n)/b.slope)), 1)), nil
	}
	return b.prompts.Text(seq, n*4), nil
}
