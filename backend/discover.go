package backend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Finding the server under test when run is not told which it is: Scan
// looks at the usual local ports, Identify asks one address what it is and
// which models it serves. Both only read (GET), and both run before any
// request is sent, so a wrong address or key fails at once with a message
// that says what was looked for where.

// Candidate is a place a server may listen: a base URL and the families
// usually found there, named in the error when nothing answers.
type Candidate struct {
	URL   string
	Kinds []Kind
}

// ScanTimeout bounds each request of a scan of the usual local ports: a
// loopback server answers in milliseconds, and a port that holds a
// connection without answering must not hold up the scan.
const ScanTimeout = 2 * time.Second

// IdentifyTimeout bounds each request of Identify at an address the user
// named: a server across a network, or busy, may take a while.
const IdentifyTimeout = probeTimeout

// Found is what Identify learnt about the server at one address.
type Found struct {
	// URL is the address as given.
	URL string
	// Kind is the family the server was recognised as; "" when it was
	// not (only possible when Identify was told the family).
	Kind Kind
	// Version is the server's version, "" where it gave none.
	Version string
	// By is the answer that recognised the family, e.g. "GET /api/version".
	By string
	// Models are the served models as requests name them (Ollama's
	// implicit ":latest" tag left off); nil when they could not be listed.
	Models []string
	// ModelsBy is the request that listed them, e.g. "GET /api/tags".
	ModelsBy string
	// ModelsErr is why the models could not be listed (an *AuthError when
	// the server wants an API key).
	ModelsErr error
}

// Name is the server's family and version for people: "Ollama 0.6.5",
// "vLLM" (version unknown), "an OpenAI-compatible server".
func (f Found) Name() string {
	if f.Kind == "" {
		return "a server"
	}
	if f.Version == "" {
		return f.Kind.Name()
	}
	return f.Kind.Name() + " " + f.Version
}

// Serves tells whether the server serves model, for requests of family
// kind. known is false where that cannot be told: the list is unknown, or
// the family answers whatever model a request names (llama.cpp and TGI
// serve the one model they loaded under any name). An Ollama server (asked
// natively or through its OpenAI-compatible API) adds the implicit
// ":latest" tag.
func (f Found) Serves(kind Kind, model string) (ok, known bool) {
	if f.Models == nil || kind.Describe().AnyModel {
		return false, false
	}
	ollama := kind == Ollama || f.Kind == Ollama
	want := ollamaName(model)
	for _, m := range f.Models {
		if m == model || (ollama && ollamaName(m) == want) {
			return true, true
		}
	}
	return false, true
}

// UnreachableError is an address where nothing answered HTTP (connection
// refused, no route, a timeout).
type UnreachableError struct {
	URL string
	Err error
}

// Error is "<url>: <reason>".
func (e *UnreachableError) Error() string { return e.URL + ": " + e.Err.Error() }

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// UnrecognisedError is an address where an HTTP server answered, but not
// as any family servebench knows. Answers are the probe requests and what
// each got.
type UnrecognisedError struct {
	URL     string
	Answers []string
}

// Error names the address and the answers.
func (e *UnrecognisedError) Error() string {
	return fmt.Sprintf("%s answered, but not as an LLM server servebench knows (%s)", e.URL, strings.Join(e.Answers, "; "))
}

// AuthError is a server that refused a probe for want of a valid API key
// (401 or 403). KeyGiven tells whether a key was sent; the key itself is
// never part of the error.
type AuthError struct {
	URL      string
	Request  string // e.g. "GET /v1/models"
	Status   string // e.g. "401 Unauthorized"
	KeyGiven bool
}

// Error says what was refused and whether a key was sent.
func (e *AuthError) Error() string {
	if e.KeyGiven {
		return fmt.Sprintf("%s refused the API key given: %s answered %s", e.URL, e.Request, e.Status)
	}
	return fmt.Sprintf("%s wants an API key: %s answered %s", e.URL, e.Request, e.Status)
}

// Miss is a candidate where Scan found no server, and why (an
// *UnreachableError, *UnrecognisedError or *AuthError).
type Miss struct {
	Candidate Candidate
	Err       error
}

// Scan identifies the servers at every candidate at once, each request
// bounded by timeout. It returns those recognised, in the candidates'
// order, and the others with the reason.
func Scan(ctx context.Context, cands []Candidate, cfg Config, timeout time.Duration) ([]Found, []Miss) {
	found := make([]*Found, len(cands))
	errs := make([]error, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Go(func() {
			cc := cfg
			cc.BaseURL = c.URL
			f, err := Identify(ctx, cc, timeout)
			if err == nil && f.Kind == "" {
				// Told the family but not recognised: on a scan that is
				// not a server of that family.
				err = &UnrecognisedError{URL: c.URL, Answers: []string{"no answer as " + cfg.Kind.Name()}}
			}
			found[i], errs[i] = &f, err
		})
	}
	wg.Wait()
	var out []Found
	var misses []Miss
	for i, c := range cands {
		if errs[i] != nil {
			misses = append(misses, Miss{Candidate: c, Err: errs[i]})
			continue
		}
		out = append(out, *found[i])
	}
	return out, misses
}

// fingerprint is one identity request and its answer.
type fingerprint struct {
	path string
	out  any
	err  error
}

// versionBody is {"version": "..."} (vLLM /version, Ollama /api/version).
type versionBody struct {
	Version string `json:"version"`
}

// sglangServerInfo is the part of SGLang's GET /get_server_info Identify
// reads: the server arguments (model_path among them) and "version"
// (sglang/srt/entrypoints/http_server.py, get_server_info).
type sglangServerInfo struct {
	Version   string `json:"version"`
	ModelPath string `json:"model_path"`
}

// fingerprints are the answers of one address to the identity requests.
type fingerprints struct {
	props  llamaProps
	ollama versionBody
	info   tgiInfoResp
	sglang sglangServerInfo
	vllm   versionBody
	models openAIModels
	reqs   []*fingerprint // in the order above
}

func newFingerprints() *fingerprints {
	f := &fingerprints{}
	f.reqs = []*fingerprint{
		{path: "/props", out: &f.props},
		{path: "/api/version", out: &f.ollama},
		{path: "/info", out: &f.info},
		{path: "/get_server_info", out: &f.sglang},
		{path: "/version", out: &f.vllm},
		{path: "/v1/models", out: &f.models},
	}
	return f
}

func (f *fingerprints) err(path string) error {
	for _, r := range f.reqs {
		if r.path == path {
			return r.err
		}
	}
	return errors.New("not asked")
}

// Identify asks the server at cfg.BaseURL what it is and which models it
// serves, each request bounded by timeout (and ctx). It sends, at once,
// GET /props (llama.cpp), /api/version (Ollama), /info (TGI),
// /get_server_info (SGLang), /version (vLLM) and /v1/models (any
// OpenAI-compatible server), and trusts the answers in that order, each
// only with the fields its family always sends; vLLM's /version counts only
// beside a /v1/models, since other programs answer /version too. The models
// are then read where the family lists them: Ollama GET /api/tags, TGI
// /info's model_id, the others /v1/models (llama.cpp: /props where
// /v1/models fails).
//
// cfg.Kind, when set, is the family the caller was told: it picks where
// the models are read even if the server was recognised as another (Kind
// says what it was recognised as, "" for nothing). It returns an
// *UnreachableError when nothing answered HTTP, and, when cfg.Kind is not
// set and nothing was recognised, an *AuthError if a request was refused
// for want of a key, else an *UnrecognisedError.
func Identify(ctx context.Context, cfg Config, timeout time.Duration) (Found, error) {
	p := newProber(ctx, cfg)
	p.timeout = timeout
	fp := newFingerprints()
	var wg sync.WaitGroup
	for _, r := range fp.reqs {
		wg.Go(func() { r.err = p.call(http.MethodGet, r.path, nil, r.out) })
	}
	wg.Wait()
	if err := fp.unreachable(cfg.BaseURL); err != nil {
		return Found{URL: cfg.BaseURL}, err
	}
	f := Found{URL: cfg.BaseURL}
	f.Kind, f.Version, f.By = fp.recognise()
	kind := cfg.Kind
	if kind == "" {
		kind = f.Kind
	}
	if kind == "" {
		if err := fp.authError(cfg); err != nil {
			return f, err
		}
		return f, fp.unrecognised(cfg.BaseURL)
	}
	fp.listModels(p, kind, &f)
	return f, nil
}

// unreachable returns an *UnreachableError when no request got an HTTP
// answer.
func (fp *fingerprints) unreachable(url string) error {
	var first error
	for _, r := range fp.reqs {
		if answered(r.err) {
			return nil
		}
		if first == nil {
			first = r.err
		}
	}
	return &UnreachableError{URL: url, Err: first}
}

// answered tells whether a probe request got an HTTP answer.
func answered(err error) bool {
	var se *StatusError
	var be *bodyError
	return err == nil || errors.As(err, &se) || errors.As(err, &be)
}

// identity is how one family's own endpoint identifies it: the path,
// and from the answers whether it did and the version it gave.
type identity struct {
	kind Kind
	path string
	// is reports the version and whether the answers are this family's;
	// models is /v1/models' error (nil when it answered).
	is func(fp *fingerprints, models error) (version string, ok bool)
}

// identities are the families' own endpoints, most specific first:
// llama.cpp's /props, Ollama's /api/version, TGI's /info, SGLang's
// /get_server_info, then vLLM's /version (which other servers answer too,
// so it counts when /v1/models answered or wanted a key).
var identities = []identity{
	{LlamaCpp, "/props", func(fp *fingerprints, _ error) (string, bool) {
		return fp.props.BuildInfo, fp.props.BuildInfo != "" || fp.props.TotalSlots != nil || fp.props.Defaults.NCtx != nil
	}},
	{Ollama, "/api/version", func(fp *fingerprints, _ error) (string, bool) {
		return fp.ollama.Version, fp.ollama.Version != ""
	}},
	{TGI, "/info", func(fp *fingerprints, _ error) (string, bool) {
		return fp.info.Version, fp.info.ModelID != "" && fp.info.Version != ""
	}},
	{SGLang, "/get_server_info", func(fp *fingerprints, _ error) (string, bool) {
		return fp.sglang.Version, fp.sglang.Version != "" && fp.sglang.ModelPath != ""
	}},
	{VLLM, "/version", func(fp *fingerprints, models error) (string, bool) {
		return fp.vllm.Version, fp.vllm.Version != "" && (models == nil || isAuth(models))
	}},
}

// ownedBy maps /v1/models' owned_by to the family it names.
var ownedBy = map[string]Kind{"vllm": VLLM, "sglang": SGLang, "llamacpp": LlamaCpp}

// recognise names the family from the answers, most specific first: a
// family's own endpoint (identities), else /v1/models' owned_by, else an
// OpenAI-compatible server.
func (fp *fingerprints) recognise() (Kind, string, string) {
	models := fp.err("/v1/models")
	for _, id := range identities {
		if fp.err(id.path) != nil {
			continue
		}
		if v, ok := id.is(fp, models); ok {
			return id.kind, v, "GET " + id.path
		}
	}
	if models != nil || fp.models.Data == nil {
		return "", "", ""
	}
	if len(fp.models.Data) > 0 {
		if k, ok := ownedBy[fp.models.Data[0].OwnedBy]; ok {
			return k, "", "GET /v1/models owned_by"
		}
	}
	return OpenAI, "", "GET /v1/models"
}

// isAuth tells whether err is a 401 or 403 answer.
func isAuth(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden)
}

// authError returns an *AuthError for a request refused for want of a
// key (/v1/models, which every family serves, when it was among them), nil
// when none was.
func (fp *fingerprints) authError(cfg Config) error {
	reqs := slices.Clone(fp.reqs)
	slices.Reverse(reqs) // /v1/models first
	for _, r := range reqs {
		var se *StatusError
		if isAuth(r.err) && errors.As(r.err, &se) {
			return &AuthError{URL: cfg.BaseURL, Request: "GET " + r.path, Status: se.Status, KeyGiven: cfg.APIKey != ""}
		}
	}
	return nil
}

func (fp *fingerprints) unrecognised(url string) error {
	e := &UnrecognisedError{URL: url}
	for _, r := range fp.reqs {
		what := "200 OK, not a server identity"
		if r.err != nil {
			what = r.err.Error()
		}
		e.Answers = append(e.Answers, "GET "+r.path+": "+what)
	}
	return e
}

// listModels fills f's models from where a server of family kind lists
// them.
func (fp *fingerprints) listModels(p *prober, kind Kind, f *Found) {
	switch {
	case kind == Ollama:
		fp.ollamaTags(p, f)
		return
	case kind == TGI && fp.err("/info") == nil && fp.info.ModelID != "":
		f.Models, f.ModelsBy = []string{fp.info.ModelID}, "GET /info model_id"
		return
	}
	if err := fp.err("/v1/models"); err != nil {
		if kind == LlamaCpp && fp.err("/props") == nil {
			if m := cmp.Or(fp.props.ModelAlias, fp.props.ModelPath); m != "" {
				f.Models, f.ModelsBy = []string{m}, "GET /props"
				return
			}
		}
		f.ModelsErr = fp.modelsError(p, "/v1/models", err)
		return
	}
	f.Models, f.ModelsBy = []string{}, "GET /v1/models"
	for _, m := range fp.models.Data {
		f.Models = append(f.Models, m.ID)
	}
}

// ollamaTagsResp is the part of Ollama's GET /api/tags Identify reads.
type ollamaTagsResp struct {
	Models []struct {
		Name string `json:"name"`
	} `json:"models"`
}

// ollamaTags lists the models an Ollama server has (GET /api/tags), named
// as a person asks for them: "servebench-tiny" for
// "servebench-tiny:latest".
func (fp *fingerprints) ollamaTags(p *prober, f *Found) {
	var tags ollamaTagsResp
	if err := p.call(http.MethodGet, "/api/tags", nil, &tags); err != nil {
		f.ModelsErr = fp.modelsError(p, "/api/tags", err)
		return
	}
	f.Models, f.ModelsBy = []string{}, "GET /api/tags"
	for _, m := range tags.Models {
		name := strings.TrimSuffix(m.Name, ":latest")
		if !slices.Contains(f.Models, name) {
			f.Models = append(f.Models, name)
		}
	}
}

// modelsError is why a model list could not be read: an *AuthError for a
// 401 or 403, else "GET <path>: <err>".
func (fp *fingerprints) modelsError(p *prober, path string, err error) error {
	var se *StatusError
	if isAuth(err) && errors.As(err, &se) {
		return &AuthError{URL: p.cfg.BaseURL, Request: "GET " + path, Status: se.Status, KeyGiven: p.cfg.APIKey != ""}
	}
	return fmt.Errorf("GET %s: %w", path, err)
}
