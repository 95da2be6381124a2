package workload

import (
	"context"
	"math"
	"strings"

	"github.com/servebench/servebench/backend"
)

// Session is one conversation of a multi-turn workload: a new user message
// per turn, each prepared to Spec.FollowupTokens (or the first turn's own
// text's length), and the conversation so far. Turn k's request sends the shared prefix (if
// any), every earlier user message with the server's real answer to it,
// and turn k's message, so a server that caches prefixes can reuse the
// previous turn. A Session is used by one goroutine: Request(k), the
// request, Answered(k), then turn k+1.
type Session struct {
	// ID numbers the sessions of a run from 0.
	ID int
	// first is turn 1's request (shared prefix applied); users holds the
	// user message of every turn (turn 1's as the conversation repeats
	// it, prefix included when it is sent in the user message).
	first    Item
	users    []string
	history  []backend.Message
	answer   strings.Builder
	answered int
}

// Turns is the number of turns of the session.
func (s *Session) Turns() int { return len(s.users) }

// Request returns turn k's request (k from 1): the conversation so far and
// turn k's user message. Every turn but the last asks for its answer text
// (Request.Answer), which Answered adds to the conversation.
func (s *Session) Request(k int) Item {
	it := s.first
	id := s.ID
	it.Session, it.Turn = &id, k
	if k > 1 {
		it.ExpectedPromptTokens = 0 // the answers' lengths are the server's
		it.Request.Prompt = s.users[k-1]
		it.Request.History = s.history
	}
	if k < len(s.users) {
		it.Request.Answer = &s.answer
	}
	return it
}

// Answered adds turn k's user message and the answer the server streamed
// for it (what Request's Answer received; empty if the request failed) to
// the conversation that later turns send.
func (s *Session) Answered(k int) {
	if k != s.answered+1 || k >= len(s.users) {
		return
	}
	s.answered = k
	if k == 1 {
		s.history = append(s.history, s.first.Request.History...)
	}
	s.history = append(s.history,
		backend.Message{Role: backend.User, Content: s.userMessage(k)},
		backend.Message{Role: backend.Assistant, Content: s.answer.String()})
	s.answer.Reset()
}

// userMessage is turn k's user message as its request sent it.
func (s *Session) userMessage(k int) string {
	if k == 1 {
		return s.first.Request.Prompt
	}
	return s.users[k-1]
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
		s := &Session{ID: id, users: make([]string, turns)}
		first, err := b.request(ctx, seq, id)
		if err != nil {
			return nil, err
		}
		s.first = first
		s.users[0] = first.Request.Prompt
		for k := 2; k <= turns; k++ {
			if s.users[k-1], err = b.followupText(ctx, seq+k-1); err != nil {
				return nil, err
			}
		}
		out[i] = s
	}
	return out, nil
}

// followupText is the user message of a later turn, numbered seq: of
// Spec.FollowupTokens tokens of its own (exact with the server's
// tokenizer, by the calibrated tokens per character elsewhere), or, when
// that is 0, as long as a first turn's own text.
func (b *Builder) followupText(ctx context.Context, seq int) (string, error) {
	n := b.spec.FollowupTokens
	if n <= 0 {
		return b.userText(ctx, seq)
	}
	switch b.mode {
	case Exact:
		return b.exactText(ctx, seq, n)
	case Calibrated:
		return b.prompts.Text(seq, max(int(math.Round(float64(n)/b.slope)), 1)), nil
	}
	return b.prompts.Text(seq, n*4), nil
}
