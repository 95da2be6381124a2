package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/limits"
)

// FitOptions shape a fit.
type FitOptions struct {
	// LowestOnly fits each run on its lowest-concurrency level alone
	// (the accuracy test's protocol); otherwise on every level.
	LowestOnly bool
	// Tolerance is the largest relative error (0.10 = 10%) a fitted
	// figure may keep for the fit to count as reaching it; 0 = 0.10.
	Tolerance float64
	// Seed seeds the simulated clients.
	Seed uint64
	// MaxIter bounds the optimizer's iterations per fit; 0 = 200.
	MaxIter int
	// Progress, when set, is called after each run is fitted with its
	// label and how many of the runs are done (a document of many runs
	// takes minutes: the caller says how far it got).
	Progress func(label string, done, total int)
	// LeaveOneOut also refits each run once per level without that
	// level and predicts it (RunProfile.LeaveOneOut): how well the fit
	// predicts a level it did not see, beside its in-sample residuals.
	// Each refit starts from the run's full fit with its settings held
	// and a budget of LeaveOneOutIter iterations, so it costs a fraction
	// of the fit.
	LeaveOneOut bool
}

// MaxFitLevels bounds the levels one run is fitted on (limits.MaxFitLevels).
const MaxFitLevels = limits.MaxFitLevels

// FitError is a fit that did not bring every fitted figure within the
// tolerance; the profile is still returned, with these residuals.
type FitError struct {
	Label     string
	Tolerance float64
	Residuals []Residual
}

func (e *FitError) Error() string {
	var miss []string
	for _, r := range e.Residuals {
		if r.Fitted && math.Abs(r.ErrorPct) > e.Tolerance*100 {
			miss = append(miss, fmt.Sprintf("%s at level %d: predicted %.4g, measured %.4g (%+.1f%%)", r.Metric, r.Level, r.Predicted, r.Measured, r.ErrorPct))
		}
	}
	return fmt.Sprintf("fit of %s misses its targets by more than %.0f%%: %s", e.Label, e.Tolerance*100, strings.Join(miss, "; "))
}

// param is one free parameter of a fit, optimized in log space. sigma is
// the spread of its prior in log space: how far from its documented
// default the parameter is known to vary between machines (0: no prior,
// the data alone decide).
type param struct {
	name  string
	get   func(*Config) float64
	set   func(*Config, float64)
	lo    float64
	hi    float64
	sigma float64
}

var (
	pMemory = param{"memory_efficiency", func(c *Config) float64 { return c.Params.MemoryEfficiency },
		func(c *Config, v float64) { c.Params.MemoryEfficiency = v }, 0.02, 1, sigmaEfficiency}
	pCompute = param{"compute_efficiency", func(c *Config) float64 { return c.Params.ComputeEfficiency },
		func(c *Config, v float64) { c.Params.ComputeEfficiency = v }, 0.02, 2, sigmaEfficiency}
	pSeq = param{"seq_cost", func(c *Config) float64 { return c.Params.SeqCost.Seconds() },
		func(c *Config, v float64) { c.Params.SeqCost = dur(v) }, 1e-7, 0.05, sigmaOverhead}
	pLatency = param{"request_latency", func(c *Config) float64 { return c.Params.RequestLatency.Seconds() },
		func(c *Config, v float64) { c.Params.RequestLatency = dur(v) }, 1e-5, 10, sigmaOverhead}
	pBytes = param{"weight_bytes_per_step", func(c *Config) float64 { return c.Model.WeightBytesPerStep },
		func(c *Config, v float64) { c.Model.WeightBytesPerStep = v }, 1e6, 1e13, 0}
	pFLOPs = param{"flops_per_token", func(c *Config) float64 { return c.Model.FLOPsPerToken },
		func(c *Config, v float64) { c.Model.FLOPsPerToken = v }, 1e6, 1e14, 0}
	pImage = param{"image_flops", func(c *Config) float64 { return c.Model.ImageFLOPs },
		func(c *Config, v float64) { c.Model.ImageFLOPs = v }, 1e6, 1e16, 0}
)

// Prior and measurement spreads of the fit (log space). The fit is a
// maximum a posteriori estimate: it minimizes Σ (ln(predicted /
// measured) / sigmaMeasured)² over the measured figures plus Σ (ln(value
// / default) / sigma)² over the free parameters. sigmaEfficiency (±28%)
// is the spread of the published efficiencies behind the defaults across
// GPUs and kernels (DEFAULTS.md); sigmaOverhead (a factor e) says that
// per-request and per-sequence costs depend on the host and the HTTP stack
// more than on anything published. Where one level's figures cannot tell
// two parameters apart (at concurrency 1, TTFT is request latency plus
// prefill time), the priors share the difference between them instead of
// an arbitrary choice; where the data can, they decide.
const (
	sigmaMeasured   = 0.05
	sigmaEfficiency = 0.25
	sigmaOverhead   = 1.0
)

// allParams names every parameter a fit could move, for KeptAtDefault.
var allParams = []string{"memory_efficiency", "compute_efficiency", "step_overhead", "seq_cost", "request_latency",
	"weight_bytes_per_step", "flops_per_token"}

// FitDocument fits every run of doc: the efficiencies (and, with several
// levels, the sequence cost; the step overhead and request latency stay at
// their documented defaults, which the figures of one sweep cannot
// separate from the efficiencies), or — when the model resolves to no
// preset — the bytes read per step and FLOPs per token; llama.cpp and
// Ollama slot counts the document does not record are chosen per server
// (backend, model, GPU) as the smallest that explains the fitted levels as
// well as any larger one. It returns the profile and, when a fit misses its
// targets, a *FitError per such run (errors.Join); ErrTooFewLevels when a
// run has fewer measured figures than free parameters.
func FitDocument(doc *document.Document, opt FitOptions) (*Profile, error) {
	specs, err := RunSpecs(doc)
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: the document has no runs and no records", ErrTooFewLevels)
	}
	return FitRuns(specs, opt)
}

// FitRuns is FitDocument on RunSpecs.
func FitRuns(specs []RunSpec, opt FitOptions) (*Profile, error) {
	if opt.Tolerance == 0 {
		opt.Tolerance = 0.10
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 200
	}
	full := specs
	specs = slices.Clone(specs)
	predictRest := make([]bool, len(specs))
	for i := range specs {
		switch {
		case opt.LowestOnly:
			specs[i].Cases, predictRest[i] = lowest(specs[i].Cases), true
		case len(specs[i].Cases) > MaxFitLevels:
			specs[i].Notes = append(slices.Clone(specs[i].Notes), fmt.Sprintf("fitted on %d of its %d levels, spread across its loads (at most %d are fitted); the others are predicted from that fit", MaxFitLevels, len(specs[i].Cases), MaxFitLevels))
			specs[i].Cases, predictRest[i] = spreadCases(specs[i].Cases, MaxFitLevels), true
		}
	}
	fitted := 0
	report := func(label string) {
		fitted++
		if opt.Progress != nil {
			opt.Progress(label, fitted, len(specs))
		}
	}
	prof := &Profile{Version: ProfileVersion, Runs: make([]RunProfile, len(specs))}
	done := make([]bool, len(specs))
	for i := range specs {
		if done[i] {
			continue
		}
		group := []int{i}
		for j := i + 1; j < len(specs); j++ {
			if !done[j] && sameServer(&specs[i], &specs[j]) {
				group = append(group, j)
			}
		}
		if err := fitGroup(specs, group, opt, prof, report); err != nil {
			return nil, err
		}
		for _, j := range group {
			done[j] = true
		}
	}
	if err := predictLeftOut(prof, specs, full, predictRest, opt); err != nil {
		return nil, err
	}
	prof.Runs = slices.DeleteFunc(prof.Runs, func(rp RunProfile) bool { return rp.Label == "" && len(rp.FitLevels) == 0 })
	if len(prof.Runs) == 0 {
		return nil, fmt.Errorf("%w: no run could be simulated: %s", ErrTooFewLevels, prof.skippedText())
	}
	var errs []error
	for i := range prof.Runs {
		rp := &prof.Runs[i]
		if !rp.TargetsMet {
			errs = append(errs, &FitError{Label: rp.Label, Tolerance: opt.Tolerance, Residuals: rp.Residuals})
		}
	}
	return prof, errors.Join(errs...)
}

// predictLeftOut adds to each fitted run of prof the predictions of
// the levels its fit did not see: the other levels of a run cut before
// the fit (predictRest: a fit on the lowest alone, or on MaxFitLevels of
// many; full are the runs before the cut), and the leave-one-level-out
// predictions when opt asks for them.
func predictLeftOut(prof *Profile, specs, full []RunSpec, predictRest []bool, opt FitOptions) error {
	for i := range prof.Runs {
		if !predictRest[i] || prof.Runs[i].Label == "" {
			continue
		}
		if err := heldOut(&prof.Runs[i], &full[i], opt.Seed); err != nil {
			return err
		}
	}
	if opt.LeaveOneOut {
		for i := range prof.Runs {
			if prof.Runs[i].Label == "" {
				continue
			}
			lo, err := leaveOneLevelOut(&specs[i], &prof.Runs[i], opt)
			if err != nil {
				return err
			}
			prof.Runs[i].LeaveOneOut = lo
		}
	}
	return nil
}

// SkippedRun is a run a fit left out: the simulator cannot run it as
// the document describes it (a model the capacity model does not fit on
// the GPU, too few measured figures, a level with no prediction). The
// other runs are fitted all the same.
type SkippedRun struct {
	Label  string `json:"label"`
	Reason string `json:"reason"`
}

// unsimulable says whether err is one that leaves a run out of a fit
// rather than failing the whole fit.
func unsimulable(err error) bool {
	for _, e := range []error{ErrDoesNotFit, ErrTooFewLevels, ErrUnknownModel, errNoPrediction} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (p *Profile) skippedText() string {
	parts := make([]string, len(p.Skipped))
	for i, s := range p.Skipped {
		parts[i] = s.Label + ": " + s.Reason
	}
	return strings.Join(parts, "; ")
}

// heldOut predicts the levels of rs the fit did not aim at (a fit on
// the lowest level alone) with the fitted configuration and appends them
// to rp's residuals as not fitted: how well the fit carries over to the
// other concurrencies of the same run.
func heldOut(rp *RunProfile, rs *RunSpec, seed uint64) error {
	rest := *rs
	rest.Cases = nil
	for _, c := range rs.Cases {
		if !slices.Contains(rp.FitLevels, c.Load.Key) {
			rest.Cases = append(rest.Cases, c)
		}
	}
	if len(rest.Cases) == 0 {
		return nil
	}
	_, res, err := Predict(rp.Config(), &rest, seed+1)
	if err != nil {
		return fmt.Errorf("%s: predicting the levels not fitted: %w", rs.Label, err)
	}
	rp.Residuals = append(rp.Residuals, res...)
	return nil
}

// spreadCases keeps n of cs (n < len(cs)), evenly spaced in cs's order
// of load, the lowest and highest included.
func spreadCases(cs []Case, n int) []Case {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(caseLoad(cs[a]), caseLoad(cs[b])) })
	out := make([]Case, 0, n)
	for k := range n {
		out = append(out, cs[idx[k*(len(cs)-1)/(n-1)]])
	}
	return out
}

// caseLoad is a case's load: its rate for the rate method, else its
// concurrency.
func caseLoad(c Case) float64 {
	if c.Load.Rate > 0 {
		return c.Load.Rate
	}
	return float64(c.Load.Concurrency)
}

// leaveOneLevelOut refits rs once per level without that level (the
// settings rp chose held fixed, the search started at rp's parameters
// with LeaveOneOutIter iterations) and predicts the level left out. A level
// whose removal leaves too few figures for the free parameters is not
// predicted.
func leaveOneLevelOut(rs *RunSpec, rp *RunProfile, opt FitOptions) ([]Residual, error) {
	var keys []int
	for _, c := range rs.Cases {
		if !slices.Contains(keys, c.Load.Key) {
			keys = append(keys, c.Load.Key)
		}
	}
	if len(keys) < 2 {
		return nil, nil
	}
	lopt := opt
	lopt.MaxIter = min(opt.MaxIter, LeaveOneOutIter)
	var out []Residual
	for _, k := range keys {
		rest, one := *rs, *rs
		rest.Cases, one.Cases = nil, nil
		for _, c := range rs.Cases {
			if c.Load.Key == k {
				one.Cases = append(one.Cases, c)
			} else {
				rest.Cases = append(rest.Cases, c)
			}
		}
		rest.Spec.Server.Slots, rest.Spec.Server.MaxNumBatchedTokens = rp.Server.Slots, rp.Server.MaxNumBatchedTokens
		rest.Notes = nil
		lp, err := fitRunFrom(&rest, lopt, rp)
		if unsimulable(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, res, err := Predict(lp.Config(), &one, opt.Seed+1)
		if unsimulable(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

// lowest keeps the case of lowest concurrency.
func lowest(cs []Case) []Case {
	if len(cs) == 0 {
		return cs
	}
	best := 0
	for i, c := range cs {
		if c.Load.Concurrency < cs[best].Load.Concurrency {
			best = i
		}
	}
	return []Case{cs[best]}
}

// setting is a server setting a document may not record, which the fit
// chooses from candidates per server (runs of one backend, model and GPU
// share it: one installation, one configuration).
type setting struct {
	name string
	// unknown says whether rs lacks the setting.
	unknown func(rs *RunSpec) bool
	// candidates are the values to try for a group whose fit levels reach
	// concurrency top.
	candidates func(top int) []int
	set        func(rs *RunSpec, v int)
	// matters says whether the fit levels of rs can tell the candidates
	// apart (a run at concurrency 1 cannot tell 8 slots from 1).
	matters func(rs *RunSpec, cands []int) bool
	// pick chooses among the candidates' fit costs (sums of squared log
	// errors), and says why.
	pick func(cands []int, costs []float64) (int, string)
}

// slotsSetting: llama.cpp's --parallel / OLLAMA_NUM_PARALLEL. More slots
// than requests in flight change nothing, so the data can only bound the
// count from below: the smallest count that explains the fitted levels as
// well as any larger one is chosen.
var slotsSetting = setting{
	name:    "slots",
	unknown: func(rs *RunSpec) bool { return !batched(rs.Spec.Backend) && !rs.SlotsKnown },
	candidates: func(top int) []int {
		var c []int
		for s := 1; ; s *= 2 {
			c = append(c, s)
			if s >= top {
				return c
			}
		}
	},
	set: func(rs *RunSpec, v int) { rs.Spec.Server.Slots = v },
	matters: func(rs *RunSpec, cands []int) bool {
		for _, c := range rs.Cases {
			if c.Load.Concurrency > cands[0] {
				return true
			}
		}
		return false
	},
	pick: func(cands []int, costs []float64) (int, string) {
		best := slices.Min(costs)
		for i, c := range costs {
			if c <= best+settingMargin {
				return cands[i], fmt.Sprintf("the smallest of %v whose fit is within %v of the best (fit objectives %s)", cands, settingMargin, fmtCosts(costs))
			}
		}
		return cands[len(cands)-1], ""
	},
}

// settingMargin is how much lower (in the fit objective, a χ²: one unit
// is one fitted figure off by sigmaMeasured, or one parameter sigma from
// its default) a setting's fit must be to be preferred: 2, Akaike's price
// of one more parameter.
const settingMargin = 2.0

// budgetSetting: vLLM's max_num_batched_tokens (SGLang's
// chunked_prefill_size), which sets how a long prompt is chunked. The
// candidates are the powers of two from 512 (vLLM V0's chunked-prefill
// default) to 8192 (V1's on large GPUs); the family's default (2048 on
// GPUs under 70 GiB) stays unless another explains the fitted levels at
// least twice as well.
var budgetSetting = setting{
	name:       "max_num_batched_tokens",
	unknown:    func(rs *RunSpec) bool { return batched(rs.Spec.Backend) && rs.Spec.Server.MaxNumBatchedTokens == 0 },
	candidates: func(int) []int { return []int{512, 1024, 2048, 4096, 8192} },
	set:        func(rs *RunSpec, v int) { rs.Spec.Server.MaxNumBatchedTokens = v },
	matters: func(rs *RunSpec, cands []int) bool {
		for _, c := range rs.Cases {
			if c.Load.Concurrency > 1 || c.Workload.PromptTokens+c.Workload.Images*256 > cands[0] {
				return true
			}
		}
		return false
	},
	pick: func(cands []int, costs []float64) (int, string) {
		def := slices.Index(cands, 2048)
		best := def
		for i, c := range costs {
			if c < costs[best] {
				best = i
			}
		}
		if costs[best] > costs[def]-settingMargin {
			best = def
		}
		return cands[best], fmt.Sprintf("of %v, the default 2048 unless another lowers the fit objective by more than %v (fit objectives %s)", cands, settingMargin, fmtCosts(costs))
	},
}

func fmtCosts(cs []float64) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%.4f", c)
	}
	return strings.Join(parts, ", ")
}

// sameServer: runs whose unrecorded settings are chosen together.
func sameServer(a, b *RunSpec) bool {
	return a.Spec.Backend == b.Spec.Backend && a.Spec.Model == b.Spec.Model && a.Spec.GPU == b.Spec.GPU
}

// fitGroup fits runs that share a server, choosing the settings none of
// them records.
func fitGroup(specs []RunSpec, group []int, opt FitOptions, prof *Profile, report func(label string)) error {
	var chosen []Choice
	// fits holds each run's fit at the value chosen for its setting: the
	// candidates' fits are the run's fit at that value, not redone.
	fits := map[int]*RunProfile{}
	for _, st := range []setting{slotsSetting, budgetSetting} {
		var unknown []int
		for _, i := range group {
			if st.unknown(&specs[i]) {
				unknown = append(unknown, i)
			}
		}
		if len(unknown) == 0 {
			continue
		}
		top := 1
		for _, i := range unknown {
			for _, c := range specs[i].Cases {
				top = max(top, c.Load.Concurrency)
			}
		}
		cands := st.candidates(top)
		costs, candFits, err := settingCosts(specs, unknown, st, cands, opt)
		if err != nil {
			return err
		}
		v, why := st.pick(cands, costs)
		for _, i := range unknown {
			st.set(&specs[i], v)
			delete(fits, i)
			if cf := candFits[i]; cf != nil && cf[slices.Index(cands, v)] != nil {
				fits[i] = cf[slices.Index(cands, v)]
			}
		}
		chosen = append(chosen, Choice{Setting: st.name, Value: v, Why: why})
	}
	for _, i := range group {
		rp, err := fits[i], error(nil)
		if rp == nil {
			rp, err = fitRun(&specs[i], opt)
		}
		if unsimulable(err) {
			prof.Skipped = append(prof.Skipped, SkippedRun{Label: specs[i].Label, Reason: err.Error()})
			continue
		}
		if err != nil {
			return err
		}
		for _, c := range chosen {
			if slices.Contains(chosenFor(&specs[i]), c.Setting) {
				rp.Chosen = append(rp.Chosen, c)
			}
		}
		prof.Runs[i] = *rp
		report(rp.Label)
	}
	return nil
}

// settingCosts fits each run of unknown whose levels can tell st's
// candidates apart once per candidate: the summed fit objectives per
// candidate (+Inf for one a run cannot be simulated with) and each run's
// fit per candidate (nil where it could not be simulated).
func settingCosts(specs []RunSpec, unknown []int, st setting, cands []int, opt FitOptions) ([]float64, map[int][]*RunProfile, error) {
	costs := make([]float64, len(cands))
	fits := map[int][]*RunProfile{}
	for _, i := range unknown {
		if !st.matters(&specs[i], cands) {
			continue
		}
		fits[i] = make([]*RunProfile, len(cands))
		for k, v := range cands {
			rs := specs[i]
			st.set(&rs, v)
			rp, err := fitRun(&rs, opt)
			switch {
			case unsimulable(err):
				// a setting the server could not have run with (more
				// slots than its memory holds) explains nothing
				costs[k] = math.Inf(1)
			case err != nil:
				return nil, nil, err
			default:
				costs[k] += rp.objective
				fits[i][k] = rp
			}
		}
	}
	return costs, fits, nil
}

// chosenFor names the settings the fit chooses for rs's backend.
func chosenFor(rs *RunSpec) []string {
	if batched(rs.Spec.Backend) {
		if rs.budgetKnown {
			return nil
		}
		return []string{budgetSetting.name}
	}
	if rs.SlotsKnown {
		return nil
	}
	return []string{slotsSetting.name}
}

// fitRun fits one run's parameters from their defaults.
func fitRun(rs *RunSpec, opt FitOptions) (*RunProfile, error) {
	return fitRunFrom(rs, opt, nil)
}

// LeaveOneOutIter is the optimizer's budget for each leave-one-level-out
// refit. The refit starts at the full fit's parameters, which one level
// less moves little, so a small budget reaches what a fit from the
// defaults would: a run of L levels costs L such refits beside its fit,
// instead of L full fits.
const LeaveOneOutIter = 25

// leaveOneOutStep is the refit's initial simplex step in log space
// (±10%, against the full fit's ±35%): it searches near the fit.
const leaveOneOutStep = 0.1

// fitRunFrom fits one run's parameters, starting the search at from's
// fitted values when from is set (with a small simplex: a refit near a
// fit) and at the defaults otherwise. The priors stay centred on the
// defaults either way, so a refit minimizes the same objective.
func fitRunFrom(rs *RunSpec, opt FitOptions, from *RunProfile) (*RunProfile, error) {
	targets := 0
	for _, c := range rs.Cases {
		targets += len(c.Targets)
	}
	base, err := baseConfig(rs)
	if err != nil {
		return nil, err
	}
	free := freeParams(rs)
	if targets < len(free) || targets == 0 {
		return nil, fmt.Errorf("%w: run %s has %d measured figures for %d free parameters (%s)",
			ErrTooFewLevels, rs.Label, targets, len(free), names(free))
	}
	x0 := make([]float64, len(free))
	for i, p := range free {
		x0[i] = math.Log(max(p.get(&base), p.lo))
	}
	start, step := x0, 0.3
	if from != nil {
		fc := from.Config()
		start, step = make([]float64, len(free)), leaveOneOutStep
		for i, p := range free {
			start[i] = math.Log(min(max(p.get(&fc), p.lo), p.hi))
		}
	}
	cfgAt := func(x []float64) Config {
		c := base
		for i, p := range free {
			p.set(&c, math.Exp(min(max(x[i], math.Log(p.lo)), math.Log(p.hi))))
		}
		return c
	}
	obj := func(x []float64) float64 {
		_, res, err := Predict(cfgAt(x), rs, opt.Seed)
		if err != nil {
			return math.Inf(1)
		}
		v := sumSquaresAll(res) / (sigmaMeasured * sigmaMeasured)
		for i, p := range free {
			if p.sigma > 0 {
				d := (x[i] - x0[i]) / p.sigma
				v += d * d
			}
		}
		return v
	}
	x, fx := nelderMead(obj, start, step, opt.MaxIter)
	cfg := cfgAt(x)
	_, res, err := Predict(cfg, rs, opt.Seed)
	if err != nil {
		return nil, err
	}
	met := true
	for i := range res {
		res[i].Fitted = true
		if math.Abs(res[i].ErrorPct) > opt.Tolerance*100 {
			met = false
		}
	}
	rp := &RunProfile{
		Label: rs.Label, Backend: cfg.Backend, Model: rs.Spec.Model, FreeModel: rs.FreeModel,
		Cost: cfg.Model, GPU: cfg.GPU, Server: cfg.Server, Params: cfg.Params,
		Fitted: names(free), Residuals: res, TargetsMet: met, Notes: slices.Clone(rs.Notes), objective: fx,
	}
	for _, n := range allParams {
		if !slices.Contains(rp.Fitted, n) {
			rp.KeptAtDefault = append(rp.KeptAtDefault, n)
		}
	}
	for _, c := range rs.Cases {
		rp.FitLevels = append(rp.FitLevels, c.Load.Key)
	}
	return rp, nil
}

func sumSquaresAll(rs []Residual) float64 {
	s := 0.0
	for _, r := range rs {
		d := math.Log(r.Predicted / r.Measured)
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return math.Inf(1)
		}
		s += d * d
	}
	return s
}

func names(ps []param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.name
	}
	return out
}

// freeParams picks what a run's figures can inform: with a model, the
// two efficiencies (compute from TTFT and prefill-bound throughput, memory
// from TPOT) and the request latency (TTFT) and, given several levels, the
// sequence cost; the step overhead stays at its default (every step reads
// the weights, so it trades against the memory efficiency in every
// figure). Without a model: the bytes per step and FLOPs per token (a
// batch document's throughput alone determines only the bytes; its image
// records the image encoder's FLOPs) and, given several levels, the
// sequence cost.
func freeParams(rs *RunSpec) []param {
	levels := map[int]bool{}
	ttft, images := false, false
	for _, c := range rs.Cases {
		levels[c.Load.Key] = true
		images = images || c.Workload.Images > 0
		for _, t := range c.Targets {
			ttft = ttft || t.Metric == MetricTTFT
		}
	}
	if rs.FreeModel {
		ps := []param{pBytes}
		if ttft {
			ps = append(ps, pFLOPs)
		}
		if images {
			ps = append(ps, pImage)
		}
		if len(levels) > 1 {
			// several batch sizes tell the per-sequence cost from the
			// bytes every step reads, as for a preset's run
			ps = append(ps, pSeq)
		}
		return ps
	}
	ps := []param{pCompute, pMemory, pLatency}
	if len(levels) > 1 {
		ps = append(ps, pSeq)
	}
	return ps
}

// baseConfig is the run's configuration before the fit: from the
// catalog, presets and capacity models, or — for a free model — a
// starting guess of a 16-bit model of 2 GB that the fit moves.
func baseConfig(rs *RunSpec) (Config, error) {
	if !rs.FreeModel {
		return rs.Spec.Config()
	}
	g, err := LookupGPU(rs.Spec.GPU)
	if err != nil {
		return Config{}, err
	}
	if rs.Spec.GPUGiB > 0 {
		g.MemoryGiB = rs.Spec.GPUGiB
	}
	sv := rs.Spec.Server
	fam := rs.Spec.Backend
	switch {
	case batched(fam):
		sv.MaxNumSeqs = max(sv.MaxNumSeqs, 1)
		if sv.MaxNumSeqs == 1 {
			sv.MaxNumSeqs = 256
		}
		if sv.MaxNumBatchedTokens == 0 {
			sv.MaxNumBatchedTokens = 2048
		}
		if sv.BlockSize == 0 {
			sv.BlockSize = 16
		}
		if sv.KVBlocks == 0 {
			// unknown model, unknown KV size: a cache no workload fills
			sv.KVBlocks = 1 << 24
			rs.Notes = appendOnce(rs.Notes, "KV capacity unknown without a model: the cache is taken as never full")
		}
		sv.CUDAGraphs, sv.PrefixCaching = !rs.Spec.EnforceEager, !rs.Spec.NoPrefixCaching
		sv.ReserveFullPrompt = fam == backend.VLLM && !rs.Spec.NoReserveFullPrompt
	default:
		sv.Slots = max(sv.Slots, 1)
		if sv.NBatch == 0 {
			sv.NBatch = 2048
			if fam == backend.Ollama {
				sv.NBatch = 512
			}
		}
		sv.NUBatch = max(sv.NUBatch, min(512, sv.NBatch))
	}
	m := ModelCost{Name: "free", WeightBytesPerStep: 2e9, FLOPsPerToken: 2e9, ImageTokens: 256, ImageFLOPs: 2e12}
	rs.Notes = appendOnce(rs.Notes, "without a model, KV bytes and attention FLOPs are left out and an image is taken as 256 prompt tokens")
	if t := rs.Spec.TensorParallel; t > 1 {
		// the layers and hidden size that size the all-reduces come
		// from the model: the fitted bytes and FLOPs are one rank's,
		// the collectives' time folded into them
		rs.Notes = appendOnce(rs.Notes, fmt.Sprintf("tensor-parallel size %d without a model: the fit simulates one rank, its all-reduces folded into the fitted bytes and FLOPs", t))
	}
	c := Config{Backend: fam, GPU: g, Model: m, Server: sv, Params: DefaultParams(fam, g, m)}
	return c, c.check()
}

func appendOnce(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

// nelderMead minimizes f from x0 with an initial simplex of the given
// step along each axis (Nelder & Mead 1965, standard coefficients:
// reflection 1, expansion 2, contraction ½, shrink ½).
func nelderMead(f func([]float64) float64, x0 []float64, step float64, maxIter int) ([]float64, float64) {
	n := len(x0)
	pts := make([][]float64, n+1)
	vals := make([]float64, n+1)
	for i := range pts {
		pts[i] = slices.Clone(x0)
		if i > 0 {
			pts[i][i-1] += step
		}
		vals[i] = f(pts[i])
	}
	order := make([]int, n+1)
	point := func(c []float64, to []float64, t float64) []float64 {
		out := make([]float64, n)
		for k := range out {
			out[k] = c[k] + t*(to[k]-c[k])
		}
		return out
	}
	for it := 0; it < maxIter; it++ {
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpFloat(vals[a], vals[b]) })
		best, worst, second := order[0], order[n], order[n-1]
		if it > 2*n && (vals[worst]-vals[best] < 1e-4*(1+math.Abs(vals[best])) || spread(pts, best) < 1e-3) {
			break
		}
		c := make([]float64, n)
		for _, i := range order[:n] {
			for k := range c {
				c[k] += pts[i][k] / float64(n)
			}
		}
		r := point(c, pts[worst], -1)
		fr := f(r)
		switch {
		case fr < vals[best]:
			e := point(c, pts[worst], -2)
			if fe := f(e); fe < fr {
				pts[worst], vals[worst] = e, fe
			} else {
				pts[worst], vals[worst] = r, fr
			}
		case fr < vals[second]:
			pts[worst], vals[worst] = r, fr
		default:
			k := point(c, pts[worst], 0.5)
			if fk := f(k); fk < vals[worst] {
				pts[worst], vals[worst] = k, fk
				continue
			}
			for _, i := range order[1:] {
				pts[i] = point(pts[best], pts[i], 0.5)
				vals[i] = f(pts[i])
			}
		}
	}
	bi := 0
	for i := range vals {
		if vals[i] < vals[bi] {
			bi = i
		}
	}
	return pts[bi], vals[bi]
}

// spread is the largest coordinate distance of the simplex from its best
// point (log space: 1e-3 is 0.1%).
func spread(pts [][]float64, best int) float64 {
	d := 0.0
	for _, p := range pts {
		for k := range p {
			d = max(d, math.Abs(p[k]-pts[best][k]))
		}
	}
	return d
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
