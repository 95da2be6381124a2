// Package backend holds one adapter per LLM server family. It is the only
// package that speaks HTTP to a server under test: it builds request bodies,
// parses the streamed responses (SSE, NDJSON) and fills record.Results.
package backend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/servebench/servebench/record"
)

// API is the request API a Client uses.
type API string

// Request APIs. OpenAI-compatible servers take Chat or Completions; Ollama
// takes Chat (/api/chat) or Generate (/api/generate).
const (
	Chat        API = "chat"
	Completions API = "completions"
	Generate    API = "generate"
)

// Image is one image attached to a request, already encoded.
type Image struct {
	// MIME is "image/png" or "image/jpeg".
	MIME string
	// Data is the encoded image.
	Data []byte
}

// Role is who said a message of a conversation.
type Role string

// Message roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
)

// Message is one earlier message of a conversation: a shared system
// prompt, an earlier user turn, or the server's answer to it.
type Message struct {
	Role    Role
	Content string
}

// Request is one generation request, independent of the server family.
type Request struct {
	// Prompt is the user text: the last user message.
	Prompt string
	// History are the messages before Prompt, oldest first: a shared
	// system prompt, and the earlier turns of a session with the server's
	// own answers. Chat APIs send them as messages; completion APIs
	// (completions, generate) send their contents and Prompt joined by
	// PromptSeparator as one prompt.
	History []Message
	// Images are attached to the user message, in order.
	Images []Image
	// MaxTokens is the exact number of output tokens asked for; adapters
	// ask the server to ignore EOS where it can.
	MaxTokens int
	// Seed is passed to servers that take one.
	Seed int64
	// ReusePrefix says the workload means requests to share prefixes
	// (sessions, shared system prompts): adapters then leave the server's
	// prompt cache on where they would otherwise turn it off (llama.cpp
	// cache_prompt), so that the cache's effect is measured.
	ReusePrefix bool
	// Answer, when non-nil, is reset and receives the generated text as
	// the server streamed it in its content field (reasoning sent in a
	// separate field is left out), for a workload that sends it back in
	// a later turn. Nil keeps the per-chunk path from copying any text.
	Answer *strings.Builder
	// RunStart, when set, is the run's start: Do then sets Result.StartNS
	// to the moment the request was written, measured from RunStart on
	// the monotonic clock. Zero leaves StartNS to the caller.
	RunStart time.Time
}

// PromptSeparator joins History and Prompt into one prompt on completion
// APIs, which take text rather than messages.
const PromptSeparator = "\n\n"

// FlatPrompt is rq's conversation as one text, as completion APIs send
// it (for records that keep the prompt's text).
func FlatPrompt(rq *Request) string { return flatPrompt(rq) }

// flatPrompt is rq's conversation as one text: History's contents and
// Prompt joined by PromptSeparator (Prompt alone without History).
func flatPrompt(rq *Request) string {
	if len(rq.History) == 0 {
		return rq.Prompt
	}
	var b strings.Builder
	for _, m := range rq.History {
		b.WriteString(m.Content)
		b.WriteString(PromptSeparator)
	}
	b.WriteString(rq.Prompt)
	return b.String()
}

// Config configures a Client.
type Config struct {
	// Kind is the server family; it picks the adapter and its per-server
	// request fields.
	Kind Kind
	// BaseURL is the server's root, with or without a trailing "/v1".
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// API is the request API; empty means Chat.
	API API
	// APIKey is sent as a Bearer token; it must never be written to a
	// record, report or log.
	APIKey string
	// Timeout bounds one request, from the call (connection and write
	// included) to the last chunk; 0 means none. A request past it fails
	// with record.ReasonTimeout.
	Timeout time.Duration
	// HTTPClient is used for requests; nil means a client tuned for many
	// concurrent streams. Whichever it is, redirects are never followed.
	HTTPClient *http.Client
	// Connection is how requests use connections, and so where their
	// clock starts; empty means KeepAlive.
	Connection Connection

	// The user's part of every request (body.go): sampling parameters
	// and ignore-EOS, an extra body merged into each (its fields must not
	// be servebench's own: ExtraBody.Conflicts), and extra headers whose
	// values are redacted as the API key is.
	Sampling  Sampling
	ExtraBody ExtraBody
	Headers   []Header
}

// Connection is how generation requests use connections, which decides
// where their clock starts (docs/metrics.md, "The request clock").
type Connection string

// Connection modes.
const (
	// KeepAlive (the default): connections are pooled and reused, and a
	// request's clock starts when the request has been written, so
	// neither connection set-up nor a wait for a free connection is
	// measured.
	KeepAlive Connection = "keep-alive"
	// PerRequest: every request opens a new connection (and closes it
	// after), and its clock starts at the call, before the connection is
	// opened: TTFT and E2E include the TCP (and TLS) set-up. This is the
	// convention of vLLM's benchmark client (benchmark_serving.py), so a
	// user can reproduce its figures.
	PerRequest Connection = "per-request"
)

// Connections lists the modes in the order help texts show them.
var Connections = []Connection{KeepAlive, PerRequest}

// ParseConnection returns the Connection named s, or an error listing
// the valid names.
func ParseConnection(s string) (Connection, error) {
	for _, c := range Connections {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown connection mode %q (want one of %v)", s, Connections)
}

// ErrUnsupported is returned by Client methods a server family lacks.
var ErrUnsupported = errors.New("not supported by this server")

// Client sends requests to one server.
type Client interface {
	// Do sends req and fills res: TTFTNS, E2ENS, chunk offsets and token
	// counts (measured from the moment the request is written), prompt and
	// output tokens as the server reported them, server timings, HTTP
	// status, FinishReason, and Reason/Error on failure. Do never returns an
	// error: every failure is recorded in res so the level goes on.
	Do(ctx context.Context, req *Request, res *record.Result)
	// Tokenize returns the server's token count for text, or
	// ErrUnsupported where the server has no tokenizer endpoint.
	Tokenize(ctx context.Context, text string) (int, error)
	// Warnings lists parameters this server family cannot honour (TGI and
	// Ollama have no ignore-EOS), as report warnings.
	Warnings() []string
}
