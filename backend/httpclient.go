package backend

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// MaxIdleConnsPerHost is how many idle keep-alive connections the default
// client keeps per server. A benchmark holds thousands of simultaneous
// streams to one host; with the net/http default of 2, every request beyond
// the second would dial a new connection and the connection setup would be
// measured as server latency.
const MaxIdleConnsPerHost = 16384

// NewHTTPClient returns the client servebench uses when Config.HTTPClient is
// nil, tuned for thousands of concurrent streams to one server:
//   - HTTP/1.1 only (HTTP/2 is disabled): each stream has its own
//     connection, so one slow stream cannot hold up others through HTTP/2
//     flow control or head-of-line blocking, and chunk arrival times are not
//     blurred by multiplexing;
//   - a keep-alive pool as large as the concurrency, no per-host cap;
//   - no transparent gzip, which would buffer a stream and hide chunk timing;
//   - no client-wide timeout (each request carries its own deadline, see
//     Config.Timeout) and no response-header timeout, since some servers send
//     headers only with the first token;
//   - no redirects followed (see noRedirects).
func NewHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     false,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxIdleConns:          0, // no global cap
		MaxIdleConnsPerHost:   MaxIdleConnsPerHost,
		MaxConnsPerHost:       0,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 0,
		DisableCompression:    true,
		ReadBufferSize:        4 << 10,
		WriteBufferSize:       4 << 10,
	}
	return &http.Client{Transport: tr, CheckRedirect: refuseRedirect}
}

// noRedirects returns a client like c that never follows a redirect: a 3xx
// answer comes back as it is, for the caller to count as
// record.ReasonRedirect or a probe warning. Following one would turn a
// POST into a GET (302, 303) and send the API key to wherever the server
// points (net/http keeps the Authorization header for the same host on
// another port). c itself is left alone (it may be shared); the copy
// shares its Transport, so its connection pool.
func noRedirects(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = refuseRedirect
	return &cc
}

func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
