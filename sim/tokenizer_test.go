package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"one word", "hello", 1},
		{"words with their spaces", "hello there world", 3},
		{"a leading space joins the word", " hello", 1},
		{"punctuation is a token", "hello, world", 3},
		{"a second space is a token", "a  b", 3},
		{"long words split every 8 bytes", "abcdefghij", 2},
		{"newlines", "a\nb", 3},
		{"non-ASCII letters", "wörld", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountTokens(tc.text); got != tc.want {
				t.Errorf("CountTokens(%q) = %d, want %d (pieces %q)", tc.text, got, tc.want, TokenPieces(tc.text))
			}
		})
	}
}

// FuzzTokenizer: the pieces of any text put it back together, and the
// three views of it (count, ids, pieces) agree.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "hello there", " a  b\n\tc,d", "abcdefghijklmnop", "wörld ✓"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := TokenPieces(s)
		if strings.Join(p, "") != s {
			t.Fatalf("pieces %q do not make %q", p, s)
		}
		if n := CountTokens(s); n != len(p) || n != len(TokenIDs(s)) {
			t.Fatalf("count %d, %d pieces, %d ids", n, len(p), len(TokenIDs(s)))
		}
	})
}

// TestTokenCounter: the remembering counter counts as CountTokens and
// ConversationTokens do, on first sight and on the later turns that send
// the same texts, and a nil one too.
func TestTokenCounter(t *testing.T) {
	long := strings.Repeat("the model's server batch, ", 20)
	history := []string{long, "short", long + "!", OutputText(7, 300)}
	var c TokenCounter
	for _, tc := range []struct {
		name    string
		counter *TokenCounter
	}{{"first", &c}, {"again", &c}, {"nil", nil}} {
		for _, s := range append(history, "", " x") {
			if got, want := tc.counter.Count(s), CountTokens(s); got != want {
				t.Errorf("%s: Count(%.20q) = %d, want %d", tc.name, s, got, want)
			}
		}
		for _, chat := range []bool{false, true} {
			if got, want := tc.counter.ConversationTokens(history, long, chat), ConversationTokens(history, long, chat); got != want {
				t.Errorf("%s: ConversationTokens(chat %v) = %d, want %d", tc.name, chat, got, want)
			}
		}
	}
}

// TestOutputTextStream: an answer's words are the ones rand.Rand's IntN
// draws from the answer's generator, one a token (the stream every
// simulated answer, and so every later turn's prompt, depends on).
func TestOutputTextStream(t *testing.T) {
	for _, key := range []uint64{0, 1, 0x9e3779b97f4a7c15, 1 << 63} {
		for _, n := range []int{0, 1, 7, 300} {
			rng := rand.New(rand.NewPCG(key, 0x5eed))
			var want strings.Builder
			for range n {
				want.WriteString(OutputWords[rng.IntN(len(OutputWords))])
			}
			if got := OutputText(key, n); got != want.String() {
				t.Errorf("key %#x, %d tokens: %.40q…, want %.40q…", key, n, got, want.String())
			}
			if got := CountTokens(OutputText(key, n)); got != n {
				t.Errorf("key %#x: %d tokens counted, want %d", key, got, n)
			}
		}
	}
}

// TestIsWordByte: letters, digits and bytes of UTF-8 sequences make words;
// the ASCII bytes next to those ranges and controls do not.
func TestIsWordByte(t *testing.T) {
	for _, tc := range []struct {
		b    byte
		want bool
	}{
		{'a', true}, {'z', true}, {'A', true}, {'Z', true}, {'0', true}, {'9', true}, {0x80, true}, {0xff, true},
		{' ', false}, {'/', false}, {':', false}, {'@', false}, {'[', false}, {'`', false}, {'{', false}, {0x7f, false}, {0, false}, {'\n', false},
	} {
		if got := isWordByte(tc.b); got != tc.want {
			t.Errorf("isWordByte(%q) = %v, want %v", tc.b, got, tc.want)
		}
	}
}
