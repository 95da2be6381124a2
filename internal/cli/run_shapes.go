package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/trace"
	"github.com/servebench/servebench/workload"
)

// Workloads like real traffic: the flags of arrival shapes,
// level length, trace replay and mixes, checked against each other and
// against the rest of run's flags, and turned into runConfig fields.

// traceExcludes are the flags a trace makes meaningless: it brings its
// own schedule, count and lengths.
var traceExcludes = []string{"rate", "arrival", "burstiness", "rate-start", "ramp", "duration", "requests",
	"concurrency", "repeats", "scenario", "prompt-tokens", "max-tokens", "mix",
	"turns", "followup-tokens", "think-time", "prefix-groups"}

// shapeConflicts rejects flags that do not go together, before the other
// steps read them (--trace implies --method rate: see methodName).
func (f *runFlags) shapeConflicts(_ *runConfig, set map[string]bool) error {
	if set["trace"] { // find refuses --trace before this (findShapeFlags)
		for _, name := range traceExcludes {
			if set[name] {
				return configf("--%s does not apply with --trace (the trace gives the schedule, the requests and their lengths, its sessions' turns and times, and its prefix groups)", name)
			}
		}
		if set["method"] && *f.method != string(load.Rate) {
			return configf("--method %s does not apply with --trace (a trace is an open-loop schedule: --method rate)", *f.method)
		}
	} else {
		for _, name := range []string{"trace-format", "trace-speed", "trace-window"} {
			if set[name] {
				return configf("--%s applies only with --trace", name)
			}
		}
	}
	if set["mix"] {
		for _, name := range []string{"scenario", "prompt-tokens"} {
			if set[name] {
				return configf("--%s does not apply with --mix (each class takes its scenario's prompt)", name)
			}
		}
		if f.method != nil && *f.method == string(load.Batch) { // find has no --method
			return configf("--mix does not apply to --method batch (its records compare one workload at a time); use pool or rate")
		}
	}
	return nil
}

// config reads the shape flags into cfg, after the load step parsed the
// method and the arrival law.
func (sf shapeFlags) config(cfg *runConfig, set map[string]bool) error {
	if err := sf.arrivals(cfg, set); err != nil {
		return err
	}
	if set["mix"] {
		m, err := workload.ParseMix(*sf.mix)
		if err != nil {
			return configf("--mix: %v", err)
		}
		for _, c := range m {
			if c.Scenario == workload.Multiturn {
				return configf("--mix: class multiturn is a session, not a request; run sessions with --scenario multiturn")
			}
		}
		if hasImages(m) && cfg.API == backend.Completions {
			return configf("--mix has an image class but --api completions cannot carry images; use --api chat")
		}
		cfg.Mix, cfg.PromptTokens = m, 0
		if !set["max-tokens"] {
			cfg.MaxTokens = 0 // each class's scenario's
		}
	}
	if set["trace"] {
		return sf.traceConfig(cfg)
	}
	return nil
}

func hasImages(m workload.Mix) bool {
	for _, c := range m {
		if c.Scenario.Defaults().Images > 0 {
			return true
		}
	}
	return false
}

// arrivals checks the arrival shape and level length flags against the
// method and the arrival law.
func (sf shapeFlags) arrivals(cfg *runConfig, set map[string]bool) error {
	if cfg.Method != load.Rate {
		for _, name := range []string{"burstiness", "rate-start", "ramp", "duration"} {
			if set[name] {
				return configf("--%s applies only to --method rate", name)
			}
		}
		return nil
	}
	cfg.RequestsSet = set["requests"]
	if err := sf.burstinessShape(cfg, set); err != nil {
		return err
	}
	if err := sf.rampShape(cfg, set); err != nil {
		return err
	}
	if !set["duration"] {
		return nil
	}
	if *sf.duration <= 0 {
		return configf("--duration %v: must be positive", *sf.duration)
	}
	cfg.Duration = *sf.duration
	_, err := cfg.planLevels()
	return err
}

// burstinessShape checks --burstiness, which shapes gamma and ramp arrivals,
// into cfg; gamma's default is 1 (poisson).
func (sf shapeFlags) burstinessShape(cfg *runConfig, set map[string]bool) error {
	if set["burstiness"] {
		if cfg.Arrival != load.Gamma && cfg.Arrival != load.Ramp {
			return configf("--burstiness applies only to --arrival gamma or ramp")
		}
		if !(*sf.burstiness > 0) || *sf.burstiness > 1e6 {
			return configf("--burstiness %v: must be positive (1 is poisson)", *sf.burstiness)
		}
		cfg.Burstiness = *sf.burstiness
	}
	if cfg.Arrival == load.Gamma && cfg.Burstiness == 0 {
		cfg.Burstiness = 1
	}
	return nil
}

// rampShape checks --rate-start and --ramp, which only a ramp takes (and
// it needs --ramp), into cfg; a ramp's default burstiness is 1.
func (sf shapeFlags) rampShape(cfg *runConfig, set map[string]bool) error {
	if (set["rate-start"] || set["ramp"]) && cfg.Arrival != load.Ramp {
		return configf("--rate-start and --ramp apply only to --arrival ramp")
	}
	if cfg.Arrival != load.Ramp {
		return nil
	}
	switch {
	case *sf.ramp <= 0:
		return configf("--arrival ramp needs --ramp, the ramp's length (e.g. 60s)")
	case *sf.rateStart < 0 || math.IsInf(*sf.rateStart, 0) || math.IsNaN(*sf.rateStart):
		return configf("--rate-start %v: must not be negative", *sf.rateStart)
	}
	cfg.RateStart, cfg.Ramp = *sf.rateStart, *sf.ramp
	if cfg.Burstiness == 0 {
		cfg.Burstiness = 1
	}
	return nil
}

// traceConfig reads, slices and scales the trace of --trace.
func (sf shapeFlags) traceConfig(cfg *runConfig) error {
	format, err := trace.ParseFormat(*sf.traceFormat)
	if err != nil {
		return configf("--trace-format: %v", err)
	}
	if !(*sf.traceSpeed > 0) || math.IsInf(*sf.traceSpeed, 0) {
		return configf("--trace-speed %v: must be positive (1: as recorded)", *sf.traceSpeed)
	}
	start, length, err := parseWindow(*sf.traceWindow)
	if err != nil {
		return configf("--trace-window: %v", err)
	}
	ctx := sf.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	t, err := trace.ReadFileContext(ctx, *sf.trace, format)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("run: interrupted while reading the trace %s", *sf.trace)
	}
	if err != nil {
		return configf("--trace: %v", err)
	}
	if start > 0 || length > 0 {
		if t, err = t.Window(start, length); err != nil {
			return configf("--trace-window: %v", err)
		}
	}
	if err := checkTraceSpan(t, *sf.traceSpeed); err != nil {
		return err
	}
	if *sf.traceSpeed != 1 {
		t = t.Speed(*sf.traceSpeed) // a copy of every row: only when it scales them
	}
	info := &record.TraceInfo{File: *sf.trace, Format: string(t.Format), Rows: len(t.Rows), Speed: *sf.traceSpeed,
		WindowStartSeconds: start.Seconds(), WindowSeconds: length.Seconds(), SpanSeconds: t.Span().Seconds()}
	images := 0
	for _, r := range t.Rows {
		info.MeanInputTokens += float64(r.InputTokens) / float64(len(t.Rows))
		info.MeanOutputTokens += float64(r.OutputTokens) / float64(len(t.Rows))
		if r.Images > 0 {
			images++
		}
	}
	if images > 0 && cfg.API == backend.Completions {
		return configf("--trace: %d rows carry images but --api completions cannot; use --api chat", images)
	}
	spec := workload.TraceSpec(t, workload.Spec{})
	cfg.Trace, cfg.TraceInfo = t, info
	cfg.PromptTokens, cfg.MaxTokens = spec.PromptTokens, spec.MaxTokens
	if cfg.TraceSessions, cfg.TraceRate, err = workload.TraceLevel(t); err != nil {
		return configf("--trace: %v", err)
	}
	return traceGroups(cfg, t)
}

// traceGroups sets the shared prefix of the trace's prefix groups: one
// per prefix_group name, of --shared-prefix-tokens tokens or by default
// half the shortest prompt that begins with one (a run warning says so),
// which must leave room for a user message in every such prompt.
func traceGroups(cfg *runConfig, t *trace.Trace) error {
	shortest := workload.TraceShortestGrouped(t)
	if shortest == nil {
		cfg.PrefixGroups = 0
		return nil
	}
	if spec, _ := workload.TraceGroupSpec(t, workload.Spec{}, 0); true {
		cfg.PrefixGroups = spec.PrefixGroups
	}
	if cfg.SharedPrefixTokens == 0 {
		cfg.SharedPrefixTokens = workload.TracePrefixTokens(t)
		cfg.TraceNotes = append(cfg.TraceNotes, fmt.Sprintf("trace: the %d prefix groups share a prefix of %d tokens, half the shortest prompt that begins with one (line %d, %d tokens); set its length with --shared-prefix-tokens",
			cfg.PrefixGroups, cfg.SharedPrefixTokens, shortest.Line, shortest.InputTokens))
	}
	if room := shortest.InputTokens - cfg.SharedPrefixTokens; room < workload.MinUserTokens {
		return configf("--shared-prefix-tokens %d leaves %d tokens for the user message of %s:%d (input_tokens %d), want at least %d",
			cfg.SharedPrefixTokens, max(room, 0), t.File, shortest.Line, shortest.InputTokens, workload.MinUserTokens)
	}
	return nil
}

// parseWindow parses --trace-window "START,DURATION" (Go durations;
// either may be empty: from the start, to the end).
func parseWindow(s string) (start, length time.Duration, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want START,DURATION, e.g. 10m,5m", s)
	}
	if a = strings.TrimSpace(a); a != "" {
		if start, err = time.ParseDuration(a); err != nil || start < 0 {
			return 0, 0, fmt.Errorf("%q: start %q is not a duration ≥ 0 (e.g. 90s)", s, a)
		}
	}
	if b = strings.TrimSpace(b); b != "" {
		if length, err = time.ParseDuration(b); err != nil || length <= 0 {
			return 0, 0, fmt.Errorf("%q: duration %q is not a positive duration (e.g. 5m)", s, b)
		}
	}
	return start, length, nil
}

// scenarioName is the run's scenario as the report names it: "trace" for
// a replay, "mix" for a mix, else the scenario.
func (cfg *runConfig) scenarioName() string {
	switch {
	case cfg.Trace != nil:
		return "trace"
	case cfg.Mix != nil:
		return "mix"
	case cfg.Method == load.Users:
		return "users-" + string(cfg.UserProfile.Name)
	case cfg.Dataset != nil:
		return "dataset"
	}
	return string(cfg.Scenario)
}

// checkTraceSpan refuses, before the first request, a trace whose replay
// at speed would wait longer than limits.MaxSpan: from its first arrival
// to its last, or in one think time. Computed in float64 before any
// time.Duration is scaled, so a tiny speed cannot overflow one.
func checkTraceSpan(t *trace.Trace, speed float64) error {
	longest := t.Span().Seconds()
	what := "arrivals span"
	for _, r := range t.Rows {
		if r.Think != nil && r.Think.Seconds() > longest {
			longest, what = r.Think.Seconds(), "a think time is"
		}
	}
	if wait := longest / speed; wait > limits.MaxSpan.Seconds() {
		return configf("--trace %s: %s %s at --trace-speed %v, more than the %s a run may take; use --trace-window or a higher --trace-speed",
			t.File, what, fmtSeconds(wait), speed, fmtSeconds(limits.MaxSpan.Seconds()))
	}
	return nil
}

// fmtSeconds writes a long wait in days (or hours, or seconds).
func fmtSeconds(s float64) string {
	switch {
	case s >= 86400:
		return strconv.FormatFloat(s/86400, 'g', 3, 64) + " days"
	case s >= 3600:
		return strconv.FormatFloat(s/3600, 'g', 3, 64) + " hours"
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}
