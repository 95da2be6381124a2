package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode"

	"github.com/servebench/servebench/record"
)

// maxExcerpt bounds the body excerpt kept in Result.Error for HTTP errors.
const maxExcerpt = 200

// failure is a request failure with its Reason.
type failure struct {
	reason record.Reason
	msg    string
}

func (f *failure) Error() string { return f.msg }

func failf(reason record.Reason, format string, args ...any) *failure {
	return &failure{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// errTruncated is the failure of a stream that ended without its end marker
// ("data: [DONE]" or an Ollama "done": true line).
func errTruncated(detail string) *failure {
	if detail == "" {
		return &failure{reason: record.ReasonTruncated, msg: "truncated stream"}
	}
	return &failure{reason: record.ReasonTruncated, msg: "truncated stream: " + detail}
}

// classify turns an error from sending a request or reading its stream into
// a failure. parent is the caller's context, reqCtx the per-request one
// (with Config.Timeout). inBody tells whether the response headers had
// arrived: a transport error after that is a stream cut mid-way
// (ReasonTruncated), before it a connection failure (ReasonConnection).
func classify(parent, reqCtx context.Context, err error, inBody bool) *failure {
	var f *failure
	switch {
	case errors.As(err, &f):
		return f
	case parent.Err() != nil:
		return failf(record.ReasonCanceled, "canceled: %v", context.Cause(parent))
	case reqCtx.Err() == context.DeadlineExceeded || isTimeout(err):
		return failf(record.ReasonTimeout, "timeout: %v", err)
	case inBody:
		return errTruncated(err.Error())
	default:
		return failf(record.ReasonConnection, "connection: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusFailure reads a short excerpt of an error response's body and
// classifies the status: 3xx → ReasonRedirect (never followed: see
// noRedirects; the excerpt names the Location), 429 → ReasonHTTP429, 5xx →
// ReasonHTTP5xx, any other non-2xx → ReasonHTTP4xx. The API key is
// secrets (the API key and the extra headers' values) are redacted
// (excerpt).
func statusFailure(resp *http.Response, secrets []string) *failure {
	buf := make([]byte, excerptWindow(secrets))
	n, _ := io.ReadFull(resp.Body, buf)
	body := excerpt(buf[:n], secrets)
	if resp.StatusCode/100 == 3 {
		return redirectFailure(resp, body, secrets)
	}
	reason := record.ReasonHTTP4xx
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		reason = record.ReasonHTTP429
	case resp.StatusCode >= 500:
		reason = record.ReasonHTTP5xx
	}
	if body == "" {
		return failf(reason, "HTTP %d", resp.StatusCode)
	}
	return failf(reason, "HTTP %d: %s", resp.StatusCode, body)
}

// redirectFailure is the failure of a 3xx answer: its Location (or that
// it had none) and the body excerpt.
func redirectFailure(resp *http.Response, body string, secrets []string) *failure {
	where := "without a Location header"
	if loc := resp.Header.Get("Location"); loc != "" {
		where = "to " + excerpt([]byte(loc), secrets)
	}
	msg := fmt.Sprintf("HTTP %d redirect %s, not followed (requests to the server under test never follow redirects)", resp.StatusCode, where)
	if body != "" {
		msg += ": " + body
	}
	return failf(record.ReasonRedirect, "%s", msg)
}

// sanitize makes b one printable line of valid UTF-8 for an error message.
func sanitize(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// excerptWindow is how many bytes of a server's answer excerpt looks at
// for its secrets: maxExcerpt, and room for the longest secret to start
// before the cut in its longest encoded form (see redact).
func excerptWindow(secrets []string) int {
	longest := 0
	for _, s := range secrets {
		longest = max(longest, len(s))
	}
	return maxExcerpt + maxEncodedKeyFactor*longest
}

// excerpt returns at most maxExcerpt bytes of b, sanitized, with every
// secret (the API key and the extra headers' values) redacted, in every
// form redact knows, before the cut: a secret the server echoed across
// the cut cannot leak in part. Only the first excerptWindow(secrets)
// bytes are looked at; a secret starting later is cut off anyway.
func excerpt(b []byte, secrets []string) string {
	if w := excerptWindow(secrets); len(b) > w {
		b = b[:w]
	}
	b = []byte(RedactAll(string(b), secrets))
	if len(b) > maxExcerpt {
		b = b[:maxExcerpt]
	}
	return sanitize(b)
}
