package workload

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// A model of people (servebench run --users): each person holds one
// conversation at a time, sends a turn with the whole conversation so
// far, reads the streamed answer, thinks, and sends the next; after the
// conversation's drawn number of turns a new person takes their place. A
// Profile says what such people send and how long they take between
// turns. Its constants and where each comes from are in docs/users.md.

// ProfileName names a Profile.
type ProfileName string

// Profiles of people.
const (
	// ChatProfile is a person chatting with an assistant.
	ChatProfile ProfileName = "chat"
	// RAGProfile is a person asking questions over retrieved documents:
	// each turn carries a long retrieved context, answers are short.
	RAGProfile ProfileName = "rag"
	// CodeProfile is a person working on code with an assistant: long
	// prompts and long answers.
	CodeProfile ProfileName = "code"
	// AgentProfile is a program calling tools in a loop: no reading or
	// typing between its turns, and a context that grows by each tool
	// result.
	AgentProfile ProfileName = "agent"
)

// ProfileNames lists every profile, in the order help texts show them.
var ProfileNames = []ProfileName{ChatProfile, RAGProfile, CodeProfile, AgentProfile}

// Length is a drawn number of tokens or turns: exponential of mean Mean
// (the law of greatest entropy for a published mean alone), at least Min,
// at most Max; exactly Mean when Fixed (a flag overrides the profile).
type Length struct {
	Mean     float64
	Min, Max int
	Fixed    bool
}

// Draw returns one length drawn with r.
func (l Length) Draw(r *rand.Rand) int {
	if l.Fixed {
		return int(math.Round(l.Mean))
	}
	n := int(math.Round(l.Mean * r.ExpFloat64()))
	if l.Max > 0 {
		n = min(n, l.Max)
	}
	return max(n, l.Min)
}

// expected is the mean of Draw (the clamp's effect on it is ignored).
func (l Length) expected() float64 { return l.Mean }

// Profile is what one kind of person sends and how long they pause.
type Profile struct {
	Name ProfileName
	// Turns is the turns per conversation (at least 1); its Mean the
	// mean a study publishes, drawn geometric (one more turn with
	// probability 1 − 1/Mean after each).
	Turns Length
	// First is the tokens of a conversation's first message, Message of
	// each later one, Answer of each answer (max_tokens).
	First, Message, Answer Length
	// ReadingWPM is the words per minute at which a person reads the
	// answer, TypingWPM at which they type the next message; 0 skips the
	// step (an agent neither reads nor types).
	ReadingWPM, TypingWPM float64
	// Pause is the mean of an exponential pause beyond reading and
	// typing (deciding what to ask next).
	Pause time.Duration
}

// WordsPerToken converts tokens to English words: 1 token ≈ ¾ of a word
// (OpenAI, "What are tokens and how to count them?").
const WordsPerToken = 0.75

// Published rates of reading and typing.
const (
	// ReadingWPM is the mean silent reading rate of English non-fiction
	// by adults (Brysbaert 2019, "How many words do we read per minute?
	// A review and meta-analysis of reading rate", Journal of Memory and
	// Language 109, abstract: 238 wpm).
	ReadingWPM = 238
	// TypingWPM is the mean typing rate of 168,000 volunteers on
	// physical keyboards (Dhakal et al. 2018, "Observations on Typing
	// from 136 Million Keystrokes", CHI '18: 52 wpm).
	TypingWPM = 52
)

// LookupProfile returns the named profile, or an error naming the valid
// ones.
func LookupProfile(name string) (Profile, error) {
	for _, p := range profiles {
		if string(p.Name) == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q (want one of %v)", name, ProfileNames)
}

// profiles are the built-in profiles; docs/users.md gives each constant's
// source.
var profiles = []Profile{
	{
		// WildChat (Zhao et al., ICLR 2024): 1M conversations, 2.5M
		// turns, 2.52 turns per conversation. LMSYS-Chat-1M (Zheng et
		// al., ICLR 2024, Table 1): 69.5 tokens per prompt, 214.5 per
		// response.
		Name:  ChatProfile,
		Turns: Length{Mean: 2.52, Min: 1, Max: 40},
		First: Length{Mean: 69.5, Min: 4, Max: 2048}, Message: Length{Mean: 69.5, Min: 4, Max: 2048},
		Answer:     Length{Mean: 214.5, Min: 8, Max: 1024},
		ReadingWPM: ReadingWPM, TypingWPM: TypingWPM, Pause: 5 * time.Second,
	},
	{
		// Mooncake's open trace (Kimi, long-context chat with
		// documents): sample rows of about 6,500–7,000 input and 26–52
		// output tokens; here a 2,048-token retrieved context per
		// question so that a 4,096-token context holds a first turn.
		Name:  RAGProfile,
		Turns: Length{Mean: 1.5, Min: 1, Max: 8},
		First: Length{Mean: 2048, Fixed: true}, Message: Length{Mean: 69.5, Min: 4, Max: 2048},
		Answer:     Length{Mean: 52, Min: 8, Max: 512},
		ReadingWPM: ReadingWPM, TypingWPM: TypingWPM, Pause: 5 * time.Second,
	},
	{
		// Assumed (no published per-turn statistics found): pasted code
		// of about 1,000 tokens, answers of about 500.
		Name:  CodeProfile,
		Turns: Length{Mean: 3, Min: 1, Max: 20},
		First: Length{Mean: 1024, Min: 32, Max: 4096}, Message: Length{Mean: 256, Min: 4, Max: 2048},
		Answer:     Length{Mean: 512, Min: 16, Max: 2048},
		ReadingWPM: ReadingWPM, TypingWPM: TypingWPM, Pause: 10 * time.Second,
	},
	{
		// Assumed: a tool-calling loop of about 8 calls, each tool
		// result about 256 tokens, each call about 128.
		Name:  AgentProfile,
		Turns: Length{Mean: 8, Min: 1, Max: 32},
		First: Length{Mean: 512, Min: 32, Max: 4096}, Message: Length{Mean: 256, Min: 4, Max: 2048},
		Answer: Length{Mean: 128, Min: 8, Max: 1024},
	},
}

// Plan is one conversation as drawn: its turns' new messages and answer
// lengths, turn k at k−1.
type Plan struct {
	Messages, Answers []int
}

// Turns is the number of turns.
func (p Plan) Turns() int { return len(p.Messages) }

// Draw draws conversation id's plan, seeded by seed and id alone, so
// that it does not depend on when the conversation starts.
func (p Profile) Draw(seed int64, id int) Plan {
	r := rand.New(rand.NewPCG(uint64(seed)^0x9e091e, uint64(int64(id))))
	turns := p.Turns.Draw(r)
	if !p.Turns.Fixed {
		turns = 1 // geometric: one more turn with probability 1 − 1/mean
		for turns < max(p.Turns.Max, 1) && r.Float64() >= 1/max(p.Turns.Mean, 1) {
			turns++
		}
	}
	pl := Plan{Messages: make([]int, max(turns, 1)), Answers: make([]int, max(turns, 1))}
	for k := range pl.Messages {
		m := p.Message
		if k == 0 {
			m = p.First
		}
		pl.Messages[k], pl.Answers[k] = max(m.Draw(r), 1), max(p.Answer.Draw(r), 1)
	}
	return pl
}

// Think is how long a person takes between an answer of answerTokens
// tokens and sending the next message of nextTokens tokens: reading the
// answer, typing the message, and a pause drawn with r.
func (p Profile) Think(answerTokens, nextTokens int, r *rand.Rand) time.Duration {
	d := p.read(float64(answerTokens)) + p.typing(float64(nextTokens))
	if p.Pause > 0 {
		d += time.Duration(r.ExpFloat64() * float64(p.Pause))
	}
	return d
}

// MeanThink is the mean of Think over the profile's lengths.
func (p Profile) MeanThink() time.Duration {
	return p.read(p.Answer.expected()) + p.typing(p.Message.expected()) + p.Pause
}

func (p Profile) read(tokens float64) time.Duration {
	return wordsTime(tokens, p.ReadingWPM)
}

func (p Profile) typing(tokens float64) time.Duration {
	return wordsTime(tokens, p.TypingWPM)
}

// wordsTime is the time tokens take at wpm words per minute (0: none).
func wordsTime(tokens, wpm float64) time.Duration {
	if wpm <= 0 {
		return 0
	}
	return time.Duration(tokens * WordsPerToken / wpm * float64(time.Minute))
}

// Conversation prepares conversation id to plan pl, its turns numbered
// seq0 … seq0+Turns−1: the first message (shared prefix applied) and each
// later message of its own text, each asking for its answer's length.
func (b *Builder) Conversation(ctx context.Context, id, seq0 int, pl Plan) (*Session, error) {
	s := &Session{ID: id, turns: make([]Item, pl.Turns()), messages: pl.Messages}
	first, err := b.shaped(ctx, seq0, Shape{PromptTokens: pl.Messages[0] + b.spec.SharedPrefixTokens, MaxTokens: pl.Answers[0]}, id)
	if err != nil {
		return nil, err
	}
	s.turns[0] = first
	for k := 2; k <= pl.Turns(); k++ {
		text, err := b.messageText(ctx, seq0+k-1, pl.Messages[k-1])
		if err != nil {
			return nil, err
		}
		s.turns[k-1] = laterTurn(first, text, pl.Answers[k-1])
	}
	return s, nil
}

// People is the conversations of a users level, drawn from a Profile and
// prepared by a Builder: load's PeopleSource.
type People struct {
	Builder *Builder
	Profile Profile
	Seed    int64
}

// Conversation prepares conversation id, drawn from the profile.
func (p *People) Conversation(ctx context.Context, id, seq0 int) (*Session, error) {
	return p.Builder.Conversation(ctx, id, seq0, p.Profile.Draw(p.Seed, id))
}

// Think is the pause after turn k of s, whose answer had answerTokens
// tokens: reading it and typing turn k+1's message (k = 0: the next
// person's first message, of the profile's mean length).
func (p *People) Think(s *Session, k, answerTokens int, r *rand.Rand) time.Duration {
	next := int(math.Round(p.Profile.First.expected()))
	if k > 0 && k < len(s.messages) {
		next = s.messages[k]
	}
	return p.Profile.Think(answerTokens, next, r)
}

// MeanThink is the profile's mean think time.
func (p *People) MeanThink() time.Duration { return p.Profile.MeanThink() }

// heldSample is the conversations HeldTokensP95 draws.
const heldSample = 4000

// HeldTokensP95 is the 95th percentile, over the profile's conversations
// (drawn with seed as People draws them), of the tokens one conversation
// holds at once in a server's KV cache: at its last turn, every message
// and answer so far (its history, the new message and the answer being
// generated). N people need about N times this, not N times the server's
// context (plan --users).
func (p Profile) HeldTokensP95(seed int64) int {
	held := make([]int, heldSample)
	for id := range held {
		pl := p.Draw(seed, id)
		for k := range pl.Messages {
			held[id] += pl.Messages[k] + pl.Answers[k]
		}
	}
	slices.Sort(held)
	return held[int(math.Ceil(0.95*heldSample))-1]
}

// DrawThink is one think time between an answer and a next message whose
// lengths are drawn with r from the profile, as a later turn has.
func (p *People) DrawThink(r *rand.Rand) time.Duration {
	return p.Profile.Think(max(p.Profile.Answer.Draw(r), 1), max(p.Profile.Message.Draw(r), 1), r)
}
