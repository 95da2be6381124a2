package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report/plantext"
	"github.com/servebench/servebench/serverlog"
	"github.com/servebench/servebench/telemetry"
)

// calibrateFlags are calibrate's own flags beside the plan flags.
type calibrateFlags struct {
	planFlags
	log, url, serverModel, out string
	fit, asJSON                bool
	// kind is the server family --backend names.
	kind backend.Kind
}

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate", "calibrate --backend vllm|llamacpp|ollama [--capacity-model server|seed] (--log FILE | --url URL) --model M [plan flags] [--fit --calibration FILE] [--out FILE] [--json]", stdout)
	var f calibrateFlags
	f.planFlags.register(fs, "vllm")
	fs.StringVar(&f.log, "log", "", "server log `FILE` to read the real capacity from")
	fs.StringVar(&f.url, "url", "", "live server base `URL` (vLLM: /metrics cache_config_info; Ollama: /api/show and /api/ps)")
	fs.StringVar(&f.serverModel, "server-model", "", "model name on the live Ollama server (default: --model)")
	fs.BoolVar(&f.fit, "fit", false, "store the correction actual/predicted for this capacity model, GPU and KV dtype in --calibration FILE")
	fs.StringVar(&f.out, "out", "", "write the calibration record as a result document to `FILE`")
	fs.BoolVar(&f.asJSON, "json", false, "print the comparison as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if f.kind, _, err = f.server("calibrate"); err != nil {
		return err
	}
	if (f.log == "") == (f.url == "") && !(f.log != "" && f.url != "" && f.kind == backend.Ollama) {
		return usagef("calibrate: give --log FILE or --url URL (both only for Ollama, whose /api/ps lacks the KV size before v0.11)")
	}
	if err := f.checkFiles(); err != nil {
		return err
	}
	f.calibrationMayBeNew = f.fit
	if f.model == "" && f.serverModel == "" {
		return usagef("calibrate: --model is required (or --server-model with --url for Ollama)")
	}
	if f.model == "" && f.url != "" && f.kind == backend.Ollama {
		f.model = f.serverModel // the spec comes from the server's /api/show
	}
	obs, modelInfo, err := f.observe(ctx)
	if err != nil {
		return err
	}
	in, err := f.inputs(ctx, "calibrate", modelInfo)
	if err != nil {
		return err
	}
	in.Given = f.given(fs)
	cal, err := plan.Calibrate(in, obs)
	var nc *plan.NoCapacityError
	switch {
	case errors.As(err, &nc):
		return fmt.Errorf("calibrate: %v", err)
	case err != nil:
		return planError("calibrate", err)
	}
	return f.report(cal, stdout, stderr)
}

// checkFiles checks --url's shape (no query string or fragment, where
// keys are passed) and that --fit has a --calibration file to fit into.
func (f *calibrateFlags) checkFiles() error {
	if f.url != "" {
		if _, err := checkURLShape(f.url); err != nil {
			return usagef("calibrate: --url: %v", err)
		}
	}
	if f.fit && f.calibration == "" {
		return usagef("calibrate: --fit needs --calibration FILE")
	}
	return nil
}

// observe gathers what the server reported: its log (--log) and its live
// figures (--url). For Ollama it also returns the model's GGUF metadata
// from /api/show, which stands in for --model.
func (f *calibrateFlags) observe(ctx context.Context) (plan.Observed, map[string]any, error) {
	var obs plan.Observed
	if f.log != "" {
		c, err := serverlog.ParseFile(f.log)
		if err != nil {
			return obs, nil, usagef("calibrate: --log: %v", err)
		}
		if !c.Found() {
			return obs, nil, usagef("calibrate: --log %s: no KV-cache capacity line (vLLM \"GPU KV cache size\" / \"# GPU blocks\", llama.cpp \"KV self size\" / \"llama_kv_cache: size\")", f.log)
		}
		obs.Log, obs.Source = &c, "log "+f.log
	}
	switch {
	case f.url == "":
		return obs, nil, nil
	case f.kind == backend.VLLM:
		return obs, nil, f.liveVLLM(ctx, &obs)
	case f.kind == backend.Ollama:
		mi, err := f.liveOllama(ctx, &obs)
		return obs, mi, err
	}
	return obs, nil, usagef("calibrate: --url works with --backend vllm or ollama; for llama.cpp give --log")
}

// report fits (--fit), writes (--out) and prints the calibration; the
// deprecation warnings of the flags go to stderr and into the --json
// warnings.
func (f *calibrateFlags) report(cal *plan.Calibration, stdout, stderr io.Writer) error {
	res, cmp := cal.Plan, cal.Comparison
	var fitted *plan.Correction
	if f.fit {
		if cmp.Record.ActualTokens == 0 {
			return fmt.Errorf("calibrate: --fit: %s gave no token capacity to fit", cmp.Record.Source)
		}
		if cmp.Record.PredictedTokens <= 0 {
			return fmt.Errorf("calibrate: --fit: the prediction is 0 tokens (the model does not fit), so there is no factor to fit")
		}
		cf, err := plan.LoadOrNewCalibration(f.calibration)
		if err != nil {
			return usagef("calibrate: --calibration: %v", err)
		}
		c := cf.Fit(cmp.Record, res.Inputs.GPU)
		if err := cf.Save(f.calibration); err != nil {
			return fmt.Errorf("calibrate: --calibration: %v", err)
		}
		fitted = &c
	}
	if f.out != "" {
		if err := writeCalibrationDoc(f.out, res, cmp.Record); err != nil {
			return fmt.Errorf("calibrate: --out: %v", err)
		}
	}
	deprecated := f.deprecations()
	for _, w := range deprecated {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			plan.Comparison
			Notes      []string         `json:"notes,omitempty"`
			Warnings   []string         `json:"warnings,omitempty"`
			Correction *plan.Correction `json:"correction,omitempty"`
		}{cmp, cal.Notes, append(deprecated, res.Warnings...), fitted})
	}
	return plantext.WriteComparison(stdout, res, cmp, cal.Notes, fitted, f.calibration)
}

// liveVLLM reads a live vLLM's KV capacity and cache settings from its
// /metrics cache_config_info into obs.
func (f *calibrateFlags) liveVLLM(ctx context.Context, obs *plan.Observed) error {
	url := strings.TrimRight(f.url, "/")
	shown := redactURL(url) // for the record, notes and errors
	names, _ := backend.MetricsFor(backend.VLLM)
	smp, err := telemetry.NewScraper(url+"/metrics", names, 0).Scrape(ctx)
	if err != nil {
		return fmt.Errorf("calibrate: --url: %s", redactURLIn(err.Error(), url))
	}
	c := smp.Cache
	tokens, ok := c.Tokens()
	if !ok {
		why := ""
		for _, d := range smp.Dropped {
			why += "; " + d.String()
		}
		return fmt.Errorf("calibrate: --url %s: no vllm:cache_config_info with num_gpu_blocks and block_size in range%s", shown, why)
	}
	obs.Live = plan.Live{Tokens: &tokens, BlockSize: c.BlockSize, Utilization: c.GPUMemoryUtilization}
	if c.Dtype != nil {
		obs.Live.KVDtype = *c.Dtype
	}
	obs.Source = shown + "/metrics cache_config_info"
	obs.Notes = append(obs.Notes, fmt.Sprintf("from %s: num_gpu_blocks %d × block_size %d", shown, *c.Blocks, *c.BlockSize))
	return nil
}

// liveOllama reads a live Ollama's size of the loaded model (and, from
// v0.11, its context per slot) from /api/ps into obs, and returns the
// model's GGUF metadata from /api/show unless --model is a file.
func (f *calibrateFlags) liveOllama(ctx context.Context, obs *plan.Observed) (map[string]any, error) {
	url := strings.TrimRight(f.url, "/")
	shown := redactURL(url) // for the record, notes and errors
	name := f.serverModel
	if name == "" {
		name = f.model
	}
	cfg := backend.Config{Kind: backend.Ollama, BaseURL: url, Model: name}
	id := backend.Probe(ctx, cfg)
	if id.Server.SizeBytes == nil {
		return nil, fmt.Errorf("calibrate: --url %s: model %q is not loaded (GET /api/ps lists no size); send it one request first%s", shown, name, redactURLIn(joinWarnings(id.Warnings), url))
	}
	mib := float64(*id.Server.SizeBytes) / plan.MiB
	obs.Live.TotalMiB = &mib
	if obs.Source == "" {
		obs.Source = shown + "/api/ps"
	} else {
		obs.Source += " and " + shown + "/api/ps"
	}
	if id.Runtime != nil {
		obs.Notes = append(obs.Notes, "server: "+*id.Runtime)
	}
	src := id.Server.Details["context_length_source"]
	switch {
	case strings.Contains(src, "/api/ps") && id.Server.ContextLength != nil && f.log == "":
		obs.Notes = append(obs.Notes, fmt.Sprintf("from /api/ps: context_length %d per slot", *id.Server.ContextLength))
		obs.Live.ContextPerSlot = id.Server.ContextLength
	case f.log == "":
		obs.Notes = append(obs.Notes, "this Ollama's /api/ps gives no loaded context_length (added in v0.11): only the total size is compared; pass --log FILE for the KV cells and size")
	}
	if _, err := os.Stat(f.model); err == nil {
		return nil, nil // the model file gives the spec and weights
	}
	mi, err := backend.OllamaModelInfo(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("calibrate: --url: %s", redactURLIn(err.Error(), url))
	}
	return mi, nil
}

// redactURL is raw as it may be shown in a record, a note or an error:
// the user name and password of its user info (a token passed as the user
// name is as secret as a password), its query string and its fragment
// (where keys are passed: "?api_key=…") each become "xxxxx". A string
// that does not parse as a URL is shown only up to its first '?' or
// '#', or its scheme where it has a '@'.
func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		i := strings.IndexAny(raw, "@?#")
		if i < 0 {
			return raw
		}
		shown := raw[:i]
		if raw[i] == '@' { // user info: keep only the scheme
			scheme, _, ok := strings.Cut(shown, "://")
			shown = ""
			if ok {
				shown = scheme + "://"
			}
		}
		return shown + "xxxxx"
	}
	const mask = "xxxxx"
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = neturl.UserPassword(mask, mask)
		} else {
			u.User = neturl.User(mask)
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = mask, false
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = mask, ""
	}
	return u.String()
}

// redactURLIn replaces, in text (an error that quotes the URL it was
// sent to), each part of raw that redactURL masks.
func redactURLIn(text, raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return strings.ReplaceAll(text, raw, redactURL(raw))
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, u.User.String(), u.User.Username())
		if pw, ok := u.User.Password(); ok {
			parts = append(parts, pw)
		}
	}
	parts = append(parts, u.RawQuery, u.EscapedFragment(), u.Fragment)
	for _, p := range parts {
		if p != "" {
			text = strings.ReplaceAll(text, p, "xxxxx")
		}
	}
	return text
}

func joinWarnings(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return " (" + strings.Join(w, "; ") + ")"
}

// writeCalibrationDoc writes a result document holding the record, in the
// seed's calibration shape.
func writeCalibrationDoc(path string, res *plan.Result, rec record.Calibration) error {
	doc := document.Document{Calibration: []record.Calibration{rec}, Planner: res.Planner}
	gib := res.Inputs.GPUGiB
	doc.GPUGiB = &gib
	if res.Inputs.GPU != "" {
		g := res.Inputs.GPU
		doc.GPU = &g
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	f, err := filecap.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
