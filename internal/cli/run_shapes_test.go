package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/trace"
)

func TestRunShapeFlagErrors(t *testing.T) {
	base := []string{"run", "--backend", "ollama", "--url", "http://127.0.0.1:1", "--model", "m"}
	rate := append(slices.Clone(base), "--method", "rate", "--rate", "4")
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(tr, []byte(`{"t_ms":0,"input_tokens":5,"output_tokens":3}`+"\n"+`{"t_ms":1,"input_tokens":5,"output":3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"t_ms":0,"input_tokens":5,"output_tokens":3,"image":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with := func(args []string, more ...string) []string { return append(slices.Clone(args), more...) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"burstiness without gamma", with(rate, "--burstiness", "2"), "--burstiness applies only to --arrival gamma or ramp"},
		{"burstiness zero", with(rate, "--arrival", "gamma", "--burstiness", "0"), "--burstiness 0"},
		{"burstiness on pool", with(base, "--burstiness", "2"), "--burstiness applies only to --method rate"},
		{"ramp without length", with(rate, "--arrival", "ramp"), "needs --ramp"},
		{"ramp flags without ramp", with(rate, "--ramp", "5s"), "--rate-start and --ramp apply only to --arrival ramp"},
		{"negative rate start", with(rate, "--arrival", "ramp", "--ramp", "5s", "--rate-start", "-1"), "--rate-start -1"},
		{"duration on pool", with(base, "--duration", "5s"), "--duration applies only to --method rate"},
		{"duration zero", with(rate, "--duration", "0s"), "--duration 0s: must be positive"},
		{"duration too long", with(rate, "--rate", "1000", "--duration", "10000s"), "plans more than 1000000 requests"},
		{"trace with rate", with(base, "--trace", good, "--rate", "2"), "--rate does not apply with --trace"},
		{"trace with scenario", with(base, "--trace", good, "--scenario", "chat"), "--scenario does not apply with --trace"},
		{"trace with pool", with(base, "--trace", good, "--method", "pool"), "--method pool does not apply with --trace"},
		{"trace with mix", with(base, "--trace", good, "--mix", "text:1,chat:1"), "--mix does not apply with --trace"},
		{"trace missing", with(base, "--trace", "/nonexistent/trace.jsonl"), "--trace: open /nonexistent/trace.jsonl"},
		{"trace malformed row", with(base, "--trace", tr), "--trace: " + tr + `:2: unknown field "output"`},
		{"trace format", with(base, "--trace", good, "--trace-format", "sharegpt"), "--trace-format"},
		{"trace speed", with(base, "--trace", good, "--trace-speed", "0"), "--trace-speed 0"},
		{"trace window syntax", with(base, "--trace", good, "--trace-window", "10s"), "--trace-window"},
		{"trace window empty", with(base, "--trace", good, "--trace-window", "1h,1m"), "no request arrives in the window"},
		{"trace images over completions", []string{"run", "--backend", "vllm", "--url", "http://x", "--model", "m", "--api", "completions", "--trace", good}, "rows carry images"},
		{"trace speed without trace", with(base, "--trace-speed", "2"), "--trace-speed applies only with --trace"},
		{"mix with scenario", with(base, "--mix", "text:1,chat:1", "--scenario", "long"), "--scenario does not apply with --mix"},
		{"mix with prompt tokens", with(base, "--mix", "text:1,chat:1", "--prompt-tokens", "4"), "--prompt-tokens does not apply with --mix"},
		{"mix on batch", with(base, "--mix", "text:1,chat:1", "--method", "batch"), "--mix does not apply to --method batch"},
		{"mix one class", with(base, "--mix", "text:1"), "at least two classes"},
		{"mix bad weight", with(base, "--mix", "text:1,chat:x"), "--mix"},
		{"mix images over completions", []string{"run", "--backend", "vllm", "--url", "http://x", "--model", "m", "--api", "completions", "--mix", "text:1,image:1"}, "image class"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantUsageLine(t, c.args, c.want) })
	}
}

// loopServer is a loopback OpenAI-compatible server for what the testbed
// cannot do: stall on demand, and accept images (the testbed's model has
// no vision). Its streams follow the chunk format of the published vLLM
// stream (backend/testdata/vllm-0.9.0-chat-stream.sse) and end with the
// usage chunk of stream_options.include_usage (OpenAI API reference,
// "Create chat completion"). A request asking for n output tokens gets n
// one-token chunks; its prompt tokens are counted one per byte of the
// user text plus 100 per image, so probes can calibrate prompt lengths.
// Each request waits stall before its first chunk, imageStall more when it
// carries an image. Probes (max_tokens 1) are answered but not recorded.
type loopServer struct {
	*httptest.Server
	stall, imageStall time.Duration
	mu                sync.Mutex
	images            []int // images per recorded request, in arrival order
}

func newLoopServer(t *testing.T, stall, imageStall time.Duration) *loopServer {
	s := &loopServer{stall: stall, imageStall: imageStall}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *loopServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Messages  []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	text, images := 0, 0
	for _, m := range body.Messages {
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			text += len(str)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			http.Error(w, "bad content", http.StatusBadRequest)
			return
		}
		for _, p := range parts {
			if p.Type == "image_url" {
				images++
			}
			text += len(p.Text)
		}
	}
	n := min(max(body.MaxTokens, 1), 512)
	if n > 1 {
		s.mu.Lock()
		s.images = append(s.images, images)
		s.mu.Unlock()
		wait := s.stall
		if images > 0 {
			wait += s.imageStall
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for range n {
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n")
	}
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", text+100*images, n, text+100*images+n)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *loopServer) seen() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.images)
}

// TestRunClientLimitedOnStallingServer is coordinated omission on demand:
// a server that takes 150 ms per request, a schedule of 20 requests/s, and
// one request allowed in flight. The client can send only one request per
// 150 ms, so request k goes out about 100·k ms late: latency from the
// actual send stays at 150 ms while latency from the scheduled time grows
// with the lag, and the level is judged client-limited because the cap was
// full. With room for 64 in flight a schedule is kept, and the two
// latencies differ by the send lag only.
func TestRunClientLimitedOnStallingServer(t *testing.T) {
	srv := newLoopServer(t, 150*time.Millisecond, 0)
	dir := t.TempDir()
	sweep := func(name, rate, maxInFlight string) (document.Level, *record.File) {
		report, recs := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".jsonl")
		_, stderr, err := cliRun(context.Background(), "run", "--backend", "openai", "--url", srv.URL, "--model", "m",
			"--method", "rate", "--rate", rate, "--arrival", "constant", "--requests", "16", "--max-concurrency", maxInFlight,
			"--warmup", "0", "--prompt-tokens", "0", "--max-tokens", "4", "--out", report, "--records", recs, "--quiet")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		f := readRecords(t, recs)
		checkRebuild(t, report, f)
		return readDoc(t, report).Runs[0].Levels[0], f
	}

	l, f := sweep("capped", "20", "1")
	t.Logf("cap 1: achieved %.2f/s of %.2f scheduled; E2E mean %.0f ms, from schedule %.0f ms; lag p50 %.0f, growth %.0f ms",
		deref(l.AchievedRate), deref(l.ScheduledRate), deref(l.E2EMeanMs), deref(l.E2ESchedMeanMs), deref(l.ScheduleLagP50Ms), deref(l.ScheduleLagGrowthMs))
	if l.ClientLimited == nil || !*l.ClientLimited {
		t.Fatalf("client_limited %v, want true", l.ClientLimited)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "client-limited") || !strings.Contains(w, "reached the cap of 1") {
		t.Errorf("warnings %q lack the client-limited finding and its cause", l.Warnings)
	}
	// The schedule is exact (20/s); the sends are one per request time.
	if math.Abs(deref(l.ScheduledRate)-20) > 1e-6 || deref(l.AchievedRate) > 7.5 {
		t.Errorf("scheduled %v/s, achieved %v/s; want 20 and at most 1/150 ms", deref(l.ScheduledRate), deref(l.AchievedRate))
	}
	if e2e := deref(l.E2EMeanMs); e2e < 150 || e2e > 400 {
		t.Errorf("E2E mean from the send %.0f ms, want the server's 150 ms and little more", e2e)
	}
	// Lags 0, 100, …, 1500 ms: from the schedule the mean E2E is about
	// 150 + 750 ms.
	if deref(l.E2ESchedMeanMs) < 3*deref(l.E2EMeanMs) || deref(l.E2ESchedMeanMs) < 800 {
		t.Errorf("E2E mean from the schedule %.0f ms, want about 900 (send %.0f)", deref(l.E2ESchedMeanMs), deref(l.E2EMeanMs))
	}
	if d := deref(l.E2ESchedP50Ms) - deref(l.E2EP50Ms) - deref(l.ScheduleLagP50Ms); math.Abs(d) > 60 {
		t.Errorf("E2E p50 from the schedule is not the send's plus the lag (off by %.0f ms)", d)
	}
	if deref(l.ScheduleLagGrowthMs) < 800 || *l.PeakInFlight != 1 {
		t.Errorf("lag growth %.0f ms, peak in flight %d", deref(l.ScheduleLagGrowthMs), *l.PeakInFlight)
	}
	// Every record keeps both times: due every 50 ms, sent no earlier.
	for i, r := range f.Results {
		if r.ScheduledNS == nil || r.StartNS < *r.ScheduledNS {
			t.Fatalf("record %d: start %d, scheduled %v", i, r.StartNS, r.ScheduledNS)
		}
	}

	// With room in flight and a gentler 5 requests/s (a starved machine
	// under -race could not keep 20/s even with room, and would rightly
	// say so), the schedule is kept: the two latencies differ by the
	// send lag alone.
	l, _ = sweep("room", "5", "64")
	t.Logf("cap 64 at 5/s: achieved %.2f/s; E2E mean %.0f ms, from schedule %.0f ms; lag mean %.1f ms, p99 %.1f ms",
		deref(l.AchievedRate), deref(l.E2EMeanMs), deref(l.E2ESchedMeanMs), deref(l.ScheduleLagMeanMs), deref(l.ScheduleLagP99Ms))
	if l.ClientLimited == nil || *l.ClientLimited {
		t.Fatalf("client_limited %v with room in flight, want false; warnings %q", l.ClientLimited, l.Warnings)
	}
	if d := deref(l.E2ESchedMeanMs) - deref(l.E2EMeanMs); math.Abs(d-deref(l.ScheduleLagMeanMs)) > 1e-6 {
		t.Errorf("E2E from the schedule exceeds E2E from the send by %.3f ms on average, the mean lag is %.3f ms", d, deref(l.ScheduleLagMeanMs))
	}
}

// TestRunImageMixOnLoopServer mixes text and image requests in one level
// against the loopback server (the testbed's model has no vision): the
// server sees an image on exactly the image class's requests, and the
// report summarizes the level overall and per class, in the document and
// in the table, markdown and HTML reports.
func TestRunImageMixOnLoopServer(t *testing.T) {
	srv := newLoopServer(t, 5*time.Millisecond, 60*time.Millisecond)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "openai", "--url", srv.URL, "--model", "m",
		"--mix", "text:0.5,image:0.5", "--concurrency", "2", "--requests", "24", "--warmup", "0", "--image-size", "64x64",
		"--out", report, "--records", recs, "--quiet")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readRecords(t, recs)
	checkRebuild(t, report, f)
	doc := readDoc(t, report)
	run := doc.Runs[0]
	if run.Scenario != "mix" || run.Label != "openai-mix" || len(run.Mix) != 2 || run.Mix[1].Class != "image" || run.Mix[1].Weight != 0.5 {
		t.Fatalf("run %q %q mix %+v", run.Label, run.Scenario, run.Mix)
	}
	l := run.Levels[0]
	if l.Requests != 24 || l.Errors != 0 || len(l.Classes) != 2 {
		t.Fatalf("level: %d requests, %d errors, classes %+v", l.Requests, l.Errors, l.Classes)
	}
	img, txt := l.Classes[0], l.Classes[1]
	if img.Class != "image" || txt.Class != "text" || img.Requests+txt.Requests != 24 || img.Requests < 4 || txt.Requests < 4 {
		t.Fatalf("classes %s:%d %s:%d", img.Class, img.Requests, txt.Class, txt.Requests)
	}
	// The server saw one image on each image request and none on text.
	withImage := 0
	for _, n := range srv.seen() {
		if n > 1 {
			t.Fatalf("a request carried %d images", n)
		}
		withImage += n
	}
	// The records hold the pool's 2 warm-ups too (its workers' first
	// requests), which the server also saw.
	imageRecords, countedImages := 0, 0
	for _, r := range f.Results {
		if r.Class != "text" && r.Class != "image" {
			t.Fatalf("record %d class %q", r.Seq, r.Class)
		}
		if r.Class == "image" {
			imageRecords++
			if !r.Warmup {
				countedImages++
			}
		}
	}
	if withImage != imageRecords || countedImages != img.Requests {
		t.Fatalf("server saw %d requests with an image, the records %d, the image class has %d of %d counted", withImage, imageRecords, img.Requests, countedImages)
	}
	// Images stall 60 ms more: the classes' latencies tell them apart,
	// and text keeps its 32-token prompts while image prompts carry the
	// image's 100.
	if deref(img.TTFTP50Ms) < deref(txt.TTFTP50Ms)+40 {
		t.Errorf("TTFT p50 image %.1f ms, text %.1f ms", deref(img.TTFTP50Ms), deref(txt.TTFTP50Ms))
	}
	if math.Abs(deref(txt.MeanPromptTokens)-32) > 1 || deref(img.MeanPromptTokens) < 100 {
		t.Errorf("mean prompt tokens text %.1f, image %.1f", deref(txt.MeanPromptTokens), deref(img.MeanPromptTokens))
	}
	// Image prompts have no target: the level's prompts are on target.
	if w := strings.Join(l.Warnings, "\n"); strings.Contains(w, "off the") {
		t.Errorf("level warnings %q", w)
	}
	for _, format := range []string{"table", "markdown", "html"} {
		out, _, err := cliRun(context.Background(), "report", "--format", format, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"class", "all", "image", "text", "mix of request classes: text 50.0%, image 50.0%"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
	}
	md, _, _ := cliRun(context.Background(), "report", "--format", "markdown", recs)
	if !strings.Contains(md, "\n| image | 2 |") || !strings.Contains(md, "\n| all | 2 | 24 |") {
		t.Errorf("markdown lacks the per-class rows:\n%s", md)
	}
}

// TestRunTraceOnLoopServer replays a slice of a trace at double speed:
// each single request and each session's first turn is scheduled at its
// row's time, with the row's lengths and images; the session's second
// turn carries the conversation so far and is due at its own row's time,
// the first turn's answer having come before it.
func TestRunTraceOnLoopServer(t *testing.T) {
	srv := newLoopServer(t, 2*time.Millisecond, 0)
	dir := t.TempDir()
	tr := filepath.Join(dir, "trace.jsonl")
	rows := `{"t_ms": 0, "input_tokens": 40, "output_tokens": 4}
{"t_ms": 100, "input_tokens": 64, "output_tokens": 6, "image": 1, "session": "a", "turn": 1}
{"t_ms": 100, "input_tokens": 90, "output_tokens": 5}
{"t_ms": 400, "input_tokens": 120, "output_tokens": 7, "session": "a", "turn": 2}
{"t_ms": 700, "input_tokens": 50, "output_tokens": 3}
`
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "openai", "--url", srv.URL, "--model", "m",
		"--trace", tr, "--trace-window", "100ms,500ms", "--trace-speed", "2", "--warmup", "1", "--image-size", "32x32",
		"--out", report, "--records", recs, "--quiet")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readRecords(t, recs)
	checkRebuild(t, report, f)
	run := readDoc(t, report).Runs[0]
	if run.Scenario != "trace" || run.Trace == nil || run.Trace.Rows != 3 || run.Trace.Format != "servebench" || run.Trace.Speed != 2 ||
		run.Trace.WindowStartSeconds != 0.1 || run.Trace.WindowSeconds != 0.5 || run.Trace.SpanSeconds != 0.15 {
		t.Fatalf("run %q trace %+v", run.Scenario, run.Trace)
	}
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "1 sessions (2 requests) replayed as conversations") {
		t.Errorf("warnings %q", run.Warnings)
	}
	var counted []record.Result
	for _, r := range f.Results {
		if !r.Warmup {
			counted = append(counted, r)
		}
	}
	slices.SortFunc(counted, func(a, b record.Result) int { return a.Seq - b.Seq })
	// Rows at 100, 100 and 400 ms of the trace: 0, 0 and 150 ms after the
	// level's start at double speed. The session's turns are numbered
	// one after the other (requests 0 and 1), the single row after them.
	want := []struct {
		due           time.Duration
		in, out, imgs int
		turn          int
	}{{0, 64, 6, 1, 1}, {150 * time.Millisecond, 120, 7, 0, 2}, {0, 90, 5, 0, 0}}
	if len(counted) != len(want) {
		t.Fatalf("%d counted requests, want %d", len(counted), len(want))
	}
	t0 := *counted[0].ScheduledNS
	for i, w := range want {
		r := counted[i]
		if got := time.Duration(*r.ScheduledNS - t0); got != w.due {
			t.Errorf("request %d scheduled at %v, want %v", i, got, w.due)
		}
		if *r.OutputTokens != w.out || r.ExpectedOutputTokens != w.out {
			t.Errorf("request %d: %d output tokens, want %d", i, *r.OutputTokens, w.out)
		}
		if r.Turn != w.turn || (w.turn > 0) != (r.Session != nil) {
			t.Errorf("request %d: session %v turn %d, want turn %d", i, r.Session, r.Turn, w.turn)
		}
		if w.turn == 2 {
			// The conversation so far (turn 1's 64-token text and its
			// answer) and a new message of 120 − 64 − 6 = 50 tokens.
			if r.ExpectedPromptTokens != 0 || *r.PromptTokens < 64+50 || *r.Session != *counted[0].Session {
				t.Errorf("turn 2: %d prompt tokens (expected %d), session %d", *r.PromptTokens, r.ExpectedPromptTokens, *r.Session)
			}
			continue
		}
		// The loop server counts a byte a token and 100 an image:
		// calibration makes the text exactly its row's length.
		if *r.PromptTokens != w.in+100*w.imgs {
			t.Errorf("request %d: %d prompt tokens, want %d", i, *r.PromptTokens, w.in+100*w.imgs)
		}
	}
	// The warm-up is shaped like the first row replayed (with its image),
	// then the three rows (turn 2's conversation carries no image).
	if seen := srv.seen(); !slices.Equal(seen, []int{1, 1, 0, 0}) && !slices.Equal(seen, []int{1, 0, 1, 0}) {
		t.Errorf("server saw images %v, want the warm-up's and the first row's", seen)
	}
}

// TestRunClientLimitedOnOllama: on the real testbed, a schedule of 200
// requests/s with one request in flight cannot be kept (a 64-token request
// takes longer than 5 ms), and the level says the client limited the
// rate; at 4 requests/s with room in flight it is kept.
func TestRunClientLimitedOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, rate, cap string
		limited         bool
	}{{"capped", "200", "1", true}, {"kept", "4", "64", false}} {
		t.Run(c.name, func(t *testing.T) {
			report, recs := filepath.Join(dir, c.name+".json"), filepath.Join(dir, c.name+".jsonl")
			_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
				"--method", "rate", "--rate", c.rate, "--arrival", "constant", "--requests", "24", "--max-concurrency", c.cap,
				"--warmup", "1", "--max-tokens", "64", "--out", report, "--records", recs, "--quiet")
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			checkRebuild(t, report, readRecords(t, recs))
			l := readDoc(t, report).Runs[0].Levels[0]
			t.Logf("rate %s/s, cap %s: achieved %.1f/s of %.1f; TTFT p50 %.1f ms, from schedule %.1f; E2E mean %.1f, from schedule %.1f; lag growth %.1f ms",
				c.rate, c.cap, deref(l.AchievedRate), deref(l.ScheduledRate), deref(l.TTFTP50Ms), deref(l.TTFTSchedP50Ms),
				deref(l.E2EMeanMs), deref(l.E2ESchedMeanMs), deref(l.ScheduleLagGrowthMs))
			if l.Errors != 0 || l.ClientLimited == nil || *l.ClientLimited != c.limited {
				t.Fatalf("errors %d, client_limited %v; want %v (warnings %q)", l.Errors, l.ClientLimited, c.limited, l.Warnings)
			}
			if c.limited && deref(l.E2ESchedMeanMs) < 2*deref(l.E2EMeanMs) {
				t.Errorf("E2E from the schedule %.1f ms hides the client's queueing (send %.1f ms)", deref(l.E2ESchedMeanMs), deref(l.E2EMeanMs))
			}
		})
	}
}

// TestRunArrivalsOnOllama runs a bursty gamma level and a ramp level, each
// ended by --duration, on the testbed: each level sends exactly the
// requests its schedule holds, each scheduled at its pacer's due time,
// and the gamma level's gaps are burstier than Poisson's.
func TestRunArrivalsOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	cases := []struct {
		name  string
		flags []string
		level load.Level
	}{
		{"gamma", []string{"--arrival", "gamma", "--burstiness", "0.25", "--rate", "30", "--duration", "3s"},
			load.Level{Rate: 30, Arrival: "gamma", Burstiness: 0.25, DurationSeconds: 3}},
		{"ramp", []string{"--arrival", "ramp", "--rate-start", "2", "--rate", "30", "--ramp", "2s", "--duration", "3s"},
			load.Level{Rate: 30, Arrival: "ramp", RateStart: 2, RampSeconds: 2, Burstiness: 1, DurationSeconds: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
			args := append([]string{"run", "--backend", "ollama", "--url", url, "--model", model, "--method", "rate",
				"--max-concurrency", "32", "--warmup", "0", "--max-tokens", "8", "--seed", "7", "--out", report, "--records", recs, "--quiet"}, c.flags...)
			_, stderr, err := cliRun(context.Background(), args...)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			f := readRecords(t, recs)
			checkRebuild(t, report, f)
			p := load.NewPacer(c.level, 7)
			n, _ := load.Count(p, 10_000)
			l := readDoc(t, report).Runs[0].Levels[0]
			if l.Requests != n || l.Errors != 0 || len(f.Results) != n || f.Headers[0].Levels[0].DurationSeconds != 3 {
				t.Fatalf("%d requests (%d errors), %d records; the schedule holds %d", l.Requests, l.Errors, len(f.Results), n)
			}
			slices.SortFunc(f.Results, func(a, b record.Result) int { return a.Seq - b.Seq })
			t0 := *f.Results[0].ScheduledNS
			var gaps []float64
			for k, r := range f.Results {
				if got := time.Duration(*r.ScheduledNS - t0); got != p.Due(k) {
					t.Fatalf("request %d scheduled at %v, the pacer says %v", k, got, p.Due(k))
				}
				if k > 0 {
					gaps = append(gaps, float64(*r.ScheduledNS-*f.Results[k-1].ScheduledNS))
				}
			}
			t.Logf("%s: %d requests in 3 s, achieved %.1f/s, scheduled %.1f/s, lag p99 %.1f ms", c.name, n, deref(l.AchievedRate), deref(l.ScheduledRate), deref(l.ScheduleLagP99Ms))
			if c.name == "gamma" {
				mean, _ := stats.Mean(gaps)
				sd, _ := stats.StdDev(gaps)
				if cv := sd / mean; cv < 1.3 { // 1/√0.25 = 2; Poisson would be 1
					t.Errorf("gap CV %.2f, want a bursty schedule (≈2)", cv)
				}
			}
		})
	}
}

// TestRunTraceOnOllama replays examples/trace-chat.jsonl at 4× speed on
// the testbed: every single row and every session's first turn is one
// request at its time (scaled), asking for the row's output tokens (which
// the testbed's model always generates exactly) with a prompt of the
// row's length (calibrated on the testbed's byte vocabulary); a session's
// later turns follow, each carrying the conversation so far, due no
// earlier than their own rows.
func TestRunTraceOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	example := testenv.RepoFile(t, "examples/trace-chat.jsonl")
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--trace", example, "--trace-speed", "4", "--max-concurrency", "16", "--warmup", "1", "--out", report, "--records", recs, "--quiet")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readRecords(t, recs)
	checkRebuild(t, report, f)
	tr, err := trace.ReadFile(example, "")
	if err != nil {
		t.Fatal(err)
	}
	run := readDoc(t, report).Runs[0]
	l := run.Levels[0]
	if l.Requests != len(tr.Rows) || l.Errors != 0 || run.Trace == nil || run.Trace.Rows != len(tr.Rows) {
		t.Fatalf("%d requests, %d errors for %d rows", l.Requests, l.Errors, len(tr.Rows))
	}
	var counted []record.Result
	for _, r := range f.Results {
		if !r.Warmup {
			counted = append(counted, r)
		}
	}
	slices.SortFunc(counted, func(a, b record.Result) int { return a.Seq - b.Seq })
	rows := replayOrder(tr.Rows)
	t0 := *counted[0].ScheduledNS
	var off []float64
	later := 0
	for i, r := range counted {
		row := rows[i]
		due := time.Duration(*r.ScheduledNS - t0)
		if r.OutputTokens == nil || *r.OutputTokens != row.OutputTokens {
			t.Fatalf("request %d: output %v for row %+v", i, r.OutputTokens, row)
		}
		if row.Session != "" && row.Turn > 1 {
			later++
			if r.Session == nil || r.Turn != row.Turn || due < row.At/4 || r.ExpectedPromptTokens != 0 {
				t.Fatalf("request %d: session %v turn %d due %v expects %d; its row (line %d) turn %d at %v / 4", i, r.Session, r.Turn, due, r.ExpectedPromptTokens, row.Line, row.Turn, row.At)
			}
			continue
		}
		if due != row.At/4 || r.ExpectedPromptTokens != row.InputTokens {
			t.Fatalf("request %d scheduled at %v expecting %d prompt tokens; its row (line %d) at %v / 4, %d", i, due, r.ExpectedPromptTokens, row.Line, row.At, row.InputTokens)
		}
		off = append(off, float64(*r.PromptTokens-row.InputTokens))
	}
	if later == 0 {
		t.Fatal("the example trace replayed no session's later turn")
	}
	meanOff, _ := stats.Mean(off)
	t.Logf("%d rows (%d later turns) over %.1f s: prompts that aim at their rows' lengths off by %+.2f tokens on average; TTFT p50 %.1f ms, from schedule %.1f ms; lag p99 %.1f ms",
		len(counted), later, run.Trace.SpanSeconds, meanOff, deref(l.TTFTP50Ms), deref(l.TTFTSchedP50Ms), deref(l.ScheduleLagP99Ms))
	// The prompts that aim at their rows' lengths are held to them like
	// any level's to its target (stats.PromptTolerance).
	if dev := math.Abs(meanOff) / run.Trace.MeanInputTokens; dev > stats.PromptTolerance {
		t.Errorf("prompts off their rows by %+.1f tokens on average, %.1f%% of the rows' mean %.1f", meanOff, dev*100, run.Trace.MeanInputTokens)
	}
}

// replayOrder is rows in the order a replay numbers its requests: by
// arrival of each single row or session's first turn, a session's turns
// one after the other in turn order.
func replayOrder(rows []trace.Row) []trace.Row {
	var groups [][]trace.Row
	at := map[string]int{}
	for _, r := range rows {
		if r.Session == "" {
			groups = append(groups, []trace.Row{r})
			continue
		}
		i, ok := at[r.Session]
		if !ok {
			i = len(groups)
			at[r.Session] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	var out []trace.Row
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b trace.Row) int { return a.Turn - b.Turn })
	}
	slices.SortStableFunc(groups, func(a, b []trace.Row) int { return int(a[0].At - b[0].At) })
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestRunMixOnOllama mixes text (32 in, 128 out) and chat (512 in, 256
// out) requests in one level on the testbed: each class keeps its
// scenario's lengths and the report summarizes both.
func TestRunMixOnOllama(t *testing.T) {
	url, model := testenv.Ollama(t)
	dir := t.TempDir()
	report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
	_, stderr, err := cliRun(context.Background(), "run", "--backend", "ollama", "--url", url, "--model", model,
		"--mix", "text:0.6,chat:0.4", "--concurrency", "4", "--requests", "20", "--warmup", "2", "--out", report, "--records", recs, "--quiet")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	checkRebuild(t, report, readRecords(t, recs))
	l := readDoc(t, report).Runs[0].Levels[0]
	if l.Requests != 20 || l.Errors != 0 || len(l.Classes) != 2 {
		t.Fatalf("level %d requests, %d errors, classes %d", l.Requests, l.Errors, len(l.Classes))
	}
	chat, text := l.Classes[0], l.Classes[1]
	t.Logf("chat: %d requests, prompt %.1f, E2E p50 %.1f ms; text: %d requests, prompt %.1f, E2E p50 %.1f ms; all: %.0f tok/s",
		chat.Requests, deref(chat.MeanPromptTokens), deref(chat.E2EP50Ms), text.Requests, deref(text.MeanPromptTokens), deref(text.E2EP50Ms), deref(l.ThroughputTokS))
	if chat.Class != "chat" || text.Class != "text" || chat.Requests+text.Requests != 20 || chat.Requests == 0 || text.Requests == 0 {
		t.Fatalf("classes %s:%d %s:%d", chat.Class, chat.Requests, text.Class, text.Requests)
	}
	if math.Abs(deref(chat.MeanPromptTokens)-512) > 10 || math.Abs(deref(text.MeanPromptTokens)-32) > 2 {
		t.Errorf("mean prompt tokens chat %.1f, text %.1f", deref(chat.MeanPromptTokens), deref(text.MeanPromptTokens))
	}
	if *chat.OutputTokens != 256*chat.Requests || *text.OutputTokens != 128*text.Requests {
		t.Errorf("output tokens chat %d, text %d", *chat.OutputTokens, *text.OutputTokens)
	}
}
