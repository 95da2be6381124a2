package tinymodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/tinymodel"
)

// generateResponse is the part of Ollama's non-streamed /api/generate
// answer this test reads.
type generateResponse struct {
	Response   string `json:"response"`
	DoneReason string `json:"done_reason"`
	EvalCount  int    `json:"eval_count"`
	Context    []int  `json:"context"`
}

func generate(ctx context.Context, url, model, prompt string, n int) (generateResponse, error) {
	body, _ := json.Marshal(map[string]any{
		"model": model, "prompt": prompt, "stream": false,
		"options": map[string]any{"num_predict": n, "temperature": 0, "seed": 1},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/generate", bytes.NewReader(body))
	if err != nil {
		return generateResponse{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return generateResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return generateResponse{}, fmt.Errorf("status %s", resp.Status)
	}
	var g generateResponse
	return g, json.NewDecoder(resp.Body).Decode(&g)
}

// TestTestbedGeneratesExactlyAsAsked is the testbed proof: four concurrent
// 128-token requests to the real Ollama server each stop for length after
// exactly 128 printable, never-repeated tokens that follow the permutation
// the weights encode, and together they finish faster than one after
// another (the server batches them).
func TestTestbedGeneratesExactlyAsAsked(t *testing.T) {
	url, model := testenv.Ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 128
	next := tinymodel.Next(tinymodel.DefaultSpec().Seed)

	concurrent := func(round int) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prompt := fmt.Sprintf("request %d of round %d: tell me a story", i, round)
				g, err := generate(ctx, url, model, prompt, n)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				checkOutput(t, i, g, n, next)
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	sequential := func(round int) time.Duration {
		start := time.Now()
		for i := 0; i < 4; i++ {
			if _, err := generate(ctx, url, model, fmt.Sprintf("sequential %d of round %d", i, round), n); err != nil {
				t.Fatalf("sequential request %d: %v", i, err)
			}
		}
		return time.Since(start)
	}
	// Best of three of each, so one noisy moment on a shared machine
	// decides nothing.
	bestTogether, bestApart := time.Hour, time.Hour
	for round := 0; round < 3; round++ {
		bestTogether = min(bestTogether, concurrent(round))
		bestApart = min(bestApart, sequential(round))
	}
	t.Logf("4 × %d tokens: %v together, %v one after another", n, bestTogether, bestApart)
	if bestTogether >= bestApart {
		t.Errorf("4 concurrent requests took %v, not faster than %v sequentially: the server did not batch", bestTogether, bestApart)
	}
}

func checkOutput(t *testing.T, i int, g generateResponse, n int, next map[int]int) {
	t.Helper()
	if g.DoneReason != "length" {
		t.Errorf("request %d: done_reason %q, want length", i, g.DoneReason)
	}
	if g.EvalCount != n {
		t.Errorf("request %d: eval_count %d, want %d", i, g.EvalCount, n)
	}
	if len(g.Response) != n {
		t.Errorf("request %d: %d characters, want %d (one printable byte per token)", i, len(g.Response), n)
	}
	for j := 0; j < len(g.Response); j++ {
		c := g.Response[j]
		if c < 0x21 || c > 0x7e {
			t.Errorf("request %d: byte %#x at %d is not printable ASCII", i, c, j)
			return
		}
		if j > 0 && c == g.Response[j-1] {
			t.Errorf("request %d: %q repeated at %d", i, c, j)
			return
		}
	}
	if len(g.Context) < n {
		t.Errorf("request %d: context has %d tokens, want at least %d", i, len(g.Context), n)
		return
	}
	out := g.Context[len(g.Context)-n:]
	for j := 1; j < len(out); j++ {
		if next[out[j-1]] != out[j] {
			t.Errorf("request %d: token %d follows %d, want %d (the permutation the weights encode)", i, out[j], out[j-1], next[out[j-1]])
			return
		}
	}
}
