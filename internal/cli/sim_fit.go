package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/internal/safetext"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/sim"
)

const simFitSynopsis = `sim fit RESULT.json|records.jsonl [more…] --out sim-profile.json [flags]

Fits the simulator to measured sweeps: per run, the GPU's achieved
memory and compute efficiencies and the request latency (and, given
several levels, the per-sequence cost; the per-step overhead stays at its
documented default, which the figures of one sweep cannot separate from
the memory efficiency). Server settings a document does not record
(llama.cpp's and Ollama's slot count, vLLM's max_num_batched_tokens) are
chosen and said. A run whose model resolves to no preset (and the batch
document, which names none) gets its bytes read per step and FLOPs per
token fitted as free parameters instead, and says so. Several documents
make one fit: runs that share a server (backend, model, GPU), in one file
or several, share its chosen settings. A run the simulator cannot run as
measured (say, a model its capacity model does not fit on the GPU) is
left out and reported, and the others are fitted.

Prints per run the fitted parameters and a residual table (predicted
beside measured, per level and figure, and beside each fitted figure its
leave-one-level-out error: the level predicted by a fit on the run's
other levels) and writes the profile to --out,
which 'sim serve --sim-profile' (and 'run --backend sim --sim-profile')
apply to later predictions. Exit status: 0 when every fitted figure is
within --tolerance; 1 when some run misses it (its residuals are printed
and the profile is still written: it is the best fit there is), or when
some run was left out; 2 for
usage errors (a bad flag, an unreadable file, a document with too few
levels, an unknown GPU).

Flags`

// simFitFlags are the flags of sim fit.
type simFitFlags struct {
	out, gpu  string
	runs      string
	lowest    bool
	tolerance float64
	seed      uint64
	maxIter   int
}

func (f *simFitFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
	Uint64Var(*uint64, string, uint64, string)
}) {
	fs.StringVar(&f.out, "out", "", "file to write the fitted profile (sim-profile.json) to (required)")
	fs.StringVar(&f.gpu, "gpu", "", "GPU the measurements ran on, from the catalog, for documents that name none or one the catalog does not know (replaces the documents')")
	fs.StringVar(&f.runs, "run", "", "comma-separated run labels to fit (default: every run)")
	fs.BoolVar(&f.lowest, "lowest", false, "fit each run on its lowest-concurrency level alone and predict the others (they are printed as not fitted)")
	fs.Float64Var(&f.tolerance, "tolerance", 0.10, "largest relative error a fitted figure may keep (0.10 = ±10%); beyond it the fit counts as missing its targets (exit 1)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the simulated clients' jitter")
	fs.IntVar(&f.maxIter, "max-iter", 200, "optimizer iterations per fit")
}

// check validates the flags; errors are usage errors naming the flag.
func (f *simFitFlags) check(files []string) error {
	switch {
	case len(files) == 0:
		return usagef("sim fit: no result document given (want RESULT.json or records.jsonl)")
	case f.out == "":
		return usagef("sim fit: --out is required (the sim-profile.json to write)")
	case !(f.tolerance > 0 && f.tolerance < 10):
		return usagef("sim fit: --tolerance %v must be in (0, 10)", f.tolerance)
	case f.maxIter < 1 || f.maxIter > 100000:
		return usagef("sim fit: --max-iter %d must be in 1..100000", f.maxIter)
	}
	if f.gpu != "" {
		if _, err := sim.LookupGPU(f.gpu); err != nil {
			return usagef("sim fit: --gpu: %v", err)
		}
	}
	if fi, err := os.Stat(filepath.Dir(f.out)); err != nil || !fi.IsDir() {
		return usagef("sim fit: --out %s: directory %s does not exist", f.out, filepath.Dir(f.out))
	}
	return nil
}

// wantRuns is the --run set (nil: every run).
func (f *simFitFlags) wantRuns() []string {
	if f.runs == "" {
		return nil
	}
	var out []string
	for _, s := range strings.Split(f.runs, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func runSimFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sim fit", simFitSynopsis, stdout)
	var f simFitFlags
	f.register(fs)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := f.check(files); err != nil {
		return err
	}
	srcs, err := report.ReadSources(files)
	if err != nil {
		var de *document.DecodeError
		if errors.As(err, &de) {
			return usagef("sim fit: %v", err)
		}
		return fmt.Errorf("sim fit: %w", err)
	}
	specs, err := simFitSpecs(srcs, &f)
	if err != nil {
		return err
	}
	opt := sim.FitOptions{LowestOnly: f.lowest, Tolerance: f.tolerance, Seed: f.seed, MaxIter: f.maxIter, LeaveOneOut: true}
	// One fit over every document: runs of one server (backend, model,
	// GPU) share the settings the fit chooses, whichever file they are in.
	var all []sim.RunSpec
	var from []string
	for i, src := range srcs {
		for range specs[i] {
			from = append(from, src.File)
		}
		all = append(all, specs[i]...)
	}
	if len(all) == 0 {
		return usagef("sim fit: --run selects no run")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim fit: interrupted: %w", err)
	}
	fmt.Fprintf(stderr, "sim fit: fitting %d run(s) of %s…\n", len(all), strings.Join(srcFiles(srcs), ", "))
	start := time.Now()
	opt.Progress = fitProgress(stderr, func(label string) string { return fileOf(all, from, label) }, start)
	prof, err := sim.FitRuns(all, opt)
	var fe *sim.FitError
	if err != nil && !errors.As(err, &fe) {
		return simFitError(strings.Join(srcFiles(srcs), ", "), err)
	}
	fmt.Fprintf(stderr, "sim fit: fitted in %v\n", time.Since(start).Round(time.Millisecond))
	var missed []string
	for k := range prof.Runs {
		rp := &prof.Runs[k]
		// Labels, models, notes and workloads come from the document:
		// control characters and bidirectional overrides are shown
		// escaped, as report shows them.
		var b strings.Builder
		writeRunFit(&b, fileOf(all, from, rp.Label), rp, f.tolerance)
		io.WriteString(stdout, safetext.Lines(b.String()))
		if !rp.TargetsMet {
			missed = append(missed, safetext.Line(rp.Label))
		}
	}
	for _, sk := range prof.Skipped {
		fmt.Fprintf(stdout, "%s (%s): not fitted: the simulator cannot run it as measured: %s\n\n",
			safetext.Line(sk.Label), fileOf(all, from, sk.Label), safetext.Line(sk.Reason))
	}
	if err := writeProfileFile(f.out, prof); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sim fit: wrote %s (%d runs)\n", f.out, len(prof.Runs))
	if len(prof.Skipped) > 0 {
		var labels []string
		for _, sk := range prof.Skipped {
			labels = append(labels, safetext.Line(sk.Label))
		}
		return fmt.Errorf("sim fit: %d of %d runs not fitted (%s): see why above; the other runs were fitted and %s was written",
			len(prof.Skipped), len(prof.Skipped)+len(prof.Runs), strings.Join(labels, ", "), f.out)
	}
	if len(missed) > 0 {
		return fmt.Errorf("sim fit: %d of %d runs miss the ±%.0f%% tolerance (%s): see their residuals above; %s was written all the same (it is the best fit found)",
			len(missed), len(prof.Runs), f.tolerance*100, strings.Join(missed, ", "), f.out)
	}
	return nil
}

// srcFiles are the sources' file names.
func srcFiles(srcs []report.Source) []string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.File
	}
	return out
}

// fileOf is the file the run labelled label came from (labels are unique
// across files: simFitSpecs makes them so).
func fileOf(specs []sim.RunSpec, files []string, label string) string {
	for i := range specs {
		if specs[i].Label == label {
			return files[i]
		}
	}
	return ""
}

// simFitSpecs turns each source into the runs to fit, per file: --gpu
// filled in, --run applied, labels made unique across files.
func simFitSpecs(srcs []report.Source, f *simFitFlags) ([][]sim.RunSpec, error) {
	want := f.wantRuns()
	out := make([][]sim.RunSpec, len(srcs))
	seen := map[string]bool{}
	var labels []string
	for i, src := range srcs {
		doc := src.Doc
		if f.gpu != "" {
			doc.GPU = &f.gpu
			for k := range doc.Runs {
				doc.Runs[k].GPU = nil
			}
		}
		specs, err := sim.RunSpecs(doc)
		if err != nil {
			hint := ""
			if errors.Is(err, sim.ErrUnknownGPU) {
				hint = " (give --gpu)"
			}
			return nil, usagef("sim fit: %s: %v%s", src.File, err, hint)
		}
		if len(specs) == 0 {
			return nil, usagef("sim fit: %s: no runs and no records to fit", src.File)
		}
		for _, rs := range specs {
			labels = append(labels, rs.Label)
			if want != nil && !slices.Contains(want, rs.Label) {
				continue
			}
			if seen[rs.Label] {
				rs.Label = filepath.Base(src.File) + ":" + rs.Label
			}
			seen[rs.Label] = true
			out[i] = append(out[i], rs)
		}
	}
	for _, w := range want {
		if !slices.Contains(labels, w) {
			return nil, usagef("sim fit: --run %q: no such run (the documents have %s)", w, strings.Join(labels, ", "))
		}
	}
	return out, nil
}

// simFitError turns a fit's error into one line naming the file: a usage
// error (exit 2) for input that cannot be fitted.
func simFitError(file string, err error) error {
	for _, e := range []error{sim.ErrTooFewLevels, sim.ErrUnknownGPU, sim.ErrUnknownModel, sim.ErrDoesNotFit, sim.ErrBadInput} {
		if errors.Is(err, e) {
			return usagef("sim fit: %s: %s", file, safetext.Line(err.Error()))
		}
	}
	return fmt.Errorf("sim fit: %s: %w", file, err)
}

// writeProfileFile writes prof to path; a failure names --out.
func writeProfileFile(path string, prof *sim.Profile) error {
	fh, err := filecap.Create(path)
	if err != nil {
		return fmt.Errorf("sim fit: --out %s: %v", path, err)
	}
	if err := sim.WriteProfile(fh, prof); err != nil {
		fh.Abort()
		return fmt.Errorf("sim fit: --out %s: %v", path, err)
	}
	if err := fh.Commit(); err != nil {
		return fmt.Errorf("sim fit: --out %s: %v", path, err)
	}
	return nil
}

// keptWhy says why a parameter stayed where it was.
var keptWhy = map[string]string{
	"step_overhead":   "the documented default: every step reads the weights, so a sweep cannot separate it from the memory efficiency",
	"seq_cost":        "the documented default: one level cannot separate per-sequence from per-step overhead",
	"request_latency": "the documented default",
}

// writeRunFit prints one run's fit: what was fitted, what was kept and
// why, the settings chosen, and the residual table.
func writeRunFit(w io.Writer, file string, rp *sim.RunProfile, tol float64) {
	var levels []string
	for _, l := range rp.FitLevels {
		if s := fmt.Sprint(l); !slices.Contains(levels, s) {
			levels = append(levels, s)
		}
	}
	model := rp.Model
	if model == "" {
		model = "no model named"
	}
	fmt.Fprintf(w, "%s (%s): %s, %s on %s; fitted on concurrency %s\n", rp.Label, file, rp.Backend, model, rp.GPU.Name, strings.Join(levels, ", "))
	var fitted []string
	for _, n := range rp.Fitted {
		fitted = append(fitted, n+" "+paramText(rp, n))
	}
	fmt.Fprintf(w, "  fitted: %s\n", strings.Join(fitted, ", "))
	if rp.FreeModel {
		fmt.Fprintln(w, "  the model resolves to no preset: its cost (bytes read per step, FLOPs per token, an image's encoder FLOPs) is fitted as free parameters")
		if !slices.Contains(rp.Fitted, "flops_per_token") {
			fmt.Fprintf(w, "  kept: flops_per_token %s (the starting guess: no TTFT was measured to inform it)\n", paramText(rp, "flops_per_token"))
		}
	} else {
		fmt.Fprintf(w, "  model cost from the preset %s: %s read per step, %s per token\n", rp.Cost.Name,
			paramText(rp, "weight_bytes_per_step"), paramText(rp, "flops_per_token"))
	}
	for _, n := range rp.KeptAtDefault {
		if why, ok := keptWhy[n]; ok {
			fmt.Fprintf(w, "  kept: %s %s (%s)\n", n, paramText(rp, n), why)
		}
	}
	for _, c := range rp.Chosen {
		fmt.Fprintf(w, "  chosen (the document does not record it): %s = %d: %s\n", c.Setting, c.Value, c.Why)
	}
	for _, n := range rp.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  concurrency\tworkload\tfigure\tmeasured\tpredicted\terror\tfitted\tleft out\t")
	for _, r := range rp.Residuals {
		fit := "no"
		if r.Fitted {
			fit = "yes"
		}
		wl := r.Workload
		if wl == "" {
			wl = "-"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%+.1f%%\t%s\t%s\t\n", r.Level, wl, r.Metric, sig4(r.Measured), sig4(r.Predicted), r.ErrorPct, fit, leftOut(rp, r))
	}
	tw.Flush()
	writeLeaveOneOut(w, rp)
	var miss []string
	for _, r := range rp.Residuals {
		if r.Fitted && math.Abs(r.ErrorPct) > tol*100 {
			miss = append(miss, fmt.Sprintf("%s at level %d %+.1f%%", r.Metric, r.Level, r.ErrorPct))
		}
	}
	if len(miss) == 0 {
		fmt.Fprintf(w, "  targets met: every fitted figure within ±%.0f%%\n\n", tol*100)
		return
	}
	fmt.Fprintf(w, "  TARGETS MISSED (±%.0f%%): %s\n\n", tol*100, strings.Join(miss, "; "))
}

// leftOut is the leave-one-level-out error of r's figure: its level
// predicted by a fit on the run's other levels, or "-" where there is
// none (a figure not fitted, a run of one level).
func leftOut(rp *sim.RunProfile, r sim.Residual) string {
	if !r.Fitted {
		return "-"
	}
	for _, l := range rp.LeaveOneOut {
		if l.Level == r.Level && l.Workload == r.Workload && l.Metric == r.Metric {
			return fmt.Sprintf("%+.1f%%", l.ErrorPct)
		}
	}
	return "-"
}

// writeLeaveOneOut prints the median |error| of the fitted figures in
// sample and left out, per figure: how much of the fit's agreement is
// the data it was given.
func writeLeaveOneOut(w io.Writer, rp *sim.RunProfile) {
	if len(rp.LeaveOneOut) == 0 {
		fmt.Fprintln(w, "  leave-one-level-out: not computed (one level, or too few figures without one)")
		return
	}
	var parts []string
	for _, m := range []string{sim.MetricThroughput, sim.MetricAggregate, sim.MetricTPOT, sim.MetricTTFT} {
		var in, out []float64
		for _, r := range rp.Residuals {
			if r.Fitted && r.Metric == m {
				in = append(in, math.Abs(r.ErrorPct))
			}
		}
		for _, r := range rp.LeaveOneOut {
			if r.Metric == m {
				out = append(out, math.Abs(r.ErrorPct))
			}
		}
		if len(out) > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f%% in sample, %.1f%% left out", m, medianOf(in), medianOf(out)))
		}
	}
	fmt.Fprintf(w, "  leave-one-level-out (median |error|): %s\n", strings.Join(parts, "; "))
}

// medianOf is the median of xs (0 for none).
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// paramText is a parameter's value with its unit.
func paramText(rp *sim.RunProfile, name string) string {
	v, unit, ok := rp.Value(name)
	if !ok {
		return "?"
	}
	switch unit {
	case "s":
		d := time.Duration(v * 1e9)
		if d < time.Millisecond {
			return fmt.Sprintf("%.1f µs", v*1e6)
		}
		return fmt.Sprintf("%.2f ms", v*1e3)
	case "B":
		return fmt.Sprintf("%.3g GB", v/1e9)
	case "FLOP":
		return fmt.Sprintf("%.3g GFLOP", v/1e9)
	}
	return fmt.Sprintf("%.3f", v)
}

// sig4 prints a figure with four significant digits, without exponents.
func sig4(x float64) string {
	if math.Abs(x) >= 1000 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.4g", x)
}

// fitProgress reports on stderr each run of file as it is fitted, with
// how many are done and the time so far: a document of hundreds of runs
// takes minutes, and the runs' tables come only at the end (a file of
// one run has its "fitted in" line). The label is shown escaped
// (safetext), as the tables show it.
func fitProgress(stderr io.Writer, fileOf func(label string) string, start time.Time) func(label string, done, total int) {
	return func(label string, done, total int) {
		if total < 2 {
			return
		}
		fmt.Fprintf(stderr, "sim fit: %s: run %s fitted (%d of %d, %v)\n", fileOf(label), safetext.Line(label), done, total, time.Since(start).Round(time.Millisecond))
	}
}
