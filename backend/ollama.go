package backend

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/servebench/servebench/record"
)

// ollamaClient is the adapter for Ollama's native API: POST /api/chat or
// /api/generate, streamed as NDJSON, with options.num_predict, temperature
// 0 and seed. Ollama reports prompt_eval_count, eval_count and its
// *_duration timings on the final "done": true line.
type ollamaClient struct {
	base
}

// Do implements Client.
func (c *ollamaClient) Do(ctx context.Context, rq *Request, res *record.Result) {
	path := c.cfg.Kind.Describe().Paths[c.cfg.API]
	c.do(ctx, exchange{rq: rq, path: path, build: c.body, fr: ndjsonFrame{}, dec: &ollamaDecoder{}}, res)
}

// Tokenize implements Client: Ollama has no tokenizer endpoint.
func (c *ollamaClient) Tokenize(context.Context, string) (int, error) {
	return 0, ErrUnsupported
}

// Warnings implements Client.
func (c *ollamaClient) Warnings() []string {
	return []string{c.cfg.Kind.Describe().eosWarning}
}

type ollamaBody struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages,omitempty"` // /api/chat
	Prompt   *string         `json:"prompt,omitempty"`   // /api/generate
	Images   []string        `json:"images,omitempty"`   // /api/generate
	Stream   bool            `json:"stream"`
	Options  ollamaOptions   `json:"options"`
}

type ollamaMessage struct {
	Role    string   `json:"role"`
	Content string   `json:"content"`
	Images  []string `json:"images,omitempty"`
}

type ollamaOptions struct {
	NumPredict  int      `json:"num_predict"`
	Temperature float64  `json:"temperature"`
	TopP        *float64 `json:"top_p,omitempty"`
	TopK        *int     `json:"top_k,omitempty"`
	Seed        int64    `json:"seed"`
	Stop        []string `json:"stop,omitempty"`
}

func (c *ollamaClient) body(rq *Request) ([]byte, *failure) {
	var images []string
	for _, im := range rq.Images {
		images = append(images, base64.StdEncoding.EncodeToString(im.Data))
	}
	b := ollamaBody{Model: c.cfg.Model, Stream: true,
		Options: ollamaOptions{NumPredict: rq.MaxTokens, Temperature: 0, Seed: rq.Seed}}
	sp := &c.cfg.Sampling
	if sp.Temperature != nil {
		b.Options.Temperature = *sp.Temperature
	}
	if sp.Seed != nil {
		b.Options.Seed = *sp.Seed
	}
	b.Options.TopP, b.Options.TopK, b.Options.Stop = sp.TopP, sp.TopK, sp.Stop
	if c.cfg.API == Generate {
		prompt := flatPrompt(rq)
		b.Prompt, b.Images = &prompt, images
	} else {
		b.Messages = make([]ollamaMessage, 0, len(rq.History)+1)
		for _, m := range rq.History {
			b.Messages = append(b.Messages, ollamaMessage{Role: string(m.Role), Content: m.Content})
		}
		b.Messages = append(b.Messages, ollamaMessage{Role: string(User), Content: rq.Prompt, Images: images})
	}
	out, err := json.Marshal(&b)
	if err != nil {
		return nil, failf(record.ReasonInvalidRequest, "invalid request: %v", err)
	}
	return out, nil
}

// ollamaLine holds the fields servebench reads from one NDJSON line;
// counts and durations (nanoseconds) are -1 when absent.
type ollamaLine struct {
	// text is message.content or response, and whether message.thinking
	// or thinking was non-empty (Ollama from 0.9 with "think": true).
	text               chunkText
	done               bool
	doneReason         []byte
	promptEvalCount    countVal
	evalCount          countVal
	promptEvalDuration int64
	evalDuration       int64
	loadDuration       int64
	totalDuration      int64
	errRaw             []byte
}

var emptyOllamaLine = ollamaLine{promptEvalCount: noCount, evalCount: noCount,
	promptEvalDuration: -1, evalDuration: -1, loadDuration: -1, totalDuration: -1}

// ollamaDecoder decodes NDJSON lines without allocating (see jsonScan).
type ollamaDecoder struct {
	s jsonScan
	l ollamaLine
}

func (d *ollamaDecoder) chunk(data []byte, now time.Time, st *stream) (bool, *failure) {
	if err := d.decode(data); err != nil {
		return false, failf(record.ReasonMalformed, "malformed chunk: %v: %s", err, excerpt(data, st.secrets))
	}
	l := &d.l
	if l.errRaw != nil {
		return false, failf(record.ReasonStreamError, "server error in stream: %s", excerpt(l.errRaw, st.secrets))
	}
	if l.text.any() {
		st.content(now, -1, l.text)
	}
	if !l.done {
		return false, nil
	}
	st.finishReason = string(l.doneReason)
	if l.promptEvalCount.present() {
		st.prompt = st.promptCount("prompt_eval_count", l.promptEvalCount)
	}
	if l.evalCount.present() {
		st.output = st.outputCount("eval_count", l.evalCount)
	}
	st.timings = timings{promptEval: l.promptEvalDuration, eval: l.evalDuration,
		load: l.loadDuration, total: l.totalDuration}
	return true, nil
}

func (d *ollamaDecoder) decode(data []byte) error {
	s := &d.s
	s.reset(data)
	d.l = emptyOllamaLine
	if err := openObject(s); err != nil {
		return err
	}
	if err := s.fields(d.lineField); err != nil {
		return err
	}
	return s.end()
}

// lineField reads one member of an NDJSON line.
func (d *ollamaDecoder) lineField(key []byte) (err error) {
	s, l := &d.s, &d.l
	var has bool
	switch string(key) {
	case "message":
		err = s.object(d.messageField)
	case "response":
		l.text.content, err = s.stringContents()
	case "thinking":
		has, err = s.nonEmptyString()
	case "done":
		l.done, err = s.boolean()
	case "done_reason":
		l.doneReason, err = s.stringOrNull()
	case "prompt_eval_count":
		l.promptEvalCount, err = scanCount(s)
	case "eval_count":
		l.evalCount, err = scanCount(s)
	case "prompt_eval_duration":
		l.promptEvalDuration, err = s.integer()
	case "eval_duration":
		l.evalDuration, err = s.integer()
	case "load_duration":
		l.loadDuration, err = s.integer()
	case "total_duration":
		l.totalDuration, err = s.integer()
	case "error":
		l.errRaw, err = rawNonNull(s)
	default:
		err = s.skip()
	}
	l.text.reasoning = l.text.reasoning || has
	return err
}

// messageField reads one member of a chat message.
func (d *ollamaDecoder) messageField(key []byte) (err error) {
	s := &d.s
	var has bool
	switch string(key) {
	case "content":
		d.l.text.content, err = s.stringContents()
	case "thinking":
		has, err = s.nonEmptyString()
	default:
		err = s.skip()
	}
	d.l.text.reasoning = d.l.text.reasoning || has
	return err
}
