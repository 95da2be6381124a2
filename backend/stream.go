package backend

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/record"
)

// base holds what every adapter shares: the config, the HTTP client and the
// request/stream loop.
type base struct {
	cfg  Config
	hc   *http.Client
	root string
	auth string // "Bearer <key>" or ""
	// authValue is auth as a header value, shared by every request.
	authValue []string
	// posts holds the parsed request URLs (newRequest).
	posts *postTemplates
	// secrets is cfg.secrets(), computed once: every request's stream
	// redacts them (read-only).
	secrets []string
}

func newBase(cfg Config) base {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	b := base{cfg: cfg, hc: noRedirects(hc), root: rootURL(cfg.BaseURL), posts: &postTemplates{}, secrets: cfg.secrets()}
	if cfg.APIKey != "" {
		b.auth = "Bearer " + cfg.APIKey
		b.authValue = []string{b.auth}
	}
	return b
}

var sharedClient atomic.Pointer[http.Client]

// defaultHTTPClient shares one tuned client (one connection pool) between
// all Clients made without Config.HTTPClient.
func defaultHTTPClient() *http.Client {
	if c := sharedClient.Load(); c != nil {
		return c
	}
	sharedClient.CompareAndSwap(nil, NewHTTPClient())
	return sharedClient.Load()
}

// decoder reads the JSON payloads of one server family into a stream.
type decoder interface {
	// chunk handles one payload that arrived at now; it returns end=true
	// when the payload itself is the end marker (Ollama "done": true).
	chunk(data []byte, now time.Time, st *stream) (end bool, f *failure)
}

// exchange is one request as the adapters describe it: the Request, the
// API path to post it to, the body build makes of it, and how the streamed
// answer is split (framing) and decoded (decoder) into the Result.
type exchange struct {
	rq    *Request
	path  string
	build func(*Request) ([]byte, *failure)
	fr    framing
	dec   decoder
}

// do builds x's body and posts it. A request that cannot be expressed
// (MaxTokens < 1, or what build rejects) is recorded as
// ReasonInvalidRequest without being sent.
func (b *base) do(ctx context.Context, x exchange, res *record.Result) {
	var body []byte
	var f *failure
	if x.rq.MaxTokens < 1 {
		f = failf(record.ReasonInvalidRequest, "invalid request: MaxTokens %d < 1", x.rq.MaxTokens)
	} else {
		body, f = x.build(x.rq)
	}
	if f == nil {
		var err error
		if body, err = b.cfg.ExtraBody.merge(body); err != nil {
			f = failf(record.ReasonInvalidRequest, "invalid request: --extra-body: %v", err)
		}
	}
	if f != nil {
		resetResult(res, x.rq)
		res.Reason, res.Error = f.reason, f.msg
		return
	}
	b.post(ctx, x, body, res)
}

// post sends body to x's path and reads the streamed answer into res.
// Every failure is recorded in res; post never panics on server input.
func (b *base) post(ctx context.Context, x exchange, body []byte, res *record.Result) {
	resetResult(res, x.rq)
	var reqCtx context.Context
	var cancel context.CancelFunc
	if b.cfg.Timeout > 0 {
		reqCtx, cancel = context.WithTimeout(ctx, b.cfg.Timeout)
	} else {
		reqCtx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	st := newStream(res, x.rq.MaxTokens)
	st.secrets = b.secrets
	if x.rq.Answer != nil {
		x.rq.Answer.Reset()
		st.answer = x.rq.Answer
	}
	f := b.roundTrip(ctx, requestScope{ctx: reqCtx, cancel: cancel}, x, body, st)
	st.finish(f)
}

// requestScope is the context one request runs under (the caller's, with
// Config.Timeout) and its cancel, which also stops a stream cut short.
type requestScope struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// roundTrip does the HTTP round trip and the stream loop; it returns the
// failure, or nil when the stream ended with its end marker. ctx is the
// caller's (to tell its cancellation from the request's timeout).
func (b *base) roundTrip(ctx context.Context, scope requestScope, x exchange, body []byte, st *stream) *failure {
	// With keep-alive connections the clock starts when the request is
	// written (WroteRequest); until then, and when writing fails, at the
	// call. Per request (Config.Connection), it starts at the call, before
	// the connection is opened.
	wt := &writeTrace{}
	wt.trace.WroteRequest = wt.wroteRequest
	hreq, err := b.newRequest(httptrace.WithClientTrace(scope.ctx, &wt.trace), x, body)
	if err != nil {
		st.t0 = time.Now()
		return failf(record.ReasonInvalidRequest, "building request: %v", err)
	}
	perRequest := b.cfg.Connection == PerRequest
	hreq.Close = perRequest // a new connection for every request
	wt.t0 = time.Now()
	resp, err := b.hc.Do(hreq)
	st.t0 = wt.t0
	if d := wt.wrote.Load(); d > 0 && !perRequest {
		st.t0 = wt.t0.Add(time.Duration(d - 1))
	}
	if x.rq.RunStart != (time.Time{}) {
		st.res.StartNS = int64(st.t0.Sub(x.rq.RunStart))
	}
	if err != nil {
		return classify(ctx, scope.ctx, err, false)
	}
	defer drainClose(resp.Body, scope.cancel)
	st.res.Status = resp.StatusCode
	if resp.StatusCode/100 != 2 {
		f := statusFailure(resp, b.secrets)
		st.end = time.Now()
		return f
	}
	if f := notAStream(resp); f != nil {
		st.end = time.Now()
		scope.cancel()
		return f
	}
	lr := newLineReader(resp.Body)
	lr.crEnds = x.fr.crEnds()
	defer lr.release()
	if err := readStream(lr, x.fr, x.dec, st); err != nil {
		// A stream that failed midway is not worth keeping: stop it now
		// rather than drain it, and stamp the failure first.
		st.end = time.Now()
		f := classify(ctx, scope.ctx, err, true)
		scope.cancel()
		return f
	}
	return nil
}

// writeTrace stamps when a request was written (httptrace WroteRequest),
// as an offset from t0 plus one (0: not written yet). The trace, its
// callback's state and the stamp are one allocation per request.
type writeTrace struct {
	trace httptrace.ClientTrace
	t0    time.Time // set before the request is sent
	wrote atomic.Int64
}

func (w *writeTrace) wroteRequest(httptrace.WroteRequestInfo) {
	w.wrote.Store(int64(time.Since(w.t0)) + 1)
}

// newRequest is the POST of body to x's path under ctx, with the request
// headers. It is what http.NewRequestWithContext and Header.Set would make,
// built for less per request: the URL is parsed once per path (posts
// holds a template request for each, shared read-only), and the fixed
// headers are assigned under their canonical names with value slices
// shared between requests (net/http only reads them). The extra headers
// (Config.Headers) are set last, as before, so they override the fixed
// ones.
func (b *base) newRequest(ctx context.Context, x exchange, body []byte) (*http.Request, error) {
	tmpl, err := b.posts.get(b.root + x.path)
	if err != nil {
		return nil, err
	}
	hreq := tmpl.WithContext(ctx)
	h := make(http.Header, 3+len(b.cfg.Headers))
	h["Content-Type"] = headerJSON
	h["Accept"] = acceptValue(x.fr.accept())
	if b.auth != "" {
		h["Authorization"] = b.authValue
	}
	for _, eh := range b.cfg.Headers {
		h.Set(eh.Name, eh.Value)
	}
	hreq.Header = h
	hreq.Body = io.NopCloser(bytes.NewReader(body))
	hreq.ContentLength = int64(len(body))
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if len(body) == 0 {
		hreq.Body = http.NoBody
		hreq.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	return hreq, nil
}

var (
	headerJSON   = []string{"application/json"}
	headerSSE    = []string{"text/event-stream"}
	headerNDJSON = []string{"application/x-ndjson"}
)

// acceptValue is the shared header value for a framing's Accept header.
func acceptValue(a string) []string {
	switch a {
	case headerSSE[0]:
		return headerSSE
	case headerNDJSON[0]:
		return headerNDJSON
	}
	return []string{a}
}

// postTemplates caches, per URL, a bodiless POST request made by
// http.NewRequest (so the URL is parsed, and checked, as it would be for
// every request); newRequest copies it with WithContext. Host is cleared:
// the Host header then comes from the URL's host (the same value), and
// http.Client does not copy the URL to read it.
type postTemplates struct{ m sync.Map } // string -> *http.Request

func (p *postTemplates) get(u string) (*http.Request, error) {
	if r, ok := p.m.Load(u); ok {
		return r.(*http.Request), nil
	}
	r, err := http.NewRequest(http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	r.Host = ""
	r.Header = nil
	p.m.Store(u, r)
	return r, nil
}

// notAStream tells from a 2xx response's headers that its body cannot be
// a stream to time: a compressed body (Content-Encoding other than
// identity: the compressor buffers the stream, and servebench asks for
// none) or an HTML page (a proxy's or a login page). Both are
// ReasonNotStreamed; nil otherwise.
func notAStream(resp *http.Response) *failure {
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return failf(record.ReasonNotStreamed, "not streamed: the response is compressed (Content-Encoding: %s), which buffers a stream and hides its timing", sanitize([]byte(enc)))
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return failf(record.ReasonNotStreamed, "not streamed: the response is an HTML page (Content-Type: %s), not a stream", sanitize([]byte(mt)))
	}
	return nil
}

// readStream runs the per-chunk loop. It must stay cheap: no allocation per
// line beyond what the decoder needs.
func readStream(lr *lineReader, fr framing, dec decoder, st *stream) error {
	// jsonBody is whether the response opened with "{" before any payload
	// line: at the end of such a response, it was one JSON document, not a
	// stream.
	jsonBody, opened, payloads := false, false, false
	for {
		line, rerr := lr.next()
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		eof := rerr == io.EOF
		if !opened {
			if t := bytes.TrimLeft(bytes.TrimPrefix(line, sseBOM), " \t"); len(t) > 0 {
				opened, jsonBody = true, t[0] == '{'
			}
		}
		data, ev := fr.line(line, eof)
		switch ev {
		case evEnd:
			st.end = time.Now()
			return nil
		case evError:
			return failf(record.ReasonStreamError, "server error in stream (event: error): %s", excerpt(data, st.secrets))
		case evData:
			payloads = true
			now := time.Now()
			done, f := dec.chunk(data, now, st)
			if f != nil {
				if eof && f.reason == record.ReasonMalformed {
					return errTruncated("last line cut: " + excerpt(data, st.secrets))
				}
				return f
			}
			if done {
				st.end = now
				return nil
			}
		}
		if eof {
			switch p := fr.pending(); {
			case jsonBody && !payloads:
				return failf(record.ReasonNotStreamed, "not streamed: the response was one JSON body (the server or a proxy ignored stream: true)")
			case len(p) > 0:
				return errTruncated("the stream ended inside an event (no blank line after it): " + excerpt(p, st.secrets))
			}
			return errTruncated("")
		}
	}
}

// drainWait bounds how long drainClose waits for the end of a response
// after its end marker.
const drainWait = 100 * time.Millisecond

// drainClose reads what is left of the response (the chunked terminator,
// usually already buffered) so the keep-alive connection can be reused,
// then closes the body. A server that keeps the response open longer than
// drainWait loses the connection (cancel) instead of stalling the caller.
func drainClose(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(drainWait, cancel)
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	t.Stop()
	_ = body.Close()
}

// resetResult clears what Do fills, keeping what the caller set (sequence,
// level, expected prompt tokens...).
func resetResult(res *record.Result, rq *Request) {
	res.TTFTNS, res.E2ENS = nil, 0
	res.ChunkOffsetsNS, res.ChunkTokens = nil, nil
	res.PromptTokens, res.OutputTokens, res.Server = nil, nil, nil
	res.CachedPromptTokens = nil
	res.TTFRNS, res.TTFANS, res.ReasoningTokens, res.ReasoningTokensEstimated = nil, nil, nil, false
	res.Status, res.Reason, res.Error, res.FinishReason = 0, record.ReasonNone, "", ""
	res.Warnings = nil
	if res.ExpectedOutputTokens == 0 {
		res.ExpectedOutputTokens = rq.MaxTokens
	}
}
