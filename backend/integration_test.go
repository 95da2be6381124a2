package backend

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
)

// TestOllamaIntegration drives the real Ollama testbed through each path:
// native /api/chat and /api/generate, and /v1/chat/completions and
// /v1/completions through the OpenAI-compatible adapter.
func TestOllamaIntegration(t *testing.T) {
	url, model := testenv.Ollama(t)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"ollama chat", Config{Kind: Ollama, API: Chat}},
		{"ollama generate", Config{Kind: Ollama, API: Generate}},
		{"openai chat on /v1", Config{Kind: OpenAI, API: Chat, BaseURL: url + "/v1"}},
		{"openai completions on /v1", Config{Kind: OpenAI, API: Completions}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.BaseURL == "" {
				cfg.BaseURL = url
			}
			cfg.Model, cfg.Timeout = model, 2*time.Minute
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const n = 3 // concurrent requests, within OLLAMA_NUM_PARALLEL
			results := make([]record.Result, n)
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() {
					rq := &Request{Prompt: "unique prompt " + tt.name + string(rune('a'+i)), MaxTokens: 128, Seed: int64(i)}
					c.Do(t.Context(), rq, &results[i])
				})
			}
			wg.Wait()
			for i := range results {
				checkVerified(t, &results[i], 128)
			}
		})
	}
}

// checkVerified asserts a successful request with the server-reported output
// count equal to want, TTFT before E2E, and content chunks.
func checkVerified(t *testing.T, res *record.Result, want int) {
	t.Helper()
	if !res.OK() || res.Status != 200 {
		t.Fatalf("request failed: %q %s (status %d)", res.Reason, res.Error, res.Status)
	}
	if res.OutputTokens == nil || *res.OutputTokens != want {
		t.Errorf("output_tokens = %v, want %d", deref(res.OutputTokens), want)
	}
	if res.PromptTokens == nil || *res.PromptTokens <= 0 {
		t.Errorf("prompt_tokens = %v, want > 0", deref(res.PromptTokens))
	}
	if res.TTFTNS == nil || *res.TTFTNS <= 0 || *res.TTFTNS >= res.E2ENS {
		t.Errorf("TTFT %v not in (0, E2E %d)", res.TTFTNS, res.E2ENS)
	}
	if len(res.ChunkOffsetsNS) < want/2 {
		t.Errorf("%d content chunks for %d tokens", len(res.ChunkOffsetsNS), want)
	}
	for i := 1; i < len(res.ChunkOffsetsNS); i++ {
		if res.ChunkOffsetsNS[i] < res.ChunkOffsetsNS[i-1] {
			t.Fatalf("chunk offsets not monotonic at %d", i)
		}
	}
	if res.FinishReason != "length" {
		t.Errorf("finish_reason = %q, want length", res.FinishReason)
	}
	checkChunkTokens(t, res)
	if res.Warnings != nil {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// checkChunkTokens: per-chunk token counts, where a request has them, give
// every content chunk at least one token and add up to the output count.
// (Ollama's /v1/completions puts "completion_tokens": 0 on every chunk;
// taken as a running count it once gave [0 0 … 0 128].)
func checkChunkTokens(t *testing.T, res *record.Result) {
	t.Helper()
	if res.ChunkTokens == nil {
		return
	}
	sum := 0
	for _, k := range res.ChunkTokens {
		if k < 1 {
			t.Fatalf("chunk_tokens %v: a content chunk with %d tokens", res.ChunkTokens, k)
		}
		sum += k
	}
	if len(res.ChunkTokens) != len(res.ChunkOffsetsNS) || res.OutputTokens == nil || sum != *res.OutputTokens {
		t.Errorf("chunk_tokens %v (%d for %d chunks) do not add up to output %v", res.ChunkTokens, sum, len(res.ChunkOffsetsNS), deref(res.OutputTokens))
	}
}

// TestOllamaServerTimings checks that the native adapter records Ollama's
// own timings, and that the server's total_duration fits inside the
// client's E2E. (Client TPOT against eval_duration / eval_count is checked
// over a whole run in internal/cli's run tests.)
func TestOllamaServerTimings(t *testing.T) {
	url, model := testenv.Ollama(t)
	c, err := New(Config{Kind: Ollama, BaseURL: url, Model: model, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var res record.Result
	c.Do(t.Context(), &Request{Prompt: "timings probe", MaxTokens: 64}, &res)
	checkVerified(t, &res, 64)
	s := res.Server
	if s == nil || s.EvalNS == nil || s.PromptEvalNS == nil || s.TotalNS == nil || s.LoadNS == nil || *s.EvalNS <= 0 {
		t.Fatalf("server timings missing: %+v", s)
	}
	if *s.TotalNS > res.E2ENS+int64(50*time.Millisecond) {
		t.Errorf("server total %v exceeds client E2E %v", time.Duration(*s.TotalNS), time.Duration(res.E2ENS))
	}
}

// TestOllamaImageRequest sends an image to the tiny text-only model: the
// result must be a clean success or a recorded failure, never a panic or an
// unclassified error.
func TestOllamaImageRequest(t *testing.T) {
	url, model := testenv.Ollama(t)
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	img.Set(3, 4, color.RGBA{200, 10, 10, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Kind: Ollama, API: Chat, BaseURL: url},
		{Kind: Ollama, API: Generate, BaseURL: url},
		{Kind: OpenAI, API: Chat, BaseURL: url + "/v1"}, // image_url data: URL part
	} {
		api := string(cfg.Kind) + "/" + string(cfg.API)
		cfg.Model, cfg.Timeout = model, time.Minute
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var res record.Result
		c.Do(t.Context(), &Request{Prompt: "what is this", MaxTokens: 8, Images: []Image{{MIME: "image/png", Data: buf.Bytes()}}}, &res)
		t.Logf("%s with image: status %d reason %q error %q output %v", api, res.Status, res.Reason, res.Error, deref(res.OutputTokens))
		if res.OK() {
			checkVerified(t, &res, 8)
			continue
		}
		if res.Reason == record.ReasonNone || res.Error == "" || res.E2ENS <= 0 {
			t.Errorf("%s: failure not recorded: %+v", api, res)
		}
	}
}
