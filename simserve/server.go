package simserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/sim"
)

// errStopped: the server was closed while a request waited on the engine.
var errStopped = errors.New("simulated server stopped")

// Server is a simulated LLM server: a sim.Engine driven in real time
// behind one personality's HTTP surface. Create it with New, serve its
// Handler, Close it when done.
type Server struct {
	as    backend.Kind
	cfg   sim.Config
	model modelspec.Spec
	quant string
	name  string // served model name
	// quotedName is name as a JSON string, written raw into chunks.
	quotedName []byte
	seed       uint64
	opts       Options
	drv        *driver
	// born is the wall time the server started (created timestamps).
	born time.Time
	// ids numbers the generation requests (ids, fault draws, texts).
	ids   atomic.Uint64
	fault faultPicker
	ctr   counters
	late  lateness
	// bodies bounds the request bytes held at once (boundBodies).
	bodies bodyBudget
}

// New resolves opts.Spec into an engine configuration and starts the
// engine's goroutine. Errors wrap ErrBadOptions (bad options) or one of
// package sim's errors (sim.ErrUnknownGPU, sim.ErrUnknownModel,
// sim.ErrDoesNotFit, sim.ErrBadInput).
func New(opts Options) (*Server, error) {
	if _, err := ParseKind(string(opts.As)); err != nil {
		return nil, err
	}
	if err := opts.Faults.validate(); err != nil {
		return nil, err
	}
	spec := opts.Spec
	if spec.Backend == "" {
		spec.Backend = Engine(opts.As)
	}
	cfg, err := spec.Config()
	if err != nil {
		return nil, err
	}
	if opts.Fit != nil {
		if err := opts.Fit.ApplyTo(&cfg); err != nil {
			return nil, err
		}
	}
	m, q, err := spec.ResolvedModel()
	if err != nil {
		return nil, err
	}
	eng, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	name := opts.ServedModelName
	if name == "" {
		name = spec.Model
	}
	s := &Server{as: opts.As, cfg: cfg, model: m, quant: q, name: name, seed: opts.Seed, opts: opts,
		born: time.Now()}
	s.quotedName, _ = json.Marshal(name)
	s.fault = faultPicker{f: opts.Faults, rng: rand.New(rand.NewPCG(opts.Seed, 0xfa017))}
	s.ctr.init()
	s.drv = newDriver(eng)
	return s, nil
}

// Config is the engine's configuration: the simulated GPU, model cost,
// server settings and calibration.
func (s *Server) Config() sim.Config { return s.cfg }

// As is the server's personality.
func (s *Server) As() backend.Kind { return s.as }

// ModelName is the model name the server answers to.
func (s *Server) ModelName() string { return s.name }

// Close stops the engine; requests still streaming end without their end
// marker.
func (s *Server) Close() { s.drv.stop() }

// Serve answers HTTP on ln until ctx is done, then shuts down: new
// connections are refused, streams in flight get grace to finish, then
// the listener's connections are closed and the engine stops.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	s.Close()
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// Handler is the personality's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, r.fn)
	}
	mux.HandleFunc("/", s.notFound)
	return s.boundBodies(mux)
}

// maxBodiesInFlight bounds the request bytes the server holds at once
// (each body is read whole and decoded, so it is held a few times over):
// four bodies of the largest size a request may have. Past it a request
// gets 503 at once, as an overloaded server's front answers, rather than
// the process dying of memory with every stream it serves.
const maxBodiesInFlight = 4 * maxBodyBytes

// bodyBudget counts the request body bytes in flight.
type bodyBudget struct {
	mu   sync.Mutex
	used int64
}

// reserve takes n bytes of the budget; false when they are not left.
func (b *bodyBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > maxBodiesInFlight {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// boundBodies answers 413 to a body declared over maxBodyBytes and 503 to
// one the budget of bodies in flight cannot hold (a body of unknown
// length counts as the largest), and caps every body it lets through.
func (s *Server) boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.ContentLength
		if n == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if n > maxBodyBytes {
			s.apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", fmt.Sprintf("request body of %d bytes: over %d MiB", n, maxBodyBytes>>20))
			return
		}
		if n < 0 {
			n = maxBodyBytes
		}
		if !s.bodies.reserve(n) {
			w.Header().Set("Retry-After", "1")
			s.apiError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", fmt.Sprintf("server busy: %d MiB of request bodies in flight", maxBodiesInFlight>>20))
			return
		}
		defer s.bodies.release(n)
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// route is one endpoint.
type route struct {
	pattern string
	fn      http.HandlerFunc
}

// routes lists the personality's endpoints.
func (s *Server) routes() []route {
	openAI := []route{
		{"POST /v1/chat/completions", s.handleChat},
		{"POST /v1/completions", s.handleCompletions},
	}
	return append(openAI, personalities[s.as].routes(s)...)
}

// Versions each personality reports, with a build suffix that marks them
// simulated. They are the versions whose formats the fixtures hold.
const (
	simSuffix       = "+servebench.sim"
	vllmVersion     = "0.11.0" + simSuffix
	sglangVersion   = "0.5.1" + simSuffix
	llamaBuild      = 9014
	llamaBuildInfo  = "b9014-servebench.sim"
	tgiVersion      = "2.2.0" + simSuffix
	ollamaVersion   = "0.11.6" + simSuffix
	openAIOwnedBy   = "servebench-sim"
	sglangOwnedBy   = "sglang"
	llamaCppOwnedBy = "llamacpp"
)

// version is the personality's version string.
func (s *Server) version() string { return personalities[s.as].version }

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// apiError answers an error in the personality's error shape.
func (s *Server) apiError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, personalities[s.as].errorBody(status, kind, msg))
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("%s %s: no such route on a simulated %s server", r.Method, r.URL.Path, s.as))
}

func (s *Server) handleEmptyOK(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// modelMatches reports whether a request's model names the served one
// (Ollama adds ":latest" to a name without a tag).
func (s *Server) modelMatches(m string) bool {
	if m == "" || m == s.name {
		return true
	}
	if s.as == backend.Ollama {
		return ollamaTag(m) == ollamaTag(s.name)
	}
	return false
}

func ollamaTag(s string) string {
	if !strings.Contains(s, ":") {
		return s + ":latest"
	}
	return s
}

// counters are what the server has served, for /metrics: the totals of
// finished requests and the histograms of their latencies.
type counters struct {
	mu sync.Mutex
	// requests counts generation requests received; success those that
	// finished (by reason: length, abort); rejected those refused.
	requests   int64
	success    map[string]int64
	promptToks int64
	genToks    int64
	// prefill and decode seconds of finished requests (llama.cpp's
	// prompt_seconds_total and tokens_predicted_seconds_total).
	promptSec, decodeSec float64
	// admitted counts requests the scheduler took (TGI's prefill
	// batches).
	admitted int64
	hist     map[string]*histogram
	// lastGen and lastAt are the generated tokens and the time of the
	// previous scrape (SGLang's gen_throughput).
	lastGen    int64
	lastAt     time.Time
	throughput float64
}

func (c *counters) init() {
	c.success = map[string]int64{}
	c.hist = map[string]*histogram{}
}

// observe adds one histogram observation.
func (c *counters) observe(name string, bounds []float64, v float64) {
	h := c.hist[name]
	if h == nil {
		h = newHistogram(bounds)
		c.hist[name] = h
	}
	h.observe(v)
}
