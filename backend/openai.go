package backend

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"time"

	"github.com/servebench/servebench/record"
)

// openAIClient is the adapter for OpenAI-compatible servers (vLLM,
// llama.cpp llama-server, SGLang, TGI, any /v1 endpoint): POST
// /v1/chat/completions or /v1/completions, streamed as SSE with
// stream_options.include_usage, greedy (temperature 0), fixed max_tokens and
// seed, plus each server's own way to ignore EOS.
type openAIClient struct {
	base
}

// newOpenAIClient is the OpenAI-compatible adapter over b.
func newOpenAIClient(b base) Client { return &openAIClient{base: b} }

// Do implements Client.
func (c *openAIClient) Do(ctx context.Context, rq *Request, res *record.Result) {
	path := c.cfg.Kind.Describe().Paths[c.cfg.API]
	sd := &sseOpenAI{}
	c.do(ctx, exchange{rq: rq, path: path, build: c.body, fr: &sd.fr, dec: &sd.dec}, res)
}

// sseOpenAI is the per-request state of an OpenAI-compatible stream, its
// SSE framing and chunk decoder, allocated together.
type sseOpenAI struct {
	fr  sseFrame
	dec openAIDecoder
}

// Warnings implements Client: a family without its own ignore-EOS field
// (TGI, generic OpenAI endpoints: EOSNone) gets none, so a request may
// stop short at EOS.
func (c *openAIClient) Warnings() []string {
	d := c.cfg.Kind.Describe()
	switch mode := c.cfg.Sampling.IgnoreEOS; {
	case mode == IgnoreEOSOff:
		return []string{"--ignore-eos off: requests may stop at EOS before max_tokens; output tokens are verified against the request"}
	case mode == IgnoreEOSOn && d.EOS == EOSNone:
		return []string{"--ignore-eos on: ignore_eos is sent to " + d.Name + ", which may not honour it (or may reject the field)"}
	case d.EOS == EOSNone:
		return []string{d.eosWarning}
	}
	return nil
}

// openAIBody is the request body; per-server fields are omitted when nil.
type openAIBody struct {
	Model         string              `json:"model"`
	Messages      []openAIMessage     `json:"messages,omitempty"`
	Prompt        *string             `json:"prompt,omitempty"`
	Stream        bool                `json:"stream"`
	StreamOptions openAIStreamOptions `json:"stream_options"`
	MaxTokens     int                 `json:"max_tokens"`
	Temperature   float64             `json:"temperature"`
	TopP          *float64            `json:"top_p,omitempty"`
	TopK          *int                `json:"top_k,omitempty"`
	Seed          int64               `json:"seed"`
	Stop          []string            `json:"stop,omitempty"`
	IgnoreEOS     *bool               `json:"ignore_eos,omitempty"`
	MinTokens     *int                `json:"min_tokens,omitempty"`   // vLLM
	NPredict      *int                `json:"n_predict,omitempty"`    // llama.cpp
	CachePrompt   *bool               `json:"cache_prompt,omitempty"` // llama.cpp
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsageStats (vLLM) puts cumulative usage on every chunk,
	// which gives per-chunk token counts.
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"`
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // string, or []any of text/image parts
}

type openAITextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type openAIImagePart struct {
	Type     string         `json:"type"`
	ImageURL openAIImageURL `json:"image_url"`
}

type openAIImageURL struct {
	URL string `json:"url"`
}

// body builds the JSON request body for rq.
func (c *openAIClient) body(rq *Request) ([]byte, *failure) {
	b := openAIBody{
		Model: c.cfg.Model, Stream: true, MaxTokens: rq.MaxTokens, Seed: rq.Seed,
		StreamOptions: openAIStreamOptions{IncludeUsage: true},
	}
	if c.cfg.API == Completions {
		if len(rq.Images) > 0 {
			return nil, failf(record.ReasonInvalidRequest, "invalid request: images need the chat API, not completions")
		}
		prompt := flatPrompt(rq)
		b.Prompt = &prompt
	} else {
		b.Messages = make([]openAIMessage, 0, len(rq.History)+1)
		for _, m := range rq.History {
			b.Messages = append(b.Messages, openAIMessage{Role: string(m.Role), Content: m.Content})
		}
		b.Messages = append(b.Messages, openAIMessage{Role: string(User), Content: chatContent(rq)})
	}
	c.sampling(&b)
	c.lengthFields(&b, rq)
	out, err := json.Marshal(&b)
	if err != nil {
		return nil, failf(record.ReasonInvalidRequest, "invalid request: %v", err)
	}
	return out, nil
}

// sampling writes the user's sampling parameters (Config.Sampling) into
// b: temperature 0 unless set, top_p, top_k and stop when set, the
// sampling seed in place of the workload's.
func (c *openAIClient) sampling(b *openAIBody) {
	sp := &c.cfg.Sampling
	if sp.Temperature != nil {
		b.Temperature = *sp.Temperature
	}
	if sp.Seed != nil {
		b.Seed = *sp.Seed
	}
	b.TopP, b.TopK, b.Stop = sp.TopP, sp.TopK, sp.Stop
}

// lengthFields writes each family's way to produce exactly MaxTokens
// tokens: ignore_eos per Sampling.IgnoreEOS (a family without its own,
// EOSNone, only when asked for), then the family's own fields
// (Descriptor.request: vLLM's min_tokens and per-chunk usage, llama.cpp's
// n_predict and cache_prompt).
func (c *openAIClient) lengthFields(b *openAIBody, rq *Request) {
	d := c.cfg.Kind.Describe()
	mode := c.cfg.Sampling.IgnoreEOS
	ignore := mode != IgnoreEOSOff
	if d.EOS == EOSNone {
		ignore = mode == IgnoreEOSOn
	}
	if ignore {
		yes := true
		b.IgnoreEOS = &yes
	}
	if d.request != nil {
		d.request(b, rq, ignore)
	}
}

// chatContent is the user message content: the prompt as a string, or text
// then image_url parts with base64 data: URLs when there are images.
func chatContent(rq *Request) any {
	if len(rq.Images) == 0 {
		return rq.Prompt
	}
	parts := make([]any, 0, 1+len(rq.Images))
	parts = append(parts, openAITextPart{Type: "text", Text: rq.Prompt})
	for _, im := range rq.Images {
		parts = append(parts, openAIImagePart{Type: "image_url", ImageURL: openAIImageURL{URL: dataURL(im)}})
	}
	return parts
}

// dataURL encodes an image as a data: URL.
func dataURL(im Image) string {
	mime := im.MIME
	if mime == "" {
		mime = "image/png"
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// openAIChunk holds the only fields of a chunk servebench reads; counts are
// noCount and times -1 when absent. Byte slices point into the chunk's
// line and are valid only while it is handled.
type openAIChunk struct {
	text                  chunkText // first choice's content/text and reasoning
	finish                []byte    // first choice's finish_reason
	prompt, completion    countVal  // usage
	cached                countVal  // usage.prompt_tokens_details.cached_tokens
	reasoningTokens       countVal  // usage.completion_tokens_details.reasoning_tokens (SGLang: usage.reasoning_tokens)
	promptN, predictedN   countVal  // llama.cpp timings
	cacheN                countVal  // llama.cpp timings.cache_n
	promptMS, predictedMS float64
	errRaw                []byte // a non-null "error" member
}

var emptyOpenAIChunk = openAIChunk{prompt: noCount, completion: noCount, cached: noCount, reasoningTokens: noCount,
	promptN: noCount, predictedN: noCount, cacheN: noCount, promptMS: -1, predictedMS: -1}

// openAIDecoder decodes SSE chunks into a stream without allocating:
// it walks each chunk with a jsonScan and reads only choices[0].delta
// (content, reasoning_content, reasoning), choices[0].text,
// choices[0].finish_reason, usage (with its prompt_tokens_details
// .cached_tokens and completion_tokens_details.reasoning_tokens), llama.cpp's
// timings and error.
type openAIDecoder struct {
	s jsonScan
	c openAIChunk
}

func (d *openAIDecoder) chunk(data []byte, now time.Time, st *stream) (bool, *failure) {
	if err := d.decode(data); err != nil {
		return false, failf(record.ReasonMalformed, "malformed chunk: %v: %s", err, excerpt(data, st.secrets))
	}
	c := &d.c
	if c.errRaw != nil {
		return false, failf(record.ReasonStreamError, "server error in stream: %s", excerpt(c.errRaw, st.secrets))
	}
	cum := -1
	switch {
	case c.completion.present():
		cum = st.outputCount("completion_tokens", c.completion)
	case c.predictedN.present():
		cum = st.outputCount("timings.predicted_n", c.predictedN)
	}
	if c.completion.present() || c.predictedN.present() {
		st.output = cum
	}
	switch {
	case c.prompt.present():
		st.prompt = st.promptCount("prompt_tokens", c.prompt)
	case c.promptN.present():
		// llama.cpp's prompt_n counts only the tokens it evaluated; the
		// ones it took from its cache are cache_n.
		st.prompt = st.promptCount("timings.prompt_n", c.promptN)
		if n := st.promptCount("timings.cache_n", c.cacheN); st.prompt >= 0 && n > 0 {
			st.prompt += n
		}
	}
	switch {
	case c.cached.present():
		st.cached = st.promptCount("cached_tokens", c.cached)
	case c.cacheN.present():
		st.cached = st.promptCount("timings.cache_n", c.cacheN)
	}
	if c.reasoningTokens.present() {
		st.reasoning.reported = st.outputCount("reasoning_tokens", c.reasoningTokens)
	}
	if c.promptMS >= 0 {
		st.timings.promptEval = msToNS(c.promptMS)
	}
	if c.predictedMS >= 0 {
		st.timings.eval = msToNS(c.predictedMS)
	}
	if len(c.finish) > 0 && string(c.finish) != st.finishReason {
		st.finishReason = string(c.finish)
	}
	if c.text.any() {
		st.content(now, cum, c.text)
	}
	return false, nil
}

// decode fills d.c from one chunk.
func (d *openAIDecoder) decode(data []byte) error {
	s := &d.s
	s.reset(data)
	d.c = emptyOpenAIChunk
	if err := openObject(s); err != nil {
		return err
	}
	if err := s.fields(d.chunkField); err != nil {
		return err
	}
	return s.end()
}

// chunkField reads one member of a chunk.
func (d *openAIDecoder) chunkField(key []byte) (err error) {
	s := &d.s
	switch string(key) {
	case "choices":
		err = d.choices()
	case "usage":
		err = s.object(d.usageField)
	case "timings":
		err = s.object(d.timingsField)
	case "error":
		d.c.errRaw, err = rawNonNull(s)
	case "object": // older vLLM streams errors as {"object":"error",...}
		var v []byte
		if v, err = s.stringOrNull(); string(v) == "error" {
			d.c.errRaw = s.b
		}
	default:
		err = s.skip()
	}
	return err
}

// openObject opens the top-level object; a null chunk is an error.
func openObject(s *jsonScan) error {
	null, err := s.open('{')
	if err == nil && null {
		err = s.fail("chunk is null")
	}
	return err
}

// rawNonNull skips a value and returns its text, or nil for null.
func rawNonNull(s *jsonScan) ([]byte, error) {
	if s.null() {
		return nil, nil
	}
	start := s.i
	err := s.skip()
	return s.b[start:s.i], err
}

func (d *openAIDecoder) choices() error {
	s := &d.s
	if null, err := s.open('['); err != nil || null {
		return err
	}
	for n := 0; ; n++ {
		more, err := s.element(n)
		if err != nil || !more {
			return err
		}
		if n > 0 { // choices beyond the first (n > 1) are not ours
			err = s.skip()
		} else {
			err = s.object(d.choiceField)
		}
		if err != nil {
			return err
		}
	}
}

// choiceField reads one member of the first choice.
func (d *openAIDecoder) choiceField(key []byte) (err error) {
	s := &d.s
	switch string(key) {
	case "delta":
		err = s.object(d.deltaField)
	case "text": // /v1/completions
		d.c.text.content, err = s.stringContents()
	case "finish_reason":
		d.c.finish, err = s.stringOrNull()
	default:
		err = s.skip()
	}
	return err
}

// deltaField reads one member of a chat delta: the answer's content, and
// reasoning in its own field (reasoning_content: SGLang, llama.cpp, vLLM up
// to 0.10; reasoning: vLLM from 0.11).
func (d *openAIDecoder) deltaField(key []byte) (err error) {
	s := &d.s
	var has bool
	switch string(key) {
	case "content":
		d.c.text.content, err = s.stringContents()
	case "reasoning_content", "reasoning":
		has, err = s.nonEmptyString()
	default:
		err = s.skip()
	}
	d.c.text.reasoning = d.c.text.reasoning || has
	return err
}

// usageField reads one member of the usage object.
func (d *openAIDecoder) usageField(key []byte) (err error) {
	s := &d.s
	switch string(key) {
	case "prompt_tokens":
		d.c.prompt, err = scanCount(s)
	case "completion_tokens":
		d.c.completion, err = scanCount(s)
	case "prompt_tokens_details":
		err = s.object(d.promptDetailsField)
	case "completion_tokens_details":
		err = s.object(d.completionDetailsField)
	case "reasoning_tokens": // SGLang puts it in usage itself
		d.c.reasoningTokens, err = scanCount(s)
	default:
		err = s.skip()
	}
	return err
}

// promptDetailsField reads one member of usage.prompt_tokens_details.
func (d *openAIDecoder) promptDetailsField(key []byte) (err error) {
	if string(key) == "cached_tokens" {
		d.c.cached, err = scanCount(&d.s)
		return err
	}
	return d.s.skip()
}

// completionDetailsField reads one member of
// usage.completion_tokens_details.
func (d *openAIDecoder) completionDetailsField(key []byte) (err error) {
	if string(key) == "reasoning_tokens" {
		d.c.reasoningTokens, err = scanCount(&d.s)
		return err
	}
	return d.s.skip()
}

// timingsField reads one member of llama.cpp's timings object.
func (d *openAIDecoder) timingsField(key []byte) (err error) {
	s := &d.s
	switch string(key) {
	case "prompt_n":
		d.c.promptN, err = scanCount(s)
	case "predicted_n":
		d.c.predictedN, err = scanCount(s)
	case "cache_n":
		d.c.cacheN, err = scanCount(s)
	case "prompt_ms":
		d.c.promptMS, err = s.float()
	case "predicted_ms":
		d.c.predictedMS, err = s.float()
	default:
		err = s.skip()
	}
	return err
}

// scanCount reads a token count (jsonScan.count) into a countVal.
func scanCount(s *jsonScan) (countVal, error) {
	v, raw, err := s.count()
	return countVal{v: v, raw: raw}, err
}

func msToNS(ms float64) int64 {
	if math.IsNaN(ms) || ms > math.MaxInt64/1e6 {
		return -1
	}
	return int64(math.Round(ms * 1e6))
}
