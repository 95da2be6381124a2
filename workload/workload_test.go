package workload

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
)

func TestScenarioDefaults(t *testing.T) {
	cases := []struct {
		in             string
		prompt, out, n int
	}{
		{"text", 32, 128, 0}, {"chat", 512, 256, 0}, {"long", 4096, 256, 0}, {"image", 32, 128, 1},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			s, err := ParseScenario(c.in)
			if err != nil {
				t.Fatal(err)
			}
			d := s.Defaults()
			if d.PromptTokens != c.prompt || d.MaxTokens != c.out || d.Images != c.n {
				t.Fatalf("defaults %+v", d)
			}
		})
	}
	if _, err := ParseScenario("video"); err == nil || !strings.Contains(err.Error(), "video") {
		t.Fatalf("err %v", err)
	}
	if Image.BatchWorkload() != "one_image_per_request" || Text.BatchWorkload() != "text" {
		t.Fatal("batch workload names")
	}
}

func TestPromptsUniqueFromFirstWordAndDeterministic(t *testing.T) {
	p := NewPrompts(42)
	first := map[string]int{}
	firstTwo := map[string]bool{}
	for seq := range 2000 {
		text := p.Text(seq, 200)
		if len(text) != 200 {
			t.Fatalf("len %d", len(text))
		}
		f := strings.Fields(text)
		if seq < len(words) {
			if prev, dup := first[f[0]]; dup {
				t.Fatalf("requests %d and %d share their first word %q", prev, seq, f[0])
			}
			first[f[0]] = seq
		}
		key := f[0] + " " + f[1]
		if firstTwo[key] {
			t.Fatalf("request %d repeats the first two words %q", seq, key)
		}
		firstTwo[key] = true
	}
	if NewPrompts(42).Text(17, 300) != p.Text(17, 300) {
		t.Fatal("same seed, different prompt")
	}
	if NewPrompts(43).Text(17, 300) == p.Text(17, 300) {
		t.Fatal("different seed, same prompt")
	}
	if !strings.HasPrefix(p.Text(5, 900), p.Text(5, 300)) {
		t.Fatal("shorter text is not a prefix of the longer one")
	}
}

// tokClient is an in-test Client whose "tokenizer" counts a token per word
// plus one per 7 characters (so words and tokens do not map 1:1), and
// whose Do reports that count plus a template overhead as prompt tokens.
type tokClient struct {
	tokenize bool
	overhead int
	count    func(string) int
	probes   int
}

func wordsAndChars(s string) int { return len(strings.Fields(s)) + len(s)/7 }

func (c *tokClient) Do(_ context.Context, req *backend.Request, res *record.Result) {
	c.probes++
	n := c.count(req.Prompt) + c.overhead
	res.PromptTokens = &n
	one := 1
	res.OutputTokens = &one
	res.Status = 200
}
func (c *tokClient) Tokenize(_ context.Context, s string) (int, error) {
	if !c.tokenize {
		return 0, backend.ErrUnsupported
	}
	return c.count(s), nil
}
func (c *tokClient) Warnings() []string { return nil }

func TestExactModeHitsTargetWithTokenizer(t *testing.T) {
	for _, target := range []int{32, 512, 4096} {
		c := &tokClient{tokenize: true, overhead: 9, count: wordsAndChars}
		b := NewBuilder(Spec{Scenario: Chat, PromptTokens: target, MaxTokens: 16, Seed: 1}, c)
		if err := b.Calibrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b.Mode() != Exact || c.probes != 1 {
			t.Fatalf("mode %s after %d probes", b.Mode(), c.probes)
		}
		items, err := b.Items(context.Background(), 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			got := c.count(it.Request.Prompt) + c.overhead
			if got != target || it.ExpectedPromptTokens != target || it.Request.MaxTokens != 16 {
				t.Fatalf("target %d item %d: %d server tokens (expected %d)", target, i, got, it.ExpectedPromptTokens)
			}
		}
	}
}

func TestCalibratedModeFromProbes(t *testing.T) {
	cases := []struct {
		name  string
		count func(string) int
		tol   float64
	}{
		// A byte-level vocabulary (the Ollama testbed's): exact.
		{"bytes", func(s string) int { return len(s) }, 0},
		// A BPE-like count: within 2% on average.
		{"words and chars", wordsAndChars, 0.02},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &tokClient{overhead: 12, count: c.count}
			b := NewBuilder(Spec{Scenario: Chat, PromptTokens: 512, MaxTokens: 8, Seed: 3}, cl)
			if err := b.Calibrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			if b.Mode() != Calibrated {
				t.Fatalf("mode %s", b.Mode())
			}
			items, _ := b.Items(context.Background(), 0, 40)
			var sum float64
			for _, it := range items {
				sum += float64(c.count(it.Request.Prompt) + cl.overhead)
			}
			mean := sum / 40
			if math.Abs(mean-512)/512 > c.tol {
				t.Fatalf("mean prompt tokens %.1f, target 512", mean)
			}
		})
	}
}

func TestCalibrateErrors(t *testing.T) {
	noCount := &noPromptClient{}
	b := NewBuilder(Spec{Scenario: Chat, PromptTokens: 512, MaxTokens: 8}, noCount)
	if err := b.Calibrate(context.Background()); err == nil || !strings.Contains(err.Error(), "no prompt token count") {
		t.Fatalf("err %v", err)
	}
	img := NewBuilder(Spec{Scenario: Image, PromptTokens: 32, MaxTokens: 8, ImageWidth: 64, ImageHeight: 32, ImageFormat: JPEG}, noCount)
	if err := img.Calibrate(context.Background()); err != nil || img.Mode() != Unenforced {
		t.Fatalf("image: %v %s", err, img.Mode())
	}
	items, err := img.Items(context.Background(), 0, 2)
	if err != nil || len(items[0].Request.Images) != 1 || items[0].ExpectedPromptTokens != 0 {
		t.Fatalf("image items: %v %+v", err, items)
	}
}

type noPromptClient struct{}

func (noPromptClient) Do(_ context.Context, _ *backend.Request, res *record.Result) { res.Status = 200 }
func (noPromptClient) Tokenize(context.Context, string) (int, error) {
	return 0, errors.New("boom")
}
func (noPromptClient) Warnings() []string { return nil }

func TestImagesUniqueAndDecodable(t *testing.T) {
	for _, f := range []ImageFormat{PNG, JPEG} {
		a, err := MakeImage(1, 0, 96, 64, f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := MakeImage(1, 1, 96, 64, f)
		a2, _ := MakeImage(1, 0, 96, 64, f)
		if bytes.Equal(a.Data, b.Data) || !bytes.Equal(a.Data, a2.Data) {
			t.Fatalf("%s: images not unique per request or not deterministic", f)
		}
		cfg, name, err := image.DecodeConfig(bytes.NewReader(a.Data))
		if err != nil || cfg.Width != 96 || cfg.Height != 64 || "image/"+name != a.MIME {
			t.Fatalf("%s: decoded %v %s %+v", f, err, name, cfg)
		}
	}
}

func TestParseImageFlags(t *testing.T) {
	cases := []struct {
		in   string
		w, h int
		ok   bool
	}{
		{"512x512", 512, 512, true}, {"640X480", 640, 480, true}, {"0x5", 0, 0, false},
		{"512", 0, 0, false}, {"axb", 0, 0, false}, {"9000x10", 0, 0, false},
	}
	for _, c := range cases {
		w, h, err := ParseImageSize(c.in)
		if (err == nil) != c.ok || w != c.w || h != c.h {
			t.Errorf("ParseImageSize(%q) = %d, %d, %v", c.in, w, h, err)
		}
	}
	if f, err := ParseImageFormat("JPG"); err != nil || f != JPEG {
		t.Fatal(f, err)
	}
	if _, err := ParseImageFormat("gif"); err == nil {
		t.Fatal("gif accepted")
	}
}

func FuzzParseImageSize(f *testing.F) {
	for _, s := range []string{"512x512", "1x1", "x", "-1x2", "8192x8192"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, h, err := ParseImageSize(s)
		if err == nil && (w < 1 || h < 1 || w > 8192 || h > 8192) {
			t.Fatalf("%q gave %dx%d", s, w, h)
		}
	})
}
