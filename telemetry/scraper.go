package telemetry

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/servebench/servebench/backend"
)

// DefaultScrapeInterval is how often /metrics is read during a level.
const DefaultScrapeInterval = 250 * time.Millisecond

// maxExpositionBytes bounds one scrape's body; real /metrics pages are tens
// of KiB.
const maxExpositionBytes = 16 << 20

// Scraper reads one server's Prometheus /metrics. It has its own HTTP client
// and transport, so its connections never compete with benchmark requests
// for a connection pool.
type Scraper struct {
	// URL is the metrics endpoint, e.g. http://host:8000/metrics.
	URL string
	// Names maps metric names to quantities.
	Names backend.MetricNames
	// Interval is the period of scrapes during a level.
	Interval time.Duration
	// Timeout bounds one scrape, including the ones before and after a
	// level.
	Timeout time.Duration
	client  *http.Client
	// parse maps a response body to a Sample; nil means Prometheus text
	// through Names.
	parse func(io.Reader) (Sample, error)
	// accept is the Accept header sent.
	accept string
}

// NewScraper returns a scraper of url with names, scraping every interval
// (DefaultScrapeInterval when interval ≤ 0).
func NewScraper(url string, names backend.MetricNames, interval time.Duration) *Scraper {
	if interval <= 0 {
		interval = DefaultScrapeInterval
	}
	timeout := 4 * interval
	if timeout < time.Second {
		timeout = time.Second
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		MaxIdleConns:        2,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Scraper{URL: url, Names: names, Interval: interval, Timeout: timeout,
		client: &http.Client{Transport: tr, Timeout: timeout}, accept: "text/plain;version=0.0.4"}
}

// NewSlotsScraper returns a scraper of llama.cpp's /slots at url: busy
// slots become the running-requests gauge, for llama-server started
// without --metrics.
func NewSlotsScraper(url string, interval time.Duration) *Scraper {
	s := NewScraper(url, backend.MetricNames{}, interval)
	s.parse, s.accept = parseSlots, "application/json"
	return s
}

// Scrape reads the endpoint once and maps it to a Sample. A page with a
// syntax error still yields what was parsed before it, with the error.
func (s *Scraper) Scrape(ctx context.Context) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return Sample{}, fmt.Errorf("scrape %s: %w", s.URL, err)
	}
	req.Header.Set("Accept", s.accept)
	resp, err := s.client.Do(req)
	if err != nil {
		return Sample{}, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return Sample{}, &StatusError{URL: s.URL, Code: resp.StatusCode, Status: resp.Status}
	}
	body := io.LimitReader(resp.Body, maxExpositionBytes)
	if s.parse != nil {
		return s.parse(body)
	}
	fams, err := ParseExposition(body)
	return Extract(fams, s.Names), err
}

// StatusError is a scrape answered with a status other than 200 OK.
type StatusError struct {
	URL    string
	Code   int
	Status string
}

// Error says which URL answered which status.
func (e *StatusError) Error() string { return fmt.Sprintf("scrape %s: HTTP %s", e.URL, e.Status) }

// absent reports whether the status says the endpoint does not exist or
// is turned off (llama-server without --metrics answers 501).
func (e *StatusError) absent() bool {
	return e.Code == http.StatusNotFound || e.Code == http.StatusNotImplemented || e.Code == http.StatusMethodNotAllowed
}

// observe scrapes once into acc.
func (s *Scraper) observe(ctx context.Context, acc *Accumulator) {
	smp, err := s.Scrape(ctx)
	if err != nil {
		acc.Fail(err)
		return
	}
	acc.Observe(smp)
}

// LevelScrape is the scraping of one level, from Begin to End.
type LevelScrape struct {
	s      *Scraper
	acc    Accumulator
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	sum    MetricsSummary
}

// Begin starts scraping on its own goroutine: once at once (the baseline
// for counter deltas), then every Interval until End. It returns without
// waiting for any scrape, so a slow /metrics cannot hold up the level.
func (s *Scraper) Begin(ctx context.Context) *LevelScrape {
	l := &LevelScrape{s: s, done: make(chan struct{})}
	loopCtx, cancel := context.WithCancel(ctx)
	l.cancel = cancel
	go l.loop(loopCtx)
	return l
}

func (l *LevelScrape) loop(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.s.Interval)
	defer t.Stop()
	for {
		smp, err := l.s.Scrape(ctx)
		if ctx.Err() != nil {
			return // stopped mid-scrape: not a server failure
		}
		if err != nil {
			l.acc.Fail(err)
		} else {
			l.acc.Observe(smp)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// End stops the periodic scrapes, scrapes once more (after the level's last
// request) and returns the level's summary. Further calls return the same
// summary.
func (l *LevelScrape) End(ctx context.Context) MetricsSummary {
	l.once.Do(func() {
		l.cancel()
		<-l.done
		l.s.observe(ctx, &l.acc)
		l.sum = l.acc.Summary()
	})
	return l.sum
}
