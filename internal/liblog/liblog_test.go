package liblog

import (
	"bytes"
	"fmt"
	"log"
	"strings"
	"testing"
)

func TestRouter(t *testing.T) {
	var fallback bytes.Buffer
	r := New(&fallback)
	lg := log.New(r, "", 0) // as log.SetOutput(r) makes the standard logger

	lg.Printf("before any run")
	a := r.Subscribe(func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") })
	b := r.Subscribe(nil)
	lg.Printf("Unsolicited response received on idle HTTP channel starting with %q; err=%v", "data: sk-secret\x1b[2J", nil)
	gotB := b.Close()
	lg.Printf("only a\nsecond line")
	for range MaxLines {
		lg.Printf("filler")
	}
	gotA := a.Close()
	lg.Printf("after the runs")

	if want := "before any run\nafter the runs\n"; fallback.String() != want {
		t.Errorf("fallback got %q, want %q", fallback.String(), want)
	}
	if len(gotB) != 1 || !strings.Contains(gotB[0], "sk-secret") {
		t.Errorf("b (no redaction) = %q", gotB)
	}
	if len(gotA) != MaxLines+1 {
		t.Fatalf("a kept %d lines, want %d and a count: %q", len(gotA), MaxLines+1, gotA)
	}
	first := gotA[0]
	if !strings.HasPrefix(first, "library log: Unsolicited response received on idle HTTP channel") || strings.Contains(first, "sk-secret") || !strings.Contains(first, "[redacted]") || strings.ContainsRune(first, '\x1b') {
		t.Errorf("a's first line %q: want it prefixed, redacted and printable", first)
	}
	if gotA[1] != "library log: only a" || gotA[2] != "library log: second line" {
		t.Errorf("a's lines 2-3 = %q %q", gotA[1], gotA[2])
	}
	if want := fmt.Sprintf("library log: %d more lines left out", MaxLines+3-MaxLines); gotA[MaxLines] != want {
		t.Errorf("last = %q, want %q", gotA[MaxLines], want)
	}
	long := New(&fallback)
	s := long.Subscribe(nil)
	log.New(long, "", 0).Print(strings.Repeat("é", MaxLineBytes))
	if got := s.Close(); len(got) != 1 || len(got[0]) > MaxLineBytes+len("library log:  …") {
		t.Errorf("long line kept as %d bytes", len(got[0]))
	}
}

// TestDrain: a command's subscription hands each run the lines logged
// since the previous run took them; a nil subscription takes nothing.
func TestDrain(t *testing.T) {
	var fallback bytes.Buffer
	r := New(&fallback)
	lg := log.New(r, "", 0)
	s := r.Subscribe(nil)
	lg.Print("one")
	if got := s.Drain(); len(got) != 1 || got[0] != "library log: one" {
		t.Errorf("first drain %q", got)
	}
	lg.Print("two")
	if got := s.Close(); len(got) != 1 || got[0] != "library log: two" {
		t.Errorf("close %q", got)
	}
	var none *Subscription
	if none.Drain() != nil || none.Close() != nil || fallback.Len() != 0 {
		t.Error("nil subscription or fallback took something")
	}
}
