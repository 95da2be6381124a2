package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/serverlog"
	"github.com/servebench/servebench/telemetry"
)

// calibrateFlags are calibrate's own flags beside the plan flags.
type calibrateFlags struct {
	planFlags
	log, url, serverModel, out string
	fit, asJSON                bool
}

func runCalibrate(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("calibrate", "calibrate --backend vllm|llamacpp|ollama|seed (--log FILE | --url URL) --model M [plan flags] [--fit --calibration FILE] [--out FILE] [--json]", stdout)
	var f calibrateFlags
	f.planFlags.register(fs, "vllm")
	fs.StringVar(&f.log, "log", "", "server log `FILE` to read the real capacity from")
	fs.StringVar(&f.url, "url", "", "live server base `URL` (vLLM: /metrics cache_config_info; Ollama: /api/show and /api/ps)")
	fs.StringVar(&f.serverModel, "server-model", "", "model name on the live Ollama server (default: --model)")
	fs.BoolVar(&f.fit, "fit", false, "store the correction actual/predicted for this backend, GPU and KV dtype in --calibration FILE")
	fs.StringVar(&f.out, "out", "", "write the calibration record as a result document to `FILE`")
	fs.BoolVar(&f.asJSON, "json", false, "print the comparison as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
	}
	if (f.log == "") == (f.url == "") && !(f.log != "" && f.url != "" && f.backend == "ollama") {
		return usagef("calibrate: give --log FILE or --url URL (both only for Ollama, whose /api/ps lacks the KV size before v0.11)")
	}
	if f.fit && f.calibration == "" {
		return usagef("calibrate: --fit needs --calibration FILE")
	}
	if f.model == "" && f.serverModel == "" {
		return usagef("calibrate: --model is required (or --server-model with --url for Ollama)")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return calibrate(ctx, &f, set, stdout)
}

// calibrate gathers the real capacity, plans with the same inputs and
// prints, records and optionally fits the comparison.
func calibrate(ctx context.Context, f *calibrateFlags, set map[string]bool, stdout io.Writer) error {
	var (
		actual plan.Actual
		li     plan.LogInputs
		notes  []string
	)
	if f.log != "" {
		c, err := serverlog.ParseFile(f.log)
		if err != nil {
			return usagef("calibrate: --log: %v", err)
		}
		if !c.Found() {
			return usagef("calibrate: --log %s: no KV-cache capacity line (vLLM \"GPU KV cache size\" / \"# GPU blocks\", llama.cpp \"KV self size\" / \"llama_kv_cache: size\")", f.log)
		}
		li = plan.LogInputs{GPUGiB: c.TotalGPUGiB, Utilization: c.Utilization, NCtx: c.NCtx, NSeq: c.NSeq, TypeK: c.TypeK,
			VLLMVersion: c.VLLMVersion, GraphsCharged: c.CUDAGraphEstimateApplied}
		actual.Terms = plan.MemoryTerms{Weights: c.WeightsGiB, Activation: c.ActivationGiB, NonTorch: c.NonTorchGiB,
			CUDAGraphs: c.CUDAGraphEstimateGiB, AvailableKV: c.AvailableKVGiB, GraphsCharged: c.CUDAGraphEstimateApplied}
		notes = append(notes, logGraphNotes(&c)...)
		if li.NCtx == nil {
			li.NCtx = c.Cells
		}
		if c.TotalGPUGiB != nil && f.gpu == "" && f.gpuGiB == 0 {
			f.gpuGiB = *c.TotalGPUGiB
		}
		actual.Tokens, _ = c.TokensFor(f.blockSize)
		actual.KVMiB, actual.Source = c.KVMiB, "log "+f.log
	}
	if f.model == "" && f.url != "" && f.backend == "ollama" {
		f.model = f.serverModel
	}
	var mi map[string]any
	if f.url != "" {
		var err error
		if mi, err = liveActual(ctx, f, &actual, &notes); err != nil {
			return err
		}
	}
	in, err := f.inputs(ctx, "calibrate", mi)
	if err != nil {
		return err
	}
	notes = append(notes, plan.ApplyLog(&in, li, set)...)
	if len(in.KVDtypes) > 1 {
		in.KVDtypes = in.KVDtypes[:1]
	}
	in.Corrections = nil // compare the model itself, not a corrected figure
	res, err := plan.Plan(in)
	if err != nil {
		return usagef("calibrate: %v", err)
	}
	preset := ""
	if _, err := plan.Preset(f.model); err == nil {
		preset = f.model
	}
	cmp, err := plan.Compare(res, &res.Predictions[0], actual, preset)
	if err != nil {
		return fmt.Errorf("calibrate: %s: %v", actual.Source, err)
	}
	var fitted *plan.Correction
	if f.fit {
		if cmp.Record.ActualTokens == 0 {
			return fmt.Errorf("calibrate: --fit: %s gave no token capacity to fit", actual.Source)
		}
		if cmp.Record.PredictedTokens <= 0 {
			return fmt.Errorf("calibrate: --fit: the prediction is 0 tokens (the model does not fit), so there is no factor to fit")
		}
		cf, err := plan.LoadCalibration(f.calibration)
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
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			plan.Comparison
			Notes      []string         `json:"notes,omitempty"`
			Warnings   []string         `json:"warnings,omitempty"`
			Correction *plan.Correction `json:"correction,omitempty"`
		}{cmp, notes, res.Warnings, fitted})
	}
	return writeComparison(stdout, res, cmp, notes, fitted, f.calibration)
}

// liveActual reads the live server's capacity into actual; for Ollama it
// also returns the model's GGUF metadata from /api/show.
func liveActual(ctx context.Context, f *calibrateFlags, actual *plan.Actual, notes *[]string) (map[string]any, error) {
	url := strings.TrimRight(f.url, "/")
	shown := redactURL(url) // for the record, notes and errors
	switch f.backend {
	case "vllm", "seed":
		names, _ := telemetry.NamesFor(backend.VLLM)
		smp, err := telemetry.NewScraper(url+"/metrics", names, 0).Scrape(ctx)
		if err != nil {
			return nil, fmt.Errorf("calibrate: --url: %v", err)
		}
		c := smp.Cache
		if c.Blocks == nil || c.BlockSize == nil {
			return nil, fmt.Errorf("calibrate: --url %s: no vllm:cache_config_info with num_gpu_blocks and block_size", shown)
		}
		actual.Tokens, actual.Source = *c.Blocks**c.BlockSize, shown+"/metrics cache_config_info"
		if f.blockSize == 16 {
			f.blockSize = *c.BlockSize
		}
		if c.Dtype != nil && f.kvDtype == "" {
			f.kvDtype = *c.Dtype
		}
		if c.GPUMemoryUtilization != nil && f.util == 0 {
			f.util = *c.GPUMemoryUtilization
		}
		*notes = append(*notes, fmt.Sprintf("from %s: num_gpu_blocks %d × block_size %d", shown, *c.Blocks, *c.BlockSize))
		return nil, nil
	case "ollama":
		name := f.serverModel
		if name == "" {
			name = f.model
		}
		cfg := backend.Config{Kind: backend.Ollama, BaseURL: url, Model: name}
		id := backend.Probe(ctx, cfg)
		if id.Server.SizeBytes == nil {
			return nil, fmt.Errorf("calibrate: --url %s: model %q is not loaded (GET /api/ps lists no size); send it one request first%s", shown, name, joinWarnings(id.Warnings))
		}
		mib := float64(*id.Server.SizeBytes) / plan.MiB
		actual.TotalMiB = &mib
		if actual.Source == "" {
			actual.Source = shown + "/api/ps"
		} else {
			actual.Source += " and " + shown + "/api/ps"
		}
		if id.Runtime != nil {
			*notes = append(*notes, "server: "+*id.Runtime)
		}
		src := id.Server.Details["context_length_source"]
		switch {
		case strings.Contains(src, "/api/ps") && id.Server.ContextLength != nil && f.log == "":
			*notes = append(*notes, fmt.Sprintf("from /api/ps: context_length %d per slot", *id.Server.ContextLength))
			if f.context == 0 {
				f.context = *id.Server.ContextLength
			}
		case f.log == "":
			*notes = append(*notes, "this Ollama's /api/ps gives no loaded context_length (added in v0.11): only the total size is compared; pass --log FILE for the KV cells and size")
		}
		if _, err := os.Stat(f.model); err == nil {
			return nil, nil // the model file gives the spec and weights
		}
		mi, err := backend.OllamaModelInfo(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("calibrate: --url: %v", err)
		}
		return mi, nil
	}
	return nil, usagef("calibrate: --url works with --backend vllm or ollama; for llama.cpp give --log")
}

// logGraphNotes says what a vLLM log tells of its attention backend and
// CUDA-graph estimate: the figures to hold a FlashInfer term against.
func logGraphNotes(c *serverlog.Capacity) []string {
	var notes []string
	if c.AttentionBackend != "" {
		n := "attention backend " + c.AttentionBackend
		if c.DecodeBackend != "" {
			n += ", decode backend " + c.DecodeBackend
		}
		notes = append(notes, "from the server log: "+n)
	}
	if c.GraphsPiecewise != nil || c.GraphsFull != nil {
		count := func(p *int) string {
			if p == nil {
				return "0"
			}
			return fmt.Sprint(*p)
		}
		notes = append(notes, fmt.Sprintf("from the server log: CUDA graphs profiled PIECEWISE=%s FULL=%s", count(c.GraphsPiecewise), count(c.GraphsFull)))
	}
	for _, g := range c.GraphSamples {
		notes = append(notes, fmt.Sprintf("from the server log: %s graphs estimated at %.2f MiB first capture + (%d−1) × %.2f MiB per graph",
			g.Mode, g.FirstCaptureMiB, g.Graphs, g.PerGraphMiB))
	}
	if c.CUDAGraphActualGiB != nil {
		notes = append(notes, fmt.Sprintf("from the server log: CUDA graphs took %.2f GiB once captured", *c.CUDAGraphActualGiB))
	}
	return notes
}

// redactURL hides the password of a URL's user info
// (http://user:xxxxx@host), which must not reach a calibration record.
func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

func joinWarnings(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return " (" + strings.Join(w, "; ") + ")"
}

// writeComparison prints prediction, actual and error, then any fit.
func writeComparison(out io.Writer, res *plan.Result, c plan.Comparison, notes []string, fitted *plan.Correction, file string) error {
	w := &strings.Builder{}
	r, p := c.Record, res.Predictions[0]
	fmt.Fprintf(w, "%s with %s on %.2f GiB, KV %s\n", res.Model.Name, res.Inputs.Backend, r.GPUGiB, r.KVCacheDtype)
	if r.ActualTokens > 0 {
		fmt.Fprintf(w, "predicted %s tokens, actual %s tokens (%s): error %+.1f%%\n", plan.Thousands(r.PredictedTokens), plan.Thousands(r.ActualTokens), r.Source, r.ErrorPct)
	}
	if r.ActualKVMiB != nil && c.KVErrorPct != nil {
		fmt.Fprintf(w, "predicted KV %.2f MiB, actual %.2f MiB: error %+.1f%%\n", *r.PredictedKVMiB, *r.ActualKVMiB, *c.KVErrorPct)
	}
	if c.ActualTotalMiB != nil {
		fmt.Fprintf(w, "predicted total %.1f MiB (weights %.2f GiB + KV + compute buffer %.1f MiB), server size %.1f MiB: error %+.1f%%\n",
			*c.PredictedTotalMiB, p.WeightsGiB, p.ComputeBufferMiB, *c.ActualTotalMiB, *c.TotalErrorPct)
	}
	if len(c.Terms) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "memory term\tpredicted GiB\tlog GiB\tpredicted − log\t")
		for _, t := range c.Terms {
			fmt.Fprintf(tw, "%s\t%.3f\t%.2f\t%+.2f\t\n", t.Term, t.PredictedGiB, t.LogGiB, t.DiffGiB)
		}
		tw.Flush()
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	if fitted != nil {
		fmt.Fprintf(w, "stored correction ×%.4f for (%s, %s, %s) in %s\n", fitted.Factor, fitted.Backend, fitted.GPU, fitted.KVDtype, file)
	}
	_, err := io.WriteString(out, w.String())
	return err
}

// writeCalibrationDoc writes a result document holding the record, in the
// seed's calibration shape.
func writeCalibrationDoc(path string, res *plan.Result, rec document.Calibration) error {
	doc := document.Document{Calibration: []document.Calibration{rec}, Planner: res.Planner}
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
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
