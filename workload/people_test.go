package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestProfileDraw: conversations are drawn from the profile's published
// means (turns geometric, lengths exponential, within their bounds), the
// same for the same seed and number whatever the order, and a fixed
// figure (a flag's) is exactly that.
func TestProfileDraw(t *testing.T) {
	chat, err := LookupProfile("chat")
	if err != nil {
		t.Fatal(err)
	}
	fixed := chat
	fixed.Turns, fixed.Answer = Length{Mean: 3, Fixed: true}, Length{Mean: 100, Fixed: true}
	tests := []struct {
		name                 string
		p                    Profile
		turns, answer, first float64 // mean wanted, within 5%
	}{
		{"chat", chat, 2.52, 214.5, 69.5},
		{"fixed turns and answers", fixed, 3, 100, 69.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20000
			var turns, answers, firsts, k float64
			for id := range n {
				pl := tc.p.Draw(7, id)
				turns += float64(pl.Turns())
				firsts += float64(pl.Messages[0])
				for _, a := range pl.Answers {
					answers += float64(a)
					k++
				}
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"turns", turns / n, tc.turns}, {"answer tokens", answers / k, tc.answer}, {"first message tokens", firsts / n, tc.first}} {
				if math.Abs(c.got/c.want-1) > 0.05 {
					t.Errorf("mean %s %.2f, want %.2f ± 5%%", c.what, c.got, c.want)
				}
			}
			a, b := tc.p.Draw(7, 123), tc.p.Draw(7, 123)
			if !slices.Equal(a.Messages, b.Messages) || !slices.Equal(a.Answers, b.Answers) {
				t.Error("the same seed and number drew two conversations")
			}
		})
	}
}

// TestThink: the think time is reading the answer at 238 words/min and
// typing the next message at 52 words/min (¾ word a token), plus the
// pause; an agent neither reads, types nor pauses.
func TestThink(t *testing.T) {
	chat, _ := LookupProfile("chat")
	agent, _ := LookupProfile("agent")
	chat.Pause = 0
	r := rand.New(rand.NewPCG(1, 2))
	want := time.Duration((238*0.75/238 + 52*0.75/52) * float64(time.Minute)) // 238 tokens read, 52 typed
	if got := chat.Think(238, 52, r); got != want {
		t.Errorf("chat think %v, want %v", got, want)
	}
	if got := agent.Think(238, 52, r); got != 0 {
		t.Errorf("agent think %v, want 0", got)
	}
	if _, err := LookupProfile("gamer"); err == nil {
		t.Error("an unknown profile was found")
	}
}
