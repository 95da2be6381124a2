package sim

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
)

// The simulated tokenizer, beside the engine whose requests it sizes. It
// is not the model's: it is a fixed rule, cheap and deterministic, under
// which sim serve's /tokenize, the prompt tokens of usage and Ollama's
// prompt_eval_count, and run --backend sim's prompt lengths always agree,
// as they do on a real server. A token is
//   - a run of letters and digits (bytes ≥ 0x80 count as letters), with
//     the one space before it, of up to maxPieceBytes bytes (a longer run
//     is several tokens);
//   - or any other single byte (punctuation, newlines, extra spaces).
//
// English prose comes out near four characters a token, the usual figure
// for BPE vocabularies.
const maxPieceBytes = 8

// vocabSize is the range of the token ids /tokenize returns (Qwen2's
// vocabulary size).
const vocabSize = 151936

// ChatTemplateTokens are the prompt tokens a chat template adds per
// message (role markers: ChatML's "<|im_start|>user\n" and
// "<|im_end|>\n"), and ReplyTemplateTokens those of the assistant turn it
// opens at the end ("<|im_start|>assistant\n"). Ollama's /api/generate
// applies the template too (one user message); /v1/completions and TGI's
// /generate_stream take the prompt raw.
const (
	ChatTemplateTokens  = 5
	ReplyTemplateTokens = 3
)

func isWordByte(c byte) bool { return wordBytes[c] }

// wordBytes says which bytes are letters and digits of a word: those at
// or above 0x80, a–z, A–Z and 0–9 (a table: the tokenizer asks it of
// every byte of every prompt).
var wordBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	return t
}()

// EachPiece calls fn with each token's bytes of s, in order.
func EachPiece(s string, fn func(piece string)) {
	for i := 0; i < len(s); {
		j := pieceEnd(s, i)
		fn(s[i:j])
		i = j
	}
}

// CountTokens is the number of tokens of s: EachPiece's pieces, counted
// without a call a piece (a simulated conversation's prompts are counted
// every turn, its history included).
func CountTokens(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i = pieceEnd(s, i)
	}
	return n
}

// pieceEnd is where the token of s that starts at i ends: a word (with
// the space before it) of at most maxPieceBytes, or one other byte.
func pieceEnd(s string, i int) int {
	j := i
	if s[j] == ' ' && j+1 < len(s) && isWordByte(s[j+1]) {
		j++
	}
	if !isWordByte(s[j]) {
		return i + 1
	}
	for j < len(s) && isWordByte(s[j]) && j-i < maxPieceBytes {
		j++
	}
	return j
}

// TokenIDs are the token ids of s: a hash of each piece, so the same text
// always has the same ids.
func TokenIDs(s string) []int {
	ids := make([]int, 0, len(s)/4+1)
	EachPiece(s, func(p string) { ids = append(ids, PieceID(p)) })
	return ids
}

// TokenPieces are the pieces of s, for tokenizers that return them.
func TokenPieces(s string) []string {
	var out []string
	EachPiece(s, func(p string) { out = append(out, p) })
	return out
}

func PieceID(p string) int {
	h := fnv.New32a()
	h.Write([]byte(p))
	return int(h.Sum32() % vocabSize)
}

// OutputWords are the texts of generated tokens (read only): one word each, with its
// leading space, so a stream reads as words and every token is one token
// of the simulated tokenizer. They are outputWordCount, a power of two,
// so that WriteOutputText draws a word by masking its source's next value.
var OutputWords = [outputWordCount]string{
	" the", " of", " and", " to", " in", " a", " is", " that", " for", " it",
	" as", " with", " was", " on", " be", " by", " at", " this", " from", " or",
	" an", " are", " which", " but", " not", " have", " one", " all", " were", " their",
	" time", " there", " can", " more", " other", " about", " into", " some", " would", " what",
	" model", " server", " token", " batch", " cache", " memory", " queue", " step", " slot", " block",
	" fast", " slow", " small", " large", " first", " last", " next", " each", " many", " few",
	" GPU", " load", " rate", " level",
}

// outputWordBytes is about the mean length of OutputWords, to size an
// output text's buffer once.
const outputWordBytes = 5

// OutputTokenID is the id /tokenize would give word w.
func OutputTokenID(w int) int { return PieceID(OutputWords[w]) }

// ConversationTokens is the prompt length the simulated server reports for
// a conversation: the earlier messages' contents, oldest first, then the
// last user message. With chat each message adds the template's tokens and
// the reply one more; without it the messages are one raw prompt. run
// --backend sim counts multi-turn requests with it, as sim serve counts
// /v1/chat/completions' messages.
func ConversationTokens(history []string, prompt string, chat bool) int {
	return conversationTokens(CountTokens, history, prompt, chat)
}

func conversationTokens(count func(string) int, history []string, prompt string, chat bool) int {
	n := count(prompt)
	for _, h := range history {
		n += count(h)
	}
	if chat {
		n += (len(history)+1)*ChatTemplateTokens + ReplyTemplateTokens
	}
	return n
}

// TokenCounter is CountTokens and ConversationTokens with the counts of
// the longer texts it has counted remembered: a simulated conversation
// sends its whole history every turn, so each message is counted again
// at every later turn. It is safe for concurrent use; the zero value is
// ready, and a nil one counts without remembering. It forgets everything once the texts it remembers pass
// tokenMemoBytes, so that its memory stays bounded.
type TokenCounter struct {
	mu    sync.Mutex
	n     map[string]int
	bytes int
}

// tokenMemoMin is the shortest text a TokenCounter remembers (shorter
// ones cost less to count than to look up); tokenMemoBytes the most bytes
// of text it holds.
const (
	tokenMemoMin   = 64
	tokenMemoBytes = 64 << 20
)

// Count is CountTokens(s) (a nil TokenCounter remembers nothing).
func (c *TokenCounter) Count(s string) int {
	if c == nil || len(s) < tokenMemoMin {
		return CountTokens(s)
	}
	c.mu.Lock()
	n, ok := c.n[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = CountTokens(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil || c.bytes+len(s) > tokenMemoBytes {
		c.n, c.bytes = map[string]int{}, 0
	}
	c.n[s] = n
	c.bytes += len(s)
	return n
}

// ConversationTokens is ConversationTokens, each text counted by Count.
func (c *TokenCounter) ConversationTokens(history []string, prompt string, chat bool) int {
	return conversationTokens(c.Count, history, prompt, chat)
}

// OutputText is n tokens of the simulated model's output, words drawn by
// a generator keyed by key: the text a simulated server streams, for run
// --backend sim to hand back as a request's answer (a conversation's later
// turns send it).
func OutputText(key uint64, n int) string {
	var b strings.Builder
	WriteOutputText(&b, key, n)
	return b.String()
}

// WriteOutputText writes OutputText(key, n) to b, without the string
// between (a simulated request's answer is written straight into the
// buffer its client reads).
func WriteOutputText(b *strings.Builder, key uint64, n int) {
	var src rand.PCG
	src.Seed(key, 0x5eed)
	b.Grow(n * outputWordBytes)
	// rand.Rand's IntN of a power of two is the source's next value
	// masked (TestOutputTextStream holds it to that): one draw a word
	// without the Rand between.
	for range n {
		b.WriteString(OutputWords[src.Uint64()&(outputWordCount-1)])
	}
}

// outputWordCount is the number of OutputWords: a power of two (the
// array below fails to compile otherwise).
const outputWordCount = 64

var _ = [1]struct{}{}[outputWordCount&(outputWordCount-1)]
