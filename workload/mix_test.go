package workload

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/trace"
)

func TestParseMix(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  string
	}{
		{"text:0.7,image:0.2,long:0.1", "text:0.7,image:0.2,long:0.1", ""},
		{" text:7 , chat:3", "text:0.7,chat:0.3", ""},
		{"text:1", "", "at least two classes"},
		{"text:0.5,video:0.5", "", `unknown scenario "video"`},
		{"text:0.5,image", "", "class:weight"},
		{"text:0.5,image:0", "", "positive"},
		{"text:0.5,image:-1", "", "positive"},
		{"text:0.5,image:NaN", "", "positive"},
		{"text:0.5,text:0.5", "", "twice"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			m, err := ParseMix(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || m.String() != c.want {
				t.Fatalf("ParseMix = %v, %v; want %s", m, err, c.want)
			}
		})
	}
}

func FuzzParseMix(f *testing.F) {
	f.Add("text:0.7,image:0.2,long:0.1")
	f.Add("chat:1e308,long:1e308")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix(s)
		if err != nil {
			return
		}
		var sum float64
		for _, c := range m {
			if !(c.Weight > 0) {
				t.Fatalf("%q: weight %v", s, c.Weight)
			}
			sum += c.Weight
		}
		if math.Abs(sum-1) > 1e-9 || len(m) < 2 {
			t.Fatalf("%q: %v", s, m)
		}
	})
}

// TestMixClassesFollowWeights: over 20,000 requests each class's share is
// within 1.5 points of its weight (three standard deviations at most), a
// request's class does not depend on the others, and the seed decides.
func TestMixClassesFollowWeights(t *testing.T) {
	m, _ := ParseMix("text:0.7,image:0.2,long:0.1")
	const n = 20000
	counts := make([]int, len(m))
	for seq := range n {
		counts[m.ClassOf(5, seq)]++
	}
	for i, c := range m {
		if share := float64(counts[i]) / n; math.Abs(share-c.Weight) > 0.015 {
			t.Errorf("class %s: share %.3f, weight %.3f", c.Scenario, share, c.Weight)
		}
	}
	again, _ := ParseMix("text:0.7,image:0.2,long:0.1")
	for seq := range 500 {
		if m.ClassOf(5, seq) != again.ClassOf(5, seq) {
			t.Fatalf("request %d: classes differ between equal mixes and seeds", seq)
		}
	}
	differ := 0
	for seq := range 200 {
		if m.ClassOf(5, seq) != m.ClassOf(6, seq) {
			differ++
		}
	}
	if differ < 40 {
		t.Fatalf("seeds 5 and 6 give the same classes but for %d of 200", differ)
	}
}

func TestMixSourceBuildsEachClass(t *testing.T) {
	m, _ := ParseMix("chat:0.5,image:0.5")
	c := &tokClient{overhead: 4, count: func(s string) int { return len(s) }}
	var builders []*Builder
	for _, cl := range m {
		b := NewBuilder(Spec{Scenario: cl.Scenario, PromptTokens: cl.Scenario.Defaults().PromptTokens, MaxTokens: cl.Scenario.Defaults().MaxTokens,
			Seed: 2, ImageWidth: 32, ImageHeight: 32, ImageFormat: PNG}, c)
		if err := b.Calibrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		builders = append(builders, b)
	}
	items, err := NewMixSource(m, builders, 2).Items(context.Background(), 10, 40)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, it := range items {
		seen[it.Class]++
		if want := string(m[m.ClassOf(2, 10+i)].Scenario); it.Class != want {
			t.Fatalf("item %d class %q, want %q", i, it.Class, want)
		}
		switch it.Class {
		case "chat":
			if it.ExpectedPromptTokens != 512 || it.Request.MaxTokens != 256 || len(it.Request.Images) != 0 ||
				len(it.Request.Prompt)+4 != 512 {
				t.Fatalf("chat item %+v", it.ExpectedPromptTokens)
			}
		case "image":
			if len(it.Request.Images) != 1 || it.Request.MaxTokens != 128 || it.ExpectedPromptTokens != 0 {
				t.Fatalf("image item: %d images", len(it.Request.Images))
			}
		}
	}
	if seen["chat"] < 10 || seen["image"] < 10 {
		t.Fatalf("classes %v", seen)
	}
}

func TestTraceSource(t *testing.T) {
	tr, err := trace.ReadFile("../trace/testdata/servebench.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	c := &tokClient{overhead: 3, count: func(s string) int { return len(s) }} // byte tokens: calibration is exact
	b := NewBuilder(TraceSpec(tr, Spec{Seed: 4, ImageWidth: 16, ImageHeight: 16, ImageFormat: PNG}), c)
	if b.spec.PromptTokens != 120 || b.spec.MaxTokens != 32 {
		t.Fatalf("trace spec %+v", b.spec)
	}
	if err := b.Calibrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	src, err := NewTraceSource(b, nil, tr)
	if err != nil {
		t.Fatal(err)
	}
	items, err := src.Items(context.Background(), 2, len(tr.Rows))
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		row := tr.Rows[i]
		if it.Due != row.At || it.Trace == nil || it.Trace.Line != row.Line || it.Request.MaxTokens != row.OutputTokens || len(it.Request.Images) != row.Images {
			t.Fatalf("item %d: due %v images %d for row %+v", i, it.Due, len(it.Request.Images), row)
		}
		if row.Images == 0 && (it.ExpectedPromptTokens != row.InputTokens || len(it.Request.Prompt)+3 != row.InputTokens) {
			t.Fatalf("item %d: %d prompt tokens, row %d", i, len(it.Request.Prompt)+3, row.InputTokens)
		}
	}
	if _, err := src.Items(context.Background(), 0, len(tr.Rows)+1); err == nil {
		t.Fatal("more items than rows")
	}
	warm, err := src.WarmupItems(context.Background(), 100, 7)
	if err != nil || len(warm) != 7 || warm[6].Due != 0 || warm[6].Trace != nil || warm[6].Request.MaxTokens != tr.Rows[1].OutputTokens {
		t.Fatalf("warm-ups %v %+v", err, warm)
	}
	notes := strings.Join(src.Notes(), "\n")
	if !strings.Contains(notes, "2 sessions (3 requests) replayed as conversations") || strings.Contains(notes, "not replayed") {
		t.Fatalf("notes %q", notes)
	}
}

// TestTraceBlocksSharePrefixes: Mooncake rows that list the same leading
// hash ids get prompts that share those blocks' text, and no more; their
// lengths stay within 2% of the rows' (byte tokens).
func TestTraceBlocksSharePrefixes(t *testing.T) {
	tr, err := trace.ReadFile("../trace/testdata/mooncake.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	c := &tokClient{overhead: 5, count: func(s string) int { return len(s) }}
	b := NewBuilder(TraceSpec(tr, Spec{Seed: 9}), c)
	if err := b.Calibrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	src, err := NewTraceSource(b, nil, tr)
	if err != nil {
		t.Fatal(err)
	}
	items, err := src.Items(context.Background(), 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	p := func(i int) string { return items[i].Request.Prompt }
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	// Rows 0 and 2 list [0 1 …], row 1 [0 3], row 3 [5]: 1024, 512 and 0
	// shared tokens (one token a byte here).
	for _, cs := range []struct{ a, b, lo, hi int }{{0, 2, 1024, 1030}, {0, 1, 512, 518}, {1, 2, 512, 518}, {0, 3, 0, 2}} {
		if n := common(p(cs.a), p(cs.b)); n < cs.lo || n > cs.hi {
			t.Errorf("rows %d and %d share %d bytes, want %d–%d", cs.a, cs.b, n, cs.lo, cs.hi)
		}
	}
	for i, it := range items {
		got := float64(len(it.Request.Prompt) + 5)
		if want := float64(tr.Rows[i].InputTokens); math.Abs(got-want)/want > 0.02 || it.ExpectedPromptTokens != tr.Rows[i].InputTokens {
			t.Errorf("row %d: %v tokens, want %v", i, got, want)
		}
	}
	if items[2].Due != 3*time.Second {
		t.Fatalf("due %v", items[2].Due)
	}
}
