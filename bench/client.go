package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/cputime"
	"github.com/servebench/servebench/record"
)

type scenario func(ctx context.Context, url string) (map[string]float64, error)

// scenarios returns the scenarios named in o.only, in order; an unknown or
// missing name is an error naming the -scenarios flag.
func scenarios(o options) ([]scenario, error) {
	all := map[string]func(context.Context, string, options) (map[string]float64, error){
		"rps": requestRate, "chunks": chunkRate, "hold": holdStreams, "gap": gapError,
	}
	var out []scenario
	for _, name := range strings.Split(o.only, ",") {
		f, ok := all[strings.TrimSpace(name)]
		if !ok {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (want rps, chunks, hold or gap)", strings.TrimSpace(name))
		}
		out = append(out, func(ctx context.Context, url string) (map[string]float64, error) { return f(ctx, url, o) })
	}
	return out, nil
}

// newClient is the real backend client, as `servebench run` makes it, with
// its own connection pool (the tuned backend.NewHTTPClient) so that each
// scenario starts with no idle connections; done closes them.
func newClient(url string) (c backend.Client, done func(), err error) {
	hc := backend.NewHTTPClient()
	c, err = backend.New(backend.Config{Kind: backend.VLLM, BaseURL: url, Model: "bench", Timeout: time.Minute, HTTPClient: hc})
	return c, hc.CloseIdleConnections, err
}

// closedLoop runs workers that send prompt until d has passed and returns
// the successful requests and content chunks.
func closedLoop(ctx context.Context, c backend.Client, workers int, d time.Duration, prompt string, maxTokens int) (ok, chunks int64, elapsed time.Duration, err error) {
	var nOK, nChunks atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			rq := &backend.Request{Prompt: prompt, MaxTokens: maxTokens}
			var res record.Result
			for time.Now().Before(deadline) {
				c.Do(ctx, rq, &res)
				if !res.OK() || res.OutputTokens == nil || *res.OutputTokens != maxTokens {
					firstErr.CompareAndSwap(nil, fmt.Sprintf("request failed: %s %s", res.Reason, res.Error))
					return
				}
				nOK.Add(1)
				nChunks.Add(int64(len(res.ChunkOffsetsNS)))
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	if e := firstErr.Load(); e != nil {
		return 0, 0, 0, fmt.Errorf("%s", e)
	}
	return nOK.Load(), nChunks.Load(), elapsed, nil
}

// requestRate: closed loop of 1-token responses.
func requestRate(ctx context.Context, url string, o options) (map[string]float64, error) {
	c, done, err := newClient(url)
	if err != nil {
		return nil, err
	}
	defer done()
	cpu0 := cputime.Process()
	ok, _, el, err := closedLoop(ctx, c, o.workers, o.dur, "burst 1 1", 1)
	if err != nil {
		return nil, err
	}
	cpu := cputime.Process() - cpu0
	return map[string]float64{
		"requests/s (1-token responses)":    float64(ok) / el.Seconds(),
		"client CPU µs per 1-token request": float64(cpu.Microseconds()) / float64(ok),
	}, nil
}

// chunkRate: responses of burstChunks chunks streamed as fast as possible.
func chunkRate(ctx context.Context, url string, o options) (map[string]float64, error) {
	c, done, err := newClient(url)
	if err != nil {
		return nil, err
	}
	defer done()
	prompt := fmt.Sprintf("burst %d %d", o.burstChunks, o.flushEvery)
	cpu0 := cputime.Process()
	_, chunks, el, err := closedLoop(ctx, c, o.chunkWorkers, o.dur, prompt, o.burstChunks)
	if err != nil {
		return nil, err
	}
	cpu := cputime.Process() - cpu0
	return map[string]float64{
		fmt.Sprintf("content chunks/s (flush every %d)", o.flushEvery): float64(chunks) / el.Seconds(),
		"client CPU ns per content chunk":                              float64(cpu.Nanoseconds()) / float64(chunks),
	}, nil
}

// memNow is the Go heap and stack the client holds, after a GC. (Kernel
// socket buffers are not counted: they are the same for any client.)
func memNow() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse + ms.StackInuse)
}

// holdStreams opens o.hold streams at once (a chunk every 200 ms for
// about 6 s), waits until the server serves all of them, measures the
// client's memory, and checks that every stream completes.
func holdStreams(ctx context.Context, url string, o options) (map[string]float64, error) {
	c, done, err := newClient(url)
	if err != nil {
		return nil, err
	}
	defer done()
	before := memNow()
	const chunks, gapUS = 30, 200000
	results := make([]record.Result, o.hold)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			c.Do(ctx, &backend.Request{Prompt: fmt.Sprintf("hold %d %d", chunks, gapUS), MaxTokens: chunks}, &results[i])
		})
	}
	peak, err := waitActive(url, o.hold, 20*time.Second)
	during := memNow()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	okN := 0
	for i := range results {
		if results[i].OK() && len(results[i].ChunkOffsetsNS) == chunks {
			okN++
		}
	}
	if okN != o.hold {
		return nil, fmt.Errorf("hold: %d of %d streams completed (e.g. %s)", okN, o.hold, firstError(results))
	}
	n := float64(o.hold)
	return map[string]float64{
		"streams held concurrently (all completed)": float64(peak),
		"KiB per in-flight stream (Go heap+stack)":  (during - before) / n / 1024,
	}, nil
}

func firstError(rs []record.Result) string {
	for i := range rs {
		if !rs[i].OK() {
			return string(rs[i].Reason) + ": " + rs[i].Error
		}
	}
	return "wrong chunk count"
}

// waitActive polls the server until want streams are open at once.
func waitActive(url string, want int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	peak := 0
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/active")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			n, _ := strconv.Atoi(string(b))
			peak = max(peak, n)
			if n >= want {
				return n, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return peak, fmt.Errorf("only %d of %d streams open at once", peak, want)
}

// gapError: gapStreams paced streams totalling gapRate chunks/s; each
// client-observed gap between consecutive content chunks is compared with
// the server's gap between its send stamps of the same chunks.
func gapError(ctx context.Context, url string, o options) (map[string]float64, error) {
	c, done, err := newClient(url)
	if err != nil {
		return nil, err
	}
	defer done()
	perStream := float64(o.gapRate) / float64(o.gapStreams)
	gapUS := int(1e6 / perStream)
	results := make([]record.Result, o.gapStreams)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range results {
		wg.Go(func() {
			c.Do(ctx, &backend.Request{Prompt: fmt.Sprintf("paced %d %d k%d", o.gapChunks, gapUS, i), MaxTokens: o.gapChunks}, &results[i])
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var errs, late []float64
	total := 0
	for i := range results {
		res := &results[i]
		if !res.OK() {
			return nil, fmt.Errorf("paced stream failed: %s %s", res.Reason, res.Error)
		}
		stamps, err := fetchStamps(url, fmt.Sprintf("k%d", i))
		if err != nil {
			return nil, err
		}
		off, sent := res.ChunkOffsetsNS, stamps.Sent
		if len(sent) != len(off) {
			return nil, fmt.Errorf("stream %d: %d server stamps, %d client chunks", i, len(sent), len(off))
		}
		total += len(off)
		for j := 1; j < len(off); j++ {
			errs = append(errs, math.Abs(float64((off[j]-off[j-1])-(sent[j]-sent[j-1]))))
		}
		for _, l := range stamps.Late {
			late = append(late, float64(l))
		}
	}
	return map[string]float64{
		"gap error p50 (µs)":             quantile(errs, 0.50) / 1e3,
		"gap error p99 (µs)":             quantile(errs, 0.99) / 1e3,
		"gap error max (µs)":             quantile(errs, 1) / 1e3,
		"gap scenario achieved chunks/s": float64(total) / elapsed.Seconds(),
		"server timer lateness p99 (µs)": quantile(late, 0.99) / 1e3,
	}, nil
}

// quantile of v (sorted in place), nearest rank below.
func quantile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return v[int(p*float64(len(v)-1))]
}

// fetchStamps gets (and the server forgets) a paced stream's stamps.
func fetchStamps(url, key string) (pacedStamps, error) {
	var st pacedStamps
	resp, err := http.Get(url + "/stamps?key=" + key)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("stamps %s: %v", key, err)
	}
	return st, nil
}
