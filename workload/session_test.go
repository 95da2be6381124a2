package workload

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

// chatClient is an in-test Client that counts a chat's prompt tokens as a
// server would: each message's text (by count) plus perMessage template
// tokens; with dropSystem its template ignores system messages, as the
// Ollama testbed model's bare {{ .Prompt }} template does.
type chatClient struct {
	tokenize   bool
	dropSystem bool
	perMessage int
	count      func(string) int
	sent       []backend.Request
}

func (c *chatClient) Do(_ context.Context, req *backend.Request, res *record.Result) {
	c.sent = append(c.sent, *req)
	n := c.count(req.Prompt) + c.perMessage
	for _, m := range req.History {
		if m.Role == backend.System && c.dropSystem {
			continue
		}
		n += c.count(m.Content) + c.perMessage
	}
	one := 1
	res.PromptTokens, res.OutputTokens, res.Status = &n, &one, 200
	if req.Answer != nil {
		req.Answer.Reset()
		req.Answer.WriteString("answer to " + req.Prompt[:min(len(req.Prompt), 12)])
	}
}

func (c *chatClient) Tokenize(_ context.Context, s string) (int, error) {
	if !c.tokenize {
		return 0, backend.ErrUnsupported
	}
	return c.count(s), nil
}

func (c *chatClient) Warnings() []string { return nil }

// serverCount is what c counts for rq's prompt.
func (c *chatClient) serverCount(rq backend.Request) int {
	var res record.Result
	saved := c.sent
	rq.Answer = nil
	c.Do(context.Background(), &rq, &res)
	c.sent = saved
	return *res.PromptTokens
}

func TestSharedPrefixExactLength(t *testing.T) {
	for _, tt := range []struct {
		name       string
		tokenize   bool
		dropSystem bool
		// tol is the allowed deviation of the mean prompt length, and
		// prefixTol that of each prefix, in tokens: exact with a
		// tokenizer; by tokens per character elsewhere (the builder's
		// calibrated mean is within 2% of its target).
		tol, prefixTol float64
	}{
		{"tokenizer, system message", true, false, 0, 0},
		{"tokenizer, template drops system", true, true, 0, 0},
		{"calibrated, system message", false, false, 512 * 0.02, 20},
		{"calibrated, template drops system", false, true, 512 * 0.02, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &chatClient{tokenize: tt.tokenize, dropSystem: tt.dropSystem, perMessage: 5, count: wordsAndChars}
			b := NewBuilder(Spec{Scenario: Chat, PromptTokens: 512, MaxTokens: 8, Seed: 2, SharedPrefixTokens: 200, PrefixGroups: 3}, c)
			if err := b.Calibrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			if b.prefix.inUserMessage != tt.dropSystem {
				t.Fatalf("prefix in user message = %v (notes %q)", b.prefix.inUserMessage, b.Notes())
			}
			items, err := b.Items(context.Background(), 0, 9)
			if err != nil {
				t.Fatal(err)
			}
			prefixes := map[string]int{}
			sum := 0
			for i, it := range items {
				got := c.serverCount(it.Request)
				sum += got
				if tt.tol == 0 && got != 512 || !it.Request.ReusePrefix {
					t.Errorf("item %d: %d prompt tokens, want 512 (reuse %v)", i, got, it.Request.ReusePrefix)
				}
				if it.PrefixGroup == nil || *it.PrefixGroup != i%3 {
					t.Fatalf("item %d: prefix group %v", i, it.PrefixGroup)
				}
				p := prefixOf(it.Request)
				if n := wordsAndChars(p); math.Abs(float64(n-200)) > tt.prefixTol {
					t.Errorf("item %d: prefix of %d tokens, want 200±%.0f", i, n, tt.prefixTol)
				}
				if g, seen := prefixes[p]; seen && g != i%3 {
					t.Fatalf("groups %d and %d share a prefix", g, i%3)
				}
				prefixes[p] = i % 3
			}
			if mean := float64(sum) / float64(len(items)); math.Abs(mean-512) > tt.tol {
				t.Errorf("mean prompt %.1f tokens, want 512±%.0f", mean, tt.tol)
			}
			if len(prefixes) != 3 {
				t.Fatalf("%d distinct prefixes, want 3", len(prefixes))
			}
		})
	}
}

// prefixOf is the shared prefix of a request built by a Builder.
func prefixOf(rq backend.Request) string {
	if len(rq.History) > 0 && rq.History[0].Role == backend.System {
		return rq.History[0].Content
	}
	p, _, _ := strings.Cut(rq.Prompt, backend.PromptSeparator)
	return p
}

func TestSharedPrefixTooLong(t *testing.T) {
	c := &chatClient{tokenize: true, perMessage: 5, count: wordsAndChars}
	b := NewBuilder(Spec{Scenario: Chat, PromptTokens: 100, MaxTokens: 8, SharedPrefixTokens: 100}, c)
	err := b.Calibrate(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--prompt-tokens 100 leaves no room") {
		t.Fatalf("err %v", err)
	}
}

// TestSessionConversation runs two sessions of three turns by hand and
// checks what each turn sends: the prefix, every earlier message with the
// server's answer, the new message; and that only non-final turns ask
// for their answer.
func TestSessionConversation(t *testing.T) {
	c := &chatClient{tokenize: true, perMessage: 5, count: wordsAndChars}
	b := NewBuilder(Spec{Scenario: Multiturn, PromptTokens: 128, MaxTokens: 8, Seed: 3, SharedPrefixTokens: 40, PrefixGroups: 2, Turns: 3}, c)
	if err := b.Calibrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	sessions, err := b.Sessions(context.Background(), 4, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	for _, s := range sessions {
		if s.Turns() != 3 {
			t.Fatalf("session %d: %d turns", s.ID, s.Turns())
		}
		var prev backend.Request
		for k := 1; k <= 3; k++ {
			it := s.Request(k)
			var res record.Result
			c.Do(context.Background(), &it.Request, &res)
			s.Answered(k)
			rq := it.Request
			if *it.Session != s.ID || it.Turn != k || *it.PrefixGroup != s.ID%2 || !rq.ReusePrefix {
				t.Fatalf("session %d turn %d: %+v", s.ID, k, it)
			}
			if (rq.Answer != nil) != (k < 3) {
				t.Errorf("turn %d asks for its answer: %v", k, rq.Answer != nil)
			}
			if users[rq.Prompt] {
				t.Fatalf("user message repeated across turns or sessions: %q", rq.Prompt)
			}
			users[rq.Prompt] = true
			if k == 1 {
				if it.ExpectedPromptTokens != 128 || c.serverCount(rq) != 128 || len(rq.History) != 1 {
					t.Fatalf("turn 1: expected %d, server counts %d, history %d", it.ExpectedPromptTokens, c.serverCount(rq), len(rq.History))
				}
			} else {
				want := append(append([]backend.Message{}, prev.History...),
					backend.Message{Role: backend.User, Content: prev.Prompt},
					backend.Message{Role: backend.Assistant, Content: "answer to " + prev.Prompt[:12]})
				if !equalMessages(rq.History, want) || it.ExpectedPromptTokens != 0 {
					t.Fatalf("turn %d history\n%v\nwant\n%v", k, rq.History, want)
				}
				if c.serverCount(rq) <= c.serverCount(prev) {
					t.Errorf("turn %d prompt is not longer than turn %d's", k, k-1)
				}
			}
			prev = rq
		}
	}
}

func equalMessages(a, b []backend.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFollowupTokens: later turns' new messages have the follow-up length
// of their own text, the first turn keeps the whole prompt's target.
func TestFollowupTokens(t *testing.T) {
	c := &chatClient{tokenize: true, perMessage: 5, count: wordsAndChars}
	b := NewBuilder(Spec{Scenario: Multiturn, PromptTokens: 400, MaxTokens: 8, Turns: 3, FollowupTokens: 24}, c)
	if err := b.Calibrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ss, err := b.Sessions(context.Background(), 0, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if got := c.serverCount(s.Request(1).Request); got != 400 {
			t.Errorf("session %d turn 1: %d prompt tokens, want 400", s.ID, got)
		}
		for k := 2; k <= 3; k++ {
			if n := wordsAndChars(s.Request(k).Request.Prompt); n != 24 {
				t.Errorf("session %d turn %d: message of %d tokens, want 24", s.ID, k, n)
			}
		}
	}
}
