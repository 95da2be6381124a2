package simserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// maxBodyBytes bounds a request body (images travel base64 inside it).
const maxBodyBytes = 64 << 20

// apiRequest is the union of the generation request bodies the
// personalities take: OpenAI chat and completions (with vLLM's and
// llama.cpp's extra fields), Ollama's chat and generate, TGI's generate.
type apiRequest struct {
	Model    string       `json:"model"`
	Messages []apiMessage `json:"messages"`
	// Prompt is a completion's prompt (a string or a list of them) or
	// Ollama's generate prompt.
	Prompt        json.RawMessage `json:"prompt"`
	Stream        *bool           `json:"stream"`
	StreamOptions *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	NPredict            *int   `json:"n_predict"` // llama.cpp
	Seed                *int64 `json:"seed"`
	// Options are Ollama's.
	Options *struct {
		NumPredict *int   `json:"num_predict"`
		Seed       *int64 `json:"seed"`
	} `json:"options"`
	Images []string `json:"images"` // Ollama generate
	// Inputs and Parameters are TGI's /generate_stream.
	Inputs     string `json:"inputs"`
	Parameters *struct {
		MaxNewTokens *int   `json:"max_new_tokens"`
		Seed         *int64 `json:"seed"`
		Details      bool   `json:"details"`
	} `json:"parameters"`
}

// apiMessage is a chat message: content is a string or a list of parts
// (OpenAI), images a list of base64 strings (Ollama).
type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Images  []string        `json:"images"`
}

// contentPart is one part of an OpenAI message's content list.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// genRequest is a parsed generation request.
type genRequest struct {
	model  string
	text   string // the prompt's text (messages joined), for Ollama's context
	prompt int    // prompt tokens, template included, images excluded
	images int
	// maxTokens is the output asked for; -1 = the server's default.
	maxTokens                     int
	stream                        bool
	includeUsage, continuousUsage bool
	seed                          *int64
	details                       bool // TGI
	chat                          bool
}

// parseRequest reads a generation request body; chat says whether it is
// a chat (messages, template applied) or a raw prompt.
func parseRequest(r *http.Request, chat, ollamaTemplate bool) (*genRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %v", err)
	}
	if len(body) > maxBodyBytes {
		return nil, fmt.Errorf("request body over %d MiB", maxBodyBytes>>20)
	}
	var in apiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not the JSON expected: %v", err)
	}
	g := &genRequest{model: in.Model, maxTokens: -1, chat: chat}
	if err := g.readPrompt(&in, chat, ollamaTemplate); err != nil {
		return nil, err
	}
	g.readLimits(&in)
	g.stream = in.Stream != nil && *in.Stream
	if o := in.StreamOptions; o != nil {
		g.includeUsage, g.continuousUsage = o.IncludeUsage, o.ContinuousUsageStats
	}
	if in.Stream == nil && ollamaTemplate {
		g.stream = true // Ollama streams unless told not to
	}
	return g, nil
}

// readPrompt reads the prompt into g: its text, its tokens with the chat
// template's, and its images, from the chat messages, TGI's inputs or a
// completion prompt (with Ollama's template around it).
func (g *genRequest) readPrompt(in *apiRequest, chat, ollamaTemplate bool) error {
	var text bytes.Buffer
	switch {
	case chat:
		if len(in.Messages) == 0 {
			return fmt.Errorf("messages: at least one message is required")
		}
		for _, m := range in.Messages {
			t, imgs, err := messageContent(m.Content)
			if err != nil {
				return err
			}
			text.WriteString(t)
			g.prompt += sim.CountTokens(t) + sim.ChatTemplateTokens
			g.images += imgs + len(m.Images)
		}
		g.prompt += sim.ReplyTemplateTokens
	case in.Inputs != "":
		text.WriteString(in.Inputs)
		g.prompt = sim.CountTokens(in.Inputs)
	default:
		t, err := promptText(in.Prompt)
		if err != nil {
			return err
		}
		text.WriteString(t)
		g.prompt = sim.CountTokens(t)
		if ollamaTemplate {
			g.prompt += sim.ChatTemplateTokens + sim.ReplyTemplateTokens
		}
		g.images = len(in.Images)
	}
	g.text = text.String()
	if g.prompt < 1 {
		g.prompt = 1 // a BOS or template token at least
	}
	return nil
}

// readLimits reads the reply's token limit and seed into g, in each
// API's words: OpenAI's and llama.cpp's fields, then Ollama's options,
// then TGI's parameters (with its details).
func (g *genRequest) readLimits(in *apiRequest) {
	for _, p := range []*int{in.MaxCompletionTokens, in.MaxTokens, in.NPredict} {
		if p != nil && *p >= 0 {
			g.maxTokens = *p
			break
		}
	}
	g.seed = in.Seed
	if o := in.Options; o != nil {
		if o.NumPredict != nil && *o.NumPredict >= 0 {
			g.maxTokens = *o.NumPredict
		}
		if o.Seed != nil {
			g.seed = o.Seed
		}
	}
	if p := in.Parameters; p != nil {
		if p.MaxNewTokens != nil {
			g.maxTokens = *p.MaxNewTokens
		}
		if p.Seed != nil {
			g.seed = p.Seed
		}
		g.details = p.Details
	}
}

// messageContent is a message's text and its number of images.
func messageContent(raw json.RawMessage) (string, int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, 0, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", 0, fmt.Errorf("messages: content must be a string or a list of parts")
	}
	var b bytes.Buffer
	imgs := 0
	for _, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url", "image":
			imgs++
		}
	}
	return b.String(), imgs, nil
}

// promptText is a completion prompt: a string, or the first of a list.
func promptText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", fmt.Errorf("prompt is required")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil && len(list) > 0 {
		return list[0], nil
	}
	return "", fmt.Errorf("prompt must be a string or a list of strings")
}

// gen is one generation request in flight: what it asked, what the
// engine did with it and when (virtual times; -1 until it happens).
type gen struct {
	s        *Server
	req      *genRequest
	id       uint64
	idText   string
	out      int // output tokens it will generate
	prompt   int // prompt tokens the server reports (images included)
	arrived  time.Time
	created  int64 // unix seconds
	fault    faultKind
	slow     bool
	queuedAt time.Duration
	schedAt  time.Duration
	firstAt  time.Duration
	lastAt   time.Duration
	prevAt   time.Duration
	// generated is the tokens sent so far; words their vocabulary indices
	// (for TGI's generated_text and Ollama's context).
	generated int
	words     []int
	rng       *rand.Rand
	gaps      []float64 // inter-token gaps, seconds
}

// newGen numbers a request and decides its fault and output length.
func (s *Server) newGen(req *genRequest, arrived time.Time) *gen {
	id := s.ids.Add(1)
	g := &gen{s: s, req: req, id: id, arrived: arrived, created: arrived.Unix(),
		queuedAt: -1, schedAt: -1, firstAt: -1, lastAt: -1, prevAt: -1}
	g.idText = fmt.Sprintf("%016x%016x", s.seed^0x5eb0, id)
	g.fault, g.slow = s.fault.pick()
	key := id
	if req.seed != nil {
		key = uint64(*req.seed) ^ 0x9e3779b97f4a7c15
	}
	g.rng = rand.New(rand.NewPCG(s.seed, key))
	g.prompt = req.prompt + req.images*s.cfg.Model.ImageTokens
	return g
}

// nextWord draws the next output token.
func (g *gen) nextWord() string {
	w := g.rng.IntN(len(sim.OutputWords))
	g.words = append(g.words, w)
	return sim.OutputWords[w]
}

// outputText is the whole generated text so far.
func (g *gen) outputText() string {
	var b bytes.Buffer
	for _, w := range g.words {
		b.WriteString(sim.OutputWords[w])
	}
	return b.String()
}

// seconds converts a virtual duration to seconds.
func seconds(d time.Duration) float64 { return d.Seconds() }

// outputFor is the tokens request g generates: what it asked for, or the
// server's default cap (vLLM: up to max_model_len; SGLang: 128, its
// SamplingParams default; TGI: 100, router/src/lib.rs
// default_max_new_tokens; llama.cpp and Ollama: until the slot's context
// is full, n_predict and num_predict −1).
func (s *Server) outputFor(req *genRequest) int {
	if req.maxTokens >= 0 {
		return req.maxTokens
	}
	srv := s.cfg.Server
	switch {
	case personalities[s.as].defaultOutput > 0:
		return personalities[s.as].defaultOutput
	case !sim.Batched(s.cfg.Backend):
		return max(srv.SlotContext-req.prompt, 1)
	case srv.MaxModelLen > 0:
		return max(srv.MaxModelLen-req.prompt, 1)
	}
	return 256
}

// fitSlot applies what a slot server does to a request longer than its
// slot, as the engine does: Ollama keeps the end of a prompt that does not
// fit (prompt_eval_count counts what it kept), llama.cpp stops generating
// when the slot's context is full.
func (s *Server) fitSlot(g *gen) {
	ctx := s.cfg.Server.SlotContext
	switch s.cfg.Backend {
	case backend.Ollama:
		if g.prompt >= ctx {
			g.prompt = ctx - 1
		}
	case backend.LlamaCpp:
		if g.prompt < ctx {
			g.out = min(g.out, ctx-g.prompt)
		}
	}
}

// check refuses a request the server would refuse before generating:
// a model it does not serve, images for a text-only model, a prompt and
// output longer than the context. It answers the error and returns false.
func (s *Server) check(w http.ResponseWriter, g *gen) bool {
	req := g.req
	if !s.modelMatches(req.model) {
		msg := fmt.Sprintf("The model `%s` does not exist.", req.model)
		if s.as == backend.Ollama {
			msg = fmt.Sprintf("model %q not found, try pulling it first", req.model)
		}
		s.apiError(w, http.StatusNotFound, "NotFoundError", msg)
		return false
	}
	if req.images > 0 && s.cfg.Model.ImageTokens == 0 {
		s.apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("%s is not a multimodal model: the request has %d image(s)", s.cfg.Model.Name, req.images))
		return false
	}
	if g.out == 0 {
		s.apiError(w, http.StatusBadRequest, "BadRequestError", "max_tokens must be at least 1")
		return false
	}
	srv := s.cfg.Server
	switch {
	case sim.Batched(s.cfg.Backend) && srv.MaxModelLen > 0 && g.out > srv.MaxModelLen-g.prompt:
		// out > max − prompt, not prompt + out > max: a max_tokens near
		// 2^63 would wrap the sum below the limit.
		requested := "more than 2^63"
		if g.out <= math.MaxInt-g.prompt {
			requested = strconv.Itoa(g.prompt + g.out)
		}
		s.apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %s tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			srv.MaxModelLen, requested, g.prompt, g.out))
		return false
	case s.cfg.Backend == backend.LlamaCpp && g.prompt >= srv.SlotContext:
		s.apiError(w, http.StatusBadRequest, "exceed_context_size_error", fmt.Sprintf(
			"the request exceeds the available context size, try increasing it (%d prompt tokens, %d per slot)", g.prompt, srv.SlotContext))
		return false
	}
	return true
}

// format writes one personality's response to a generation request.
type format interface {
	// contentType is the streaming response's Content-Type.
	contentType() string
	// token appends the chunk of g's latest token (g.generated counts
	// it); last says it is the final one.
	token(b []byte, g *gen, text string, last bool) []byte
	// finish appends what follows the last token: usage, timings, end
	// marker.
	finish(b []byte, g *gen) []byte
	// whole is the non-streaming answer once g finished.
	whole(g *gen) any
}

// serveGen runs a parsed generation request through the engine and
// answers it in format f.
func (s *Server) serveGen(w http.ResponseWriter, r *http.Request, req *genRequest, f format) {
	g := s.newGen(req, time.Now())
	g.out = s.outputFor(req)
	s.fitSlot(g)
	if !s.check(w, g) {
		return
	}
	s.ctr.received()
	switch g.fault {
	case fault429:
		w.Header().Set("Retry-After", "1")
		s.apiError(w, http.StatusTooManyRequests, "RateLimitError", "simulated fault: too many requests")
		return
	case fault5xx:
		s.apiError(w, http.StatusInternalServerError, "InternalServerError", "simulated fault: internal server error")
		return
	}
	ctx := r.Context()
	if g.slow {
		select {
		case <-time.After(s.opts.Faults.FirstTokenDelay):
		case <-ctx.Done():
			return
		}
	}
	box := newMailbox()
	h, _, err := s.drv.submit(sim.Request{PromptTokens: req.prompt, OutputTokens: g.out, Images: req.images}, box)
	if err != nil {
		s.apiError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", err.Error())
		return
	}
	st := &streamer{s: s, w: w, g: g, f: f, stream: req.stream}
	finished := false
	defer func() { // also when a cut fault panics out of run
		if !finished {
			s.drv.cancel(h)
			s.ctr.aborted()
		}
	}()
	finished = st.run(ctx, box)
}

// streamer writes one response as its request's events arrive.
type streamer struct {
	s       *Server
	w       http.ResponseWriter
	g       *gen
	f       format
	stream  bool
	started bool
	buf     []byte
}

// next says what a streamer does after an event.
type next uint8

const (
	goOn  next = iota // wait for more events
	done              // the response is complete
	ended             // the response ended early (rejected)
	stall             // a stall fault: go silent
)

// run handles the request's events until it finished (true) or the
// client, a fault or the server's end stopped it (false).
func (st *streamer) run(ctx context.Context, box *mailbox) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-st.s.drv.quit:
			return false
		case <-box.wake:
		}
		evs := box.take()
		for _, ev := range evs {
			switch st.event(ev) {
			case done:
				st.flush()
				st.timeWrites(evs)
				st.s.finished(st.g)
				return true
			case ended:
				return false
			case stall:
				st.flush()
				select { // silent until the client gives up
				case <-ctx.Done():
				case <-st.s.drv.quit:
				}
				return false
			}
		}
		st.flush()
		st.timeWrites(evs)
	}
}

// timeWrites records how late the tokens of evs, just written, went out.
func (st *streamer) timeWrites(evs []sim.Event) {
	now := time.Now()
	for _, ev := range evs {
		if ev.Kind == sim.EventToken {
			st.s.late.observe(now.Sub(st.s.drv.wallAt(ev.At)))
		}
	}
}

// event handles one engine event.
func (st *streamer) event(ev sim.Event) next {
	g := st.g
	switch ev.Kind {
	case sim.EventQueued:
		g.queuedAt = ev.At
	case sim.EventScheduled:
		if g.schedAt < 0 {
			g.schedAt = ev.At
			st.s.ctr.admit()
		}
		st.begin()
		if g.fault == faultCut && st.s.opts.Faults.CutAfter == 0 {
			st.cut()
		}
		if g.fault == faultStall && st.s.opts.Faults.StallAfter == 0 {
			return stall
		}
	case sim.EventToken:
		st.begin()
		g.generated += ev.Tokens
		if g.firstAt < 0 {
			g.firstAt = ev.At
		} else {
			g.gaps = append(g.gaps, seconds(ev.At-g.prevAt))
		}
		g.prevAt = ev.At
		last := g.generated >= g.out
		text := g.nextWord()
		if st.stream {
			st.buf = st.f.token(st.buf, g, text, last)
		}
		if g.fault == faultCut && g.generated >= st.s.opts.Faults.CutAfter {
			st.cut()
		}
		if g.fault == faultStall && g.generated >= st.s.opts.Faults.StallAfter {
			return stall
		}
	case sim.EventFinished:
		g.lastAt = ev.At
		st.begin()
		if st.stream {
			st.buf = st.f.finish(st.buf, g)
		} else {
			b, _ := json.Marshal(st.f.whole(g))
			st.buf = append(st.buf, b...)
		}
		return done
	case sim.EventRejected:
		if !st.started {
			st.s.apiError(st.w, http.StatusBadRequest, "BadRequestError", ev.Reason)
			st.started = true
			return ended
		}
		st.buf = append(st.buf, "data: "...)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": ev.Reason, "code": 400}})
		st.buf = append(st.buf, b...)
		st.buf = append(st.buf, "\n\n"...)
		st.flush()
		return ended
	}
	return goOn
}

// begin sends the response headers once.
func (st *streamer) begin() {
	if st.started {
		return
	}
	st.started = true
	h := st.w.Header()
	if st.stream {
		h.Set("Content-Type", st.f.contentType())
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
	}
	st.w.WriteHeader(http.StatusOK)
	if fl, ok := st.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// flush writes what was built and pushes it to the client.
func (st *streamer) flush() {
	if len(st.buf) == 0 {
		return
	}
	_, _ = st.w.Write(st.buf)
	st.buf = st.buf[:0]
	if fl, ok := st.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// cut drops the connection mid-stream: what was built so far goes out,
// then net/http closes the connection without ending the response.
func (st *streamer) cut() {
	st.flush()
	panic(http.ErrAbortHandler)
}
