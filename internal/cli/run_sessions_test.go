package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// cacheSlot is one "loading cache slot" line of an Ollama runner's debug
// log: the prompt's tokens, how many of them a slot's cache held (used)
// and how many the server evaluated (remaining).
type cacheSlot struct{ prompt, used, remaining int }

var cacheSlotLine = regexp.MustCompile(`msg="loading cache slot" .*\bprompt=(\d+) used=(\d+) remaining=(\d+)`)

// cacheSlots reads the cache-slot lines of an Ollama server log, in order
// (Ollama v0.6.5 runner/llamarunner/cache.go LoadCacheSlot writes one per
// request at debug level).
func cacheSlots(t *testing.T, logPath string) []cacheSlot {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cacheSlot
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := cacheSlotLine.FindStringSubmatch(sc.Text()); m != nil {
			n := func(s string) int { v, _ := strconv.Atoi(s); return v }
			out = append(out, cacheSlot{n(m[1]), n(m[2]), n(m[3])})
		}
	}
	return out
}

// debugOllamaRun runs servebench against an Ollama server it launches from
// a profile with OLLAMA_DEBUG=1 (so the runner logs, per request, how many
// prompt tokens it took from a slot's cache), and returns the report,
// the counted requests in send order, and the cache-slot lines of those
// requests. With concurrency 1 the requests reach the server one after
// the other, so the log's last lines are theirs, in the same order.
func debugOllamaRun(t *testing.T, label string, env map[string]string, args ...string) (string, []record.Result, []cacheSlot) {
	t.Helper()
	dir := t.TempDir()
	profile, _ := ollamaProfile(t, dir, label, 4)
	b, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "env:\n  OLLAMA_DEBUG: \"1\"\n"...)
	for k, v := range env {
		b = append(b, "  "+k+": \""+v+"\"\n"...)
	}
	if err := os.WriteFile(profile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	argv := append([]string{"run", "--profile", profile, "--concurrency", "1", "--warmup", "0",
		"--out", out, "--records", recs, "--quiet"}, args...)
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), argv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var results []record.Result
	for _, r := range readRecords(t, recs).Results {
		if !r.Warmup {
			results = append(results, r)
		}
	}
	slices.SortFunc(results, func(a, b record.Result) int { return a.Seq - b.Seq })
	logs, err := filepath.Glob(filepath.Join(dir, label+"*.log"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("server log: %v %v", logs, err)
	}
	slots := cacheSlots(t, logs[0])
	if len(slots) < len(results) {
		t.Fatalf("%d cache-slot lines in the server log for %d requests (is OLLAMA_DEBUG honoured?)", len(slots), len(results))
	}
	slots = slots[len(slots)-len(results):]
	for i, r := range results {
		if !r.OK() || r.PromptTokens == nil || *r.PromptTokens != slots[i].prompt {
			t.Fatalf("request %d (%s): prompt %v tokens, the server's log says %d", r.Seq, r.Error, r.PromptTokens, slots[i].prompt)
		}
	}
	return out, results, slots
}

// TestRunMultiturnReusesOllamaCache is the testbed's proof of the prefix
// cache: 4 sessions of 3 turns, a 1024-token first turn and 24-token
// follow-ups. Ollama (v0.6.5) reuses a slot whose cache matches the
// prompt's prefix: from its debug log, every later turn evaluates fewer
// prompt tokens than its session's first and takes the whole previous
// turn's prompt from the cache, though its prompt is longer. Its
// prompt_eval_count stays the whole prompt (what the records say), so the
// report's cached count is null with a warning; the effect shows in the
// median TTFT and server prefill time of turns 2+ against turn 1 (compared
// with a wide margin: the machine is shared).
func TestRunMultiturnReusesOllamaCache(t *testing.T) {
	out, results, slots := debugOllamaRun(t, "ollama-mt", nil, "--scenario", "multiturn", "--turns", "3",
		"--prompt-tokens", "1024", "--followup-tokens", "24", "--max-tokens", "8", "--requests", "12")
	if len(results) != 12 {
		t.Fatalf("%d requests, want 4 sessions × 3 turns", len(results))
	}
	first := map[int]int{} // session → turn 1's evaluated tokens
	var ttft1, ttftN, prefill1, prefillN []float64
	for i, r := range results {
		s := slots[i]
		if r.Session == nil || r.Turn < 1 || r.Turn > 3 {
			t.Fatalf("request %d: session %v turn %d", r.Seq, r.Session, r.Turn)
		}
		ttft, prefill := float64(*r.TTFTNS), float64(*r.Server.PromptEvalNS)
		if r.Turn == 1 {
			first[*r.Session] = s.remaining
			ttft1, prefill1 = append(ttft1, ttft), append(prefill1, prefill)
			continue
		}
		ttftN, prefillN = append(ttftN, ttft), append(prefillN, prefill)
		prev := results[i-1]
		if *prev.Session != *r.Session || prev.Turn != r.Turn-1 {
			t.Fatalf("request %d does not follow its previous turn", r.Seq)
		}
		if s.remaining*4 >= first[*r.Session] || s.used < *prev.PromptTokens || s.prompt <= *prev.PromptTokens {
			t.Errorf("session %d turn %d: prompt %d tokens, %d from cache, %d evaluated; turn 1 evaluated %d, the previous turn's prompt was %d",
				*r.Session, r.Turn, s.prompt, s.used, s.remaining, first[*r.Session], *prev.PromptTokens)
		}
		if r.CachedPromptTokens != nil {
			t.Errorf("request %d: cached tokens %d, but Ollama reports none", r.Seq, *r.CachedPromptTokens)
		}
	}
	m := func(xs []float64) float64 { v, _ := stats.Percentile(xs, 50); return v / 1e6 }
	t.Logf("median TTFT turn 1 %.1f ms, turns 2-3 %.1f ms; median server prefill %.1f ms and %.1f ms",
		m(ttft1), m(ttftN), m(prefill1), m(prefillN))
	if m(ttftN) > 0.7*m(ttft1) || m(prefillN) > 0.5*m(prefill1) {
		t.Errorf("turns 2-3 are not clearly faster to their first token than turn 1")
	}
	doc := readDoc(t, out)
	l := doc.Runs[0].Levels[0]
	if len(l.Turns) != 3 || l.PromptTokensCached != nil || l.PromptTokensSent == nil ||
		!strings.Contains(strings.Join(l.Warnings, "\n"), "reported no prompt tokens served from its cache") {
		t.Errorf("level: turns %+v cached %v sent %v warnings %q", l.Turns, l.PromptTokensCached, l.PromptTokensSent, l.Warnings)
	}
	if doc.Runs[0].Turns != 3 || l.Requests != 12 {
		t.Errorf("run turns %d, level requests %d", doc.Runs[0].Turns, l.Requests)
	}
}

// TestRunSharedPrefixOllama: 2 groups of a 256-token shared prefix in
// prompts of 384 tokens. The testbed model's template drops system
// messages, so the prefix goes into the user message (a run warning
// says so); prompts keep their length; requests alternate groups; and
// after each group's first request the server takes at least the prefix
// from its cache. The server runs with OLLAMA_MULTIUSER_CACHE=1: by
// default Ollama v0.6.5 gives a request the free slot with the longest
// common prefix however short, so two groups evict each other's prefix
// (docs/running.md, sessions and shared prefixes).
func TestRunSharedPrefixOllama(t *testing.T) {
	out, results, slots := debugOllamaRun(t, "ollama-prefix", map[string]string{"OLLAMA_MULTIUSER_CACHE": "1"}, "--shared-prefix-tokens", "256", "--prefix-groups", "2",
		"--prompt-tokens", "384", "--max-tokens", "8", "--requests", "8")
	seen := map[int]bool{}
	for i, r := range results {
		if r.PrefixGroup == nil || *r.PrefixGroup != r.Seq%2 {
			t.Fatalf("request %d: prefix group %v", r.Seq, r.PrefixGroup)
		}
		g := *r.PrefixGroup
		if seen[g] && slots[i].used < 256 {
			t.Errorf("request %d (group %d): %d prompt tokens from cache, want the 256-token prefix at least", r.Seq, g, slots[i].used)
		}
		seen[g] = true
	}
	doc := readDoc(t, out)
	run, l := doc.Runs[0], doc.Runs[0].Levels[0]
	if l.MeanPromptTokens == nil || *l.MeanPromptTokens < 384*0.95 || *l.MeanPromptTokens > 384*1.05 {
		t.Errorf("mean prompt %v tokens, want 384 ±5%%", l.MeanPromptTokens)
	}
	w := strings.Join(run.Warnings, "\n")
	if !strings.Contains(w, "drops system messages") || !strings.Contains(w, "shared prefix: 2 group(s) of 256 tokens") || run.SharedPrefixTokens != 256 {
		t.Errorf("run warnings %q, shared prefix %d", run.Warnings, run.SharedPrefixTokens)
	}
}

func TestRunSessionFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:9", "--model", "m"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--turns", "3"}, "apply only to --scenario multiturn"},
		{[]string{"--scenario", "multiturn", "--turns", "0"}, "--turns 0"},
		{[]string{"--scenario", "multiturn", "--think-time", "exp:-2s"}, `--think-time: "exp:-2s"`},
		{[]string{"--scenario", "multiturn", "--method", "batch"}, "not batch"},
		{[]string{"--scenario", "multiturn", "--followup-tokens", "-1"}, "--followup-tokens -1"},
		{[]string{"--prefix-groups", "3"}, "--prefix-groups needs --shared-prefix-tokens"},
		{[]string{"--shared-prefix-tokens", "64", "--prompt-tokens", "64"}, "must be less than --prompt-tokens 64"},
		{[]string{"--shared-prefix-tokens", "-5"}, "--shared-prefix-tokens -5"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := cliRun(context.Background(), append(slices.Clone(base), tt.args...)...)
			if err == nil || ExitCode(err, new(strings.Builder)) != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want exit 2 with %q", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestRunPrefixCacheFromVLLM: a loopback server in vLLM's shapes (vLLM
// cannot run here) reports, per request, the cached part of its prompt
// (usage.prompt_tokens_details.cached_tokens, vLLM with
// --enable-prompt-tokens-details) and counts prompt tokens queried and hit
// in the published V1 /metrics page (telemetry/testdata/
// vllm-v1-metrics-opt125m-cpu.txt, its counters' values replaced by the
// server's running totals). Every request has a 100-token prompt of which
// 64 are cached (the same for all, so that the rate does not depend on
// when telemetry's first scrape lands). The level reports both: the
// requests' cached tokens and hit rate, and the server's own hit rate from
// the counters' rise over the level, 0.64 each.
func TestRunPrefixCacheFromVLLM(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "telemetry", "testdata", "vllm-v1-metrics-opt125m-cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	queriesLine := regexp.MustCompile(`(?m)^(vllm:prefix_cache_queries_total\{[^}]*\}) .*$`)
	hitsLine := regexp.MustCompile(`(?m)^(vllm:prefix_cache_hits_total\{[^}]*\}) .*$`)
	var mu sync.Mutex
	var queries, hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/metrics":
			mu.Lock()
			p := queriesLine.ReplaceAll(page, []byte(fmt.Sprintf("${1} %d.0", queries)))
			p = hitsLine.ReplaceAll(p, []byte(fmt.Sprintf("${1} %d.0", hits)))
			mu.Unlock()
			w.Write(p)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			const cached = 64
			mu.Lock()
			queries, hits = queries+100, hits+cached
			mu.Unlock()
			// A request takes a while, so the level spans several scrapes.
			time.Sleep(40 * time.Millisecond)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}]}`+"\n\n")
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":100,"total_tokens":101,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":%d}}}`+"\n\ndata: [DONE]\n\n", cached)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	report := filepath.Join(t.TempDir(), "report.json")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "vllm", "--url", srv.URL, "--model", "m",
		"--concurrency", "1", "--requests", "8", "--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "1",
		"--gpu", "none", "--scrape-interval", "50ms", "--out", report, "--quiet")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	l := readDoc(t, report).Runs[0].Levels[0]
	if l.PromptTokensSent == nil || *l.PromptTokensSent != 800 || l.PromptTokensCached == nil || *l.PromptTokensCached != 512 {
		t.Fatalf("sent %v cached %v, want 800 and 512", l.PromptTokensSent, l.PromptTokensCached)
	}
	for name, v := range map[string]*float64{"prompt_cache_hit_rate": l.PromptCacheHitRate, "prefix_cache_hit_rate": l.PrefixCacheHitRate} {
		if v == nil || math.Abs(*v-0.64) > 1e-9 {
			t.Errorf("%s = %v, want 0.64", name, v)
		}
	}
	var out, errb bytes.Buffer
	// --wide: the cache figures are not the compact table's.
	if err := Run(context.Background(), []string{"report", report, "--wide"}, &out, &errb); err != nil || !strings.Contains(out.String(), "server prefix cache hit %") || !strings.Contains(out.String(), "64.0") {
		t.Errorf("report table lacks the cache columns (%v):\n%s", err, out.String())
	}
}

// TestUsersLaterTurnsHitOllamaCache: 4 people (the testbed's 4 slots)
// in conversations of 3 turns, a 1,024-token first message and 24-token
// follow-ups, with the think time shortened to 50 ms so the test takes
// seconds. A later turn's prompt is its whole conversation so far, more
// than 1,000 tokens of it cached in the person's slot; its TTFT p50 is
// below half that of fresh prompts of the same length (the later turns'
// median prompt) sent one at a time to the same server, which is the
// fresh prompt's fastest case (no queue behind other prefills).
func TestUsersLaterTurnsHitOllamaCache(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	records := func(name string, args ...string) []record.Result {
		recs := filepath.Join(dir, name+".jsonl")
		argv := append([]string{"run", "--url", url, "--model", model, "--quiet", "--warmup", "0", "--max-tokens", "8",
			"--out", filepath.Join(dir, name+".json"), "--records", recs}, args...)
		if code, _, stderr := run(t, argv...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var out []record.Result
		for _, r := range readRecords(t, recs).Results {
			if !r.Warmup && r.OK() && r.TTFTNS != nil && r.PromptTokens != nil {
				out = append(out, r)
			}
		}
		return out
	}
	var later, laterPrompts []float64
	for _, r := range records("users", "--users", "4", "--turns", "3", "--think-time", "const:50ms",
		"--prompt-tokens", "1024", "--followup-tokens", "24", "--requests", "24") {
		if r.Turn >= 2 {
			later, laterPrompts = append(later, float64(*r.TTFTNS)), append(laterPrompts, float64(*r.PromptTokens))
		}
	}
	if len(later) < 8 {
		t.Fatalf("%d later turns answered, want at least 8", len(later))
	}
	prompt, _ := stats.Percentile(laterPrompts, 50)
	if prompt < 1000 {
		t.Fatalf("later turns' median prompt %.0f tokens, want a history of at least 1,000", prompt)
	}
	var fresh []float64
	for _, r := range records("fresh", "--concurrency", "1", "--prompt-tokens", strconv.Itoa(int(prompt)), "--requests", "8") {
		fresh = append(fresh, float64(*r.TTFTNS))
	}
	p50 := func(xs []float64) float64 { v, _ := stats.Percentile(xs, 50); return v / 1e6 }
	t.Logf("TTFT p50: later turns %.1f ms (%d, median prompt %.0f tokens), fresh prompts of that length %.1f ms (%d)",
		p50(later), len(later), prompt, p50(fresh), len(fresh))
	if len(fresh) < 6 || p50(later) >= 0.5*p50(fresh) {
		t.Errorf("later turns' TTFT p50 %.1f ms is not below half the fresh prompts' %.1f ms", p50(later), p50(fresh))
	}
}
