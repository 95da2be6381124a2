package workload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures in testdata/dataset were written for these tests by hand
// (red.png is a 4×4 PNG made with Python's zlib); they follow the layouts
// DatasetFormat describes.

func TestReadDatasetFixtures(t *testing.T) {
	for _, tc := range []struct {
		file        string
		force       DatasetFormat
		want        DatasetFormat
		prompts     []string
		history     []int
		images      []int
		lines       []int
		imageMIMEs0 string
	}{
		{file: "sharegpt.json", want: ShareGPT,
			prompts: []string{"What is the capital of France?", "Describe this picture.", "Write a haiku about benchmarks."},
			history: []int{0, 1, 0}, images: []int{0, 1, 0}, lines: []int{2, 7, 12}},
		{file: "prompts.jsonl", want: PromptLines,
			prompts: []string{"Explain prefix caching in one sentence.", "What colour is this?", "List three uses of a benchmark."},
			history: []int{0, 0, 0}, images: []int{0, 1, 0}, lines: []int{1, 2, 4}},
		{file: "messages.jsonl", want: MessageLines,
			prompts: []string{"Why is the sky blue?", "What is in the image?"},
			history: []int{1, 2}, images: []int{0, 1}, lines: []int{1, 2}},
		{file: "prompts.jsonl", force: PromptLines, want: PromptLines,
			prompts: []string{"Explain prefix caching in one sentence.", "What colour is this?", "List three uses of a benchmark."},
			history: []int{0, 0, 0}, images: []int{0, 1, 0}, lines: []int{1, 2, 4}},
	} {
		t.Run(tc.file+"/"+string(tc.force), func(t *testing.T) {
			d, err := ReadDataset(filepath.Join("testdata/dataset", tc.file), DatasetOptions{Format: tc.force})
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != tc.want || len(d.Rows) != len(tc.prompts) {
				t.Fatalf("format %s, %d rows; want %s, %d", d.Format, len(d.Rows), tc.want, len(tc.prompts))
			}
			for i, r := range d.Rows {
				if r.Prompt != tc.prompts[i] || len(r.History) != tc.history[i] || len(r.Images) != tc.images[i] || r.Line != tc.lines[i] {
					t.Errorf("row %d = %q (history %d, images %d, line %d); want %q (%d, %d, %d)",
						i, r.Prompt, len(r.History), len(r.Images), r.Line, tc.prompts[i], tc.history[i], tc.images[i], tc.lines[i])
				}
				for _, im := range r.Images {
					if im.MIME != "image/png" || len(im.Data) < 8 {
						t.Errorf("row %d image %s of %d bytes", i, im.MIME, len(im.Data))
					}
				}
			}
		})
	}
}

func TestReadDatasetBadRow(t *testing.T) {
	path := filepath.Join("testdata/dataset", "bad-row.jsonl")
	_, err := ReadDataset(path, DatasetOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), path+":3: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v; want one line naming %s:3", err, path)
	}
	d, err := ReadDataset(path, DatasetOptions{SkipBad: true})
	if err != nil || len(d.Rows) != 3 || d.Skipped != 1 {
		t.Fatalf("skip bad: %v, %+v", err, d)
	}
}

func TestParseDatasetErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
		format           DatasetFormat
	}{
		{"empty", "  \n", "empty dataset", ""},
		{"no keys", `{"text": "x"}`, `neither "prompt" nor "messages"`, ""},
		{"not json", `hello`, "line 1: not a JSON array", ""},
		{"sharegpt not array", `{"prompt": "x"}`, "x.json:1: a ShareGPT file is a JSON array", ShareGPT},
		{"sharegpt no human", "[\n{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}]", "x.json:2: conversation has no", ""},
		{"sharegpt cut", "[\n{\"conversations\": []}", "x.json:2:", ""},
		{"messages last not user", `{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}`, `x.json:1: "messages" must end`, ""},
		{"bad role", `{"messages": [{"role": "tool", "content": "a"}, {"role": "user", "content": "b"}]}`, `role "tool"`, ""},
		{"remote image", `{"prompt": "a", "image": "https://example.invalid/x.png"}`, "remote URLs are not fetched", ""},
		{"bad data url", `{"prompt": "a", "image": "data:text/plain;base64,aGk="}`, "want data:image/", ""},
		{"path without file", `{"prompt": "a", "image": "x.png"}`, "file paths need a dataset file", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDataset("x.json", []byte(tc.data), "", DatasetOptions{Format: tc.format})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v; want one line with %q", err, tc.want)
			}
		})
	}
}

func TestDatasetSourceOrderWrapShuffle(t *testing.T) {
	d, err := ReadDataset("testdata/dataset/prompts.jsonl", DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := NewDatasetSource(ctx, d, DatasetSpec{MaxTokens: 7, Seed: 3, Need: 5}, &tokClient{count: wordsAndChars})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := s.Items(ctx, 0, 5)
	want := []int{0, 1, 2, 0, 1}
	for i, it := range items {
		if it.Request.Prompt != d.Rows[want[i]].Prompt || it.Request.MaxTokens != 7 || it.Request.Seed != 3 {
			t.Errorf("item %d = %+v; want row %d", i, it.Request, want[i])
		}
	}
	if n := s.Notes(); len(n) != 1 || !strings.Contains(n[0], "asks for 5 requests and 3 rows are usable") {
		t.Errorf("notes %q; want one wrap-around note", n)
	}
	seen := map[string]bool{}
	orders := map[string]bool{}
	for seed := range int64(8) {
		sh, _ := NewDatasetSource(ctx, d, DatasetSpec{MaxTokens: 1, Seed: seed, Shuffle: true, Need: 3}, &tokClient{count: wordsAndChars})
		items, _ := sh.Items(ctx, 0, 3)
		var key []string
		for _, it := range items {
			seen[it.Request.Prompt] = true
			key = append(key, it.Request.Prompt[:4])
		}
		orders[strings.Join(key, ",")] = true
		again, _ := NewDatasetSource(ctx, d, DatasetSpec{MaxTokens: 1, Seed: seed, Shuffle: true, Need: 3}, &tokClient{count: wordsAndChars})
		if a, _ := again.Items(ctx, 0, 3); a[0].Request.Prompt != items[0].Request.Prompt {
			t.Errorf("seed %d: shuffle not deterministic", seed)
		}
	}
	if len(seen) != 3 || len(orders) < 2 {
		t.Errorf("shuffles drew %d rows in %d orders; want all 3 rows in several orders", len(seen), len(orders))
	}
}

func TestDatasetSourcePromptFilter(t *testing.T) {
	d, err := ParseDataset("f.jsonl", []byte(`{"prompt": "`+strings.Repeat("a", 100)+`"}
{"prompt": "`+strings.Repeat("b", 89)+`"}
{"prompt": "`+strings.Repeat("c", 111)+`"}
{"prompt": "`+strings.Repeat("d", 109)+`"}
`), "", DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	perChar := func(s string) int { return len(s) }
	for _, tc := range []struct {
		name   string
		client *tokClient
		target int
		want   string // first letters of the rows kept
		how    string
	}{
		{"tokenizer", &tokClient{tokenize: true, count: perChar}, 100, "ad", "server's tokenizer"},
		{"estimate", &tokClient{count: perChar}, 25, "ab", "4 characters per token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewDatasetSource(ctx, d, DatasetSpec{MaxTokens: 1, PromptTokens: tc.target, Need: 10}, tc.client)
			if err != nil {
				t.Fatal(err)
			}
			items, _ := s.Items(ctx, 0, s.Usable())
			var got string
			for _, it := range items {
				got += it.Request.Prompt[:1]
				if n := len(it.Request.Prompt); n != 100 && n != 109 && n != 89 {
					t.Errorf("prompt of %d characters: rows are never cut", n)
				}
			}
			if got != tc.want {
				t.Errorf("kept %q; want %q", got, tc.want)
			}
			if n := strings.Join(s.Notes(), "|"); !strings.Contains(n, "2 of 4 rows examined were outside ±10%") || !strings.Contains(n, tc.how) {
				t.Errorf("notes %q", n)
			}
		})
	}
	if _, err := NewDatasetSource(ctx, d, DatasetSpec{MaxTokens: 1, PromptTokens: 1000}, &tokClient{tokenize: true, count: perChar}); err == nil {
		t.Error("no row in range: want an error")
	}
}

func FuzzParseDataset(f *testing.F) {
	for _, name := range []string{"sharegpt.json", "prompts.jsonl", "messages.jsonl", "bad-row.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata/dataset", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	f.Add([]byte("[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"x\"}], \"images\": [\"data:image/png;base64,AAAA\"]}]"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		opts := DatasetOptions{Format: DatasetFormats[int(format)%len(DatasetFormats)], SkipBad: format&4 != 0}
		d, err := ParseDataset("fuzz.json", data, "", opts)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		if len(d.Rows) == 0 {
			t.Fatal("no rows and no error")
		}
		for _, r := range d.Rows {
			if r.Prompt == "" && len(r.Images) == 0 || r.Line < 1 {
				t.Fatalf("empty row or bad line: %+v", r)
			}
		}
	})
}
