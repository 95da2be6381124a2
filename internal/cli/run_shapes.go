package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/trace"
	"github.com/servebench/servebench/workload"
)

// Workloads like real traffic: the flags of arrival shapes and level
// length (loadConfig), trace replay and mixes (workloadConfig), turned
// into runConfig fields; the rules between them and the rest of run's
// flags are in run_across.go.

// readMix reads --mix into w: its classes replace the scenario's prompt, and
// their scenarios' outputs replace its output unless --max-tokens is
// given.
func (sf shapeFlags) readMix(w *workloadConfig, set map[string]bool) error {
	if !set["mix"] {
		return nil
	}
	m, err := workload.ParseMix(*sf.mix)
	if err != nil {
		return configf("--mix: %v", err)
	}
	for _, c := range m {
		if c.Scenario == workload.Multiturn {
			return configf("--mix: class multiturn is a session, not a request; run sessions with --scenario multiturn")
		}
	}
	w.Mix, w.PromptTokens = m, 0
	if !set["max-tokens"] {
		w.MaxTokens = 0 // each class's scenario's
	}
	return nil
}

// workload reads --mix (readMix) and the trace of --trace (traceConfig)
// into cfg's workload, after the load step.
func (sf shapeFlags) workload(cfg *runConfig, set map[string]bool) error {
	if err := sf.readMix(&cfg.workloadConfig, set); err != nil {
		return err
	}
	if !set["trace"] {
		return nil
	}
	return sf.traceConfig(cfg)
}

func hasImages(m workload.Mix) bool {
	for _, c := range m {
		if c.Scenario.Defaults().Images > 0 {
			return true
		}
	}
	return false
}

// traceImageRows counts the rows of t (nil: none) that carry images.
func traceImageRows(t *trace.Trace) int {
	n := 0
	if t != nil {
		for _, r := range t.Rows {
			if r.Images > 0 {
				n++
			}
		}
	}
	return n
}

// arrivals reads the arrival shape and level length flags into l, after
// the method and the arrival law: each applies only to --method rate,
// --burstiness only to gamma and ramp arrivals (default 1, poisson's),
// --rate-start and --ramp only to a ramp. Their values are
// validateShape's.
func (sf shapeFlags) arrivals(l *loadConfig, set map[string]bool) error {
	if l.Method != load.Rate {
		for _, name := range []string{"burstiness", "rate-start", "ramp", "duration"} {
			if set[name] {
				return configf("--%s applies only to --method rate", name)
			}
		}
		return nil
	}
	l.RequestsSet = set["requests"]
	shaped := l.Arrival == load.Gamma || l.Arrival == load.Ramp
	switch {
	case set["burstiness"] && !shaped:
		return configf("--burstiness applies only to --arrival gamma or ramp")
	case set["burstiness"]:
		l.Burstiness = *sf.burstiness
	case shaped:
		l.Burstiness = 1
	}
	if (set["rate-start"] || set["ramp"]) && l.Arrival != load.Ramp {
		return configf("--rate-start and --ramp apply only to --arrival ramp")
	}
	if l.Arrival == load.Ramp {
		l.RateStart, l.Ramp = *sf.rateStart, *sf.ramp
	}
	if set["duration"] {
		if *sf.duration == 0 { // 0 reads as no duration
			return badDuration(0)
		}
		l.Duration = *sf.duration
	}
	return nil
}

// validateShape checks a rate level's shape: a positive burstiness for
// gamma and ramp arrivals, a ramp's length and start rate, and a
// duration that ends the schedule (0: none).
func (c loadConfig) validateShape() error {
	shaped := c.Arrival == load.Gamma || c.Arrival == load.Ramp
	switch {
	case (c.Burstiness != 0 || c.Method == load.Rate && shaped) && (!(c.Burstiness > 0) || c.Burstiness > 1e6):
		return configf("--burstiness %v: must be positive (1 is poisson)", c.Burstiness)
	case c.Method == load.Rate && c.Arrival == load.Ramp && c.Ramp <= 0:
		return configf("--arrival ramp needs --ramp, the ramp's length (e.g. 60s)")
	case c.RateStart < 0 || math.IsInf(c.RateStart, 0) || math.IsNaN(c.RateStart):
		return configf("--rate-start %v: must not be negative", c.RateStart)
	case c.Duration < 0:
		return badDuration(c.Duration)
	}
	return nil
}

// badDuration is the usage error for a --duration value.
func badDuration(d time.Duration) error {
	return configf("--duration %v: must be positive", d)
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
	for _, r := range t.Rows {
		info.MeanInputTokens += float64(r.InputTokens) / float64(len(t.Rows))
		info.MeanOutputTokens += float64(r.OutputTokens) / float64(len(t.Rows))
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
