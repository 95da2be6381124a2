package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/slo"
)

// The first five minutes of `servebench run`: find the server and its
// model when the flags do not say (findServer), and, on a terminal, keep
// the document in a file and end with the table a person reads
// (resultOutput, showTable).

// findServer fills in what --url, --backend and --model left open, checks
// a given --model against the ones the server serves, and says once on
// stderr what it found (unless --quiet). Runs of --profile name their
// servers and are left alone. An interrupted search leaves a complete
// configuration as it is, so that the sweep writes its (empty) report.
func findServer(ctx context.Context, deps Deps, cfg *runConfig, stderr io.Writer) error {
	if len(cfg.Profiles) > 0 || cfg.Sim != nil {
		for _, n := range cfg.ServerNotes {
			warn(stderr, report.Clean(n)) // a simulated server's, from its flags
		}
		return nil // profiles name their servers; a simulated one needs no finding
	}
	found, scanned, err := lookForServer(ctx, deps, cfg)
	if err != nil {
		if ctx.Err() != nil && cfg.Backend != "" && cfg.URL != "" && cfg.Model != "" {
			return nil
		}
		return err
	}
	line, err := adoptServer(cfg, found, scanned)
	if err != nil {
		return err
	}
	if !cfg.Quiet {
		if line != "" {
			fmt.Fprintln(stderr, "servebench: "+report.Clean(line))
		}
		for _, n := range cfg.ServerNotes {
			warn(stderr, report.Clean(n))
		}
	}
	return nil
}

// lookForServer identifies the server at --url, or scans the usual local
// ports (Deps.LocalServers) when there is none; scanned lists the
// addresses looked at then.
func lookForServer(ctx context.Context, deps Deps, cfg *runConfig) (backend.Found, []string, error) {
	bc := backend.Config{Kind: cfg.Backend, BaseURL: cfg.URL, APIKey: cfg.APIKey, Headers: cfg.Headers}
	if cfg.URL != "" {
		f, err := backend.Identify(ctx, bc, backend.IdentifyTimeout)
		if err != nil {
			return f, nil, identifyError(cfg, err)
		}
		return f, nil, nil
	}
	var scanned []string
	for _, c := range deps.LocalServers {
		scanned = append(scanned, c.URL)
	}
	found, misses := backend.Scan(ctx, deps.LocalServers, bc, backend.ScanTimeout)
	if cfg.Backend != "" && !cfg.Backend.Describe().Generic {
		// Told the family: servers of other families do not count.
		var same []backend.Found
		for _, f := range found {
			if f.Kind == cfg.Backend {
				same = append(same, f)
			} else {
				misses = append(misses, backend.Miss{Candidate: backend.Candidate{URL: f.URL}, Err: fmt.Errorf("%s, not %s", f.Name(), cfg.Backend.Name())})
			}
		}
		found = same
		// In the order looked at.
		slices.SortStableFunc(misses, func(a, b backend.Miss) int {
			return slices.Index(scanned, a.Candidate.URL) - slices.Index(scanned, b.Candidate.URL)
		})
	}
	switch len(found) {
	case 1:
		return found[0], scanned, nil
	case 0:
		return backend.Found{}, scanned, noServerError(cfg, misses)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name()+" at "+f.URL)
	}
	return backend.Found{}, scanned, configf("found %d servers on this machine: %s; choose one with --url", len(found), strings.Join(names, ", "))
}

// adoptServer takes from found what the flags left open, checks the rest
// against it and records what was found in cfg.Discovered; it returns the
// line that says what was found ("" when the flags said everything).
func adoptServer(cfg *runConfig, found backend.Found, scanned []string) (string, error) {
	d := &record.Discovery{Server: found.Name()}
	if cfg.URL == "" {
		cfg.URL, d.URL, d.Scanned = found.URL, found.URL, scanned
	}
	if cfg.Backend == "" {
		cfg.Backend, d.Backend, d.BackendBy = found.Kind, string(found.Kind), found.By
		if err := checkAPI(cfg.Backend, cfg.API); err != nil {
			return "", err
		}
	} else if found.Kind != "" && found.Kind != cfg.Backend && !cfg.Backend.Describe().Generic {
		cfg.ServerNotes = append(cfg.ServerNotes, fmt.Sprintf("--backend %s given, but the server at %s answered as %s (%s)",
			cfg.Backend, cfg.URL, found.Name(), found.By))
	}
	var ae *backend.AuthError
	if errors.As(found.ModelsErr, &ae) {
		return "", authError(ae)
	}
	server := found.Name() + " at " + cfg.URL
	if found.Kind == "" {
		server = cfg.Backend.Name() + " at " + cfg.URL
	}
	if cfg.Model == "" {
		m, err := onlyModel(found, server)
		if err != nil {
			return "", err
		}
		cfg.Model, d.Model, d.ModelBy = m, m, found.ModelsBy
	} else if ok, known := found.Serves(cfg.Backend, cfg.Model); known && !ok {
		return "", configf("--model %q: %s does not serve it; it serves %s", cfg.Model, server, servedList(found.Models))
	}
	cfg.defaultLabel()
	if d.URL == "" && d.Backend == "" && d.Model == "" {
		return "", nil
	}
	cfg.Discovered = d
	return fmt.Sprintf("found %s serving %s", server, cfg.Model), nil
}

// onlyModel is the server's only model, or a usage error that lists what
// it serves or says why that is not known.
func onlyModel(found backend.Found, server string) (string, error) {
	switch {
	case found.Models == nil:
		return "", configf("--model is required: the models of %s could not be listed (%v)", server, found.ModelsErr)
	case len(found.Models) == 0:
		return "", configf("--model is required: %s lists no model", server)
	case len(found.Models) > 1:
		return "", configf("--model is required: %s serves %d models: %s", server, len(found.Models), servedList(found.Models))
	}
	return found.Models[0], nil
}

// servedList writes model names for an error line, at most 20 of them.
func servedList(models []string) string {
	const most = 20
	if len(models) == 0 {
		return "no model"
	}
	if len(models) > most {
		return strings.Join(models[:most], ", ") + fmt.Sprintf(" and %d more", len(models)-most)
	}
	return strings.Join(models, ", ")
}

// identifyError turns Identify's failure at --url into one line that says
// what was looked for there.
func identifyError(cfg *runConfig, err error) error {
	var ue *backend.UnreachableError
	var ae *backend.AuthError
	var re *backend.UnrecognisedError
	switch {
	case errors.As(err, &ae):
		return authError(ae)
	case errors.As(err, &ue):
		return fmt.Errorf("run: no server at %s (%s): looked there for %s; start the server or check --url", cfg.URL, reason(ue.Err), lookedFor(cfg.Backend))
	case errors.As(err, &re):
		return configf("--url %s answered, but not as %s (%s); give --backend if it is one", cfg.URL, lookedFor(cfg.Backend), strings.Join(re.Answers, "; "))
	}
	return fmt.Errorf("run: --url %s: %w", cfg.URL, err)
}

// noServerError says which server kinds were looked for where, and why
// each place had none.
func noServerError(cfg *runConfig, misses []backend.Miss) error {
	if len(misses) == 0 {
		return errors.New("run: no place to look for a server: give --url")
	}
	var where []string
	reasons := map[string]bool{}
	for _, m := range misses {
		kinds := m.Candidate.Kinds
		if cfg.Backend != "" {
			kinds = []backend.Kind{cfg.Backend}
		}
		where = append(where, kindNames(kinds)+" at "+hostPort(m.Candidate.URL))
		reasons[missReason(m.Err)] = true
	}
	why := ""
	if len(reasons) == 1 {
		for r := range reasons {
			why = " (" + r + " everywhere)"
		}
	} else {
		for i, m := range misses {
			where[i] += " (" + missReason(m.Err) + ")"
		}
	}
	return fmt.Errorf("run: no LLM server found on this machine: looked for %s%s; start one, or give --url", strings.Join(where, ", "), why)
}

// missReason is a short reason for a place without a server.
func missReason(err error) string {
	var ue *backend.UnreachableError
	var re *backend.UnrecognisedError
	var ae *backend.AuthError
	switch {
	case errors.As(err, &ue):
		return reason(ue.Err)
	case errors.As(err, &re):
		return "answered, but not as an LLM server servebench knows"
	case errors.As(err, &ae):
		return "wants an API key (--api-key or OPENAI_API_KEY)"
	}
	return err.Error()
}

// reason is a short transport failure: "connection refused", "no answer in
// time", or the error itself.
func reason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	return err.Error()
}

// authError tells how the key is given, never the key.
func authError(ae *backend.AuthError) error {
	if ae.KeyGiven {
		return configf("%s refused the API key given (%s answered %s); check --api-key or OPENAI_API_KEY", ae.URL, ae.Request, ae.Status)
	}
	return configf("%s wants an API key (%s answered %s); give it with --api-key or in OPENAI_API_KEY", ae.URL, ae.Request, ae.Status)
}

// lookedFor names the families Identify looks for: the one given, or all.
func lookedFor(k backend.Kind) string {
	if k != "" {
		return k.Name()
	}
	return "vLLM, SGLang, llama.cpp, TGI, Ollama or any OpenAI-compatible server"
}

// kindNames joins family names with "or".
func kindNames(kinds []backend.Kind) string {
	if len(kinds) == 0 {
		return "any LLM server"
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name())
	}
	return strings.Join(names, " or ")
}

// hostPort is a URL without its scheme, for short messages.
func hostPort(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	return rest
}

// resultOutput decides where the report document goes and whether the run
// ends with its table: an --out file (or "-") is kept; without --out the
// document goes to standard output, as it always did, unless that is a
// terminal: then to servebench-YYYYMMDD-HHMMSS.json (local time now) in
// the current folder. The table is shown on a terminal when the document
// is not written there.
func resultOutput(out string, terminal bool, now time.Time) (path string, table bool) {
	switch {
	case out == "" && terminal:
		return now.Local().Format("servebench-20060102-150405.json"), true
	case out == "":
		return "-", false
	}
	return out, terminal && out != "-"
}

// showTable writes the table `servebench report FILE [--slo ...]` writes
// for the document just written to path, and says where the document is.
func showTable(w io.Writer, path string, bounds []slo.Bound, choice tableChoice) error {
	set, err := loadSet([]string{path})
	if err != nil {
		return err
	}
	layout, _ := reportLayout(set, bounds, choice.view(bounds))
	layout.Width = choice.width(w)
	if err := report.WriteText(w, layout); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\n%s", report.WrapLine(report.Clean(fmt.Sprintf("servebench: the full result is in %s (servebench report %s shows it again; --wide for every column)", path, path)), layout.Width, "", "  "))
	return err
}
