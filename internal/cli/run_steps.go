package cli

import (
	"context"
	"fmt"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/saturation"
	"github.com/servebench/servebench/slo"
)

// How a sweep runs its levels: all at once (run), one at a
// time until one saturates (run --stop-when-saturated), or as a search
// chooses them (find, in find.go).

// sweepHooks say how sweepTargets runs each target's sweep and what it
// writes.
type sweepHooks struct {
	// drive runs the prepared sweep of one target and returns whether it
	// completed, and notes for its run_end line.
	drive func(ctx context.Context, env *runEnv, sweep *load.Sweep, cfg runConfig) (complete bool, notes []string, err error)
	// output is what --out gets: the document, or it with more beside.
	output func(doc *document.Document) any
	// planInEnd writes each level's plan into its level_end line, for
	// levels the header could not list (find).
	planInEnd bool
	// cmd names the command in errors about its files ("find"); "" is
	// "run".
	cmd string
}

// command is the name errors about the sweep's files give.
func (h sweepHooks) command() string {
	if h.cmd == "" {
		return "run"
	}
	return h.cmd
}

// runHooks are run's: every level in one go, or one at a time with
// --stop-when-saturated.
func runHooks(cfg runConfig) sweepHooks {
	h := sweepHooks{drive: doSweep, output: func(d *document.Document) any { return d }}
	if cfg.StopWhenSaturated {
		h.drive = untilSaturated
	}
	return h
}

// doSweep runs every level of the sweep.
func doSweep(ctx context.Context, env *runEnv, sweep *load.Sweep, _ runConfig) (bool, []string, error) {
	complete, err := doLevels(ctx, sweep, env.fresh, sweep.Levels)
	return complete, nil, err
}

// untilSaturated runs the levels one at a time and ends the sweep after
// the first saturated one (saturation.Check against the level before it
// when that one had a lower load), marking it in the records and saying
// so in the run's warnings and on standard error.
func untilSaturated(ctx context.Context, env *runEnv, sweep *load.Sweep, cfg runConfig) (bool, []string, error) {
	planned := sweep.Levels
	var prev *document.Level
	prevLoad := 0.0
	for i, l := range planned {
		complete, err := doLevels(ctx, sweep, env.fresh, []load.Level{l})
		if err != nil || !complete {
			return complete, nil, err
		}
		cur, ok := env.rec.sum.Level(cfg.Label, l.Level)
		if !ok {
			continue
		}
		var base *document.Level
		if prev != nil && levelLoad(l) > prevLoad {
			base = prev
		}
		if f := saturation.Check(base, &cur); f.Saturated() {
			markSaturated(env, cfg.Label, l.Level, f)
			note := fmt.Sprintf("the sweep stopped at the first saturated level, %s (%s: %s); %s not run",
				levelName(l, cfg.Method), f.Reason, f.Detail, laterLevels(len(planned)-i-1))
			fmt.Fprintln(env.stderr, "servebench: "+note)
			return true, []string{note}, nil
		}
		prev, prevLoad = &cur, levelLoad(l)
	}
	return true, nil, nil
}

// levelLoad is a planned level's load: its rate, or its concurrency.
func levelLoad(l load.Level) float64 {
	if l.Rate > 0 {
		return l.Rate
	}
	return float64(l.Concurrency)
}

// markSaturated records a saturation verdict on a level that ended, as a
// further level_end line of it.
func markSaturated(env *runEnv, label string, level int, f saturation.Finding) {
	env.rec.levelEnd(&record.LevelEnd{Run: label, Level: level, Saturated: string(f.Reason) + ": " + f.Detail})
}

// intervals reads --confidence and --stop-when-saturated into
// cfg.intervalConfig. A confidence given as 0 would read as the default,
// so it is refused here; Validate checks the rest.
func (f *runFlags) intervals(cfg *runConfig, set map[string]bool) error {
	iv := &cfg.intervalConfig
	if set["confidence"] {
		if *f.confidence == 0 {
			return badConfidence(0)
		}
		iv.Confidence = *f.confidence
	}
	if f.stopWhenSaturated != nil { // find has no --stop-when-saturated
		iv.StopWhenSaturated = *f.stopWhenSaturated
	}
	return iv.Validate()
}

// Validate checks the confidence (0: the default).
func (c intervalConfig) Validate() error {
	if v := c.Confidence; v != 0 && !(v >= 0.5 && v <= 0.999) {
		return badConfidence(v)
	}
	return nil
}

// badConfidence is the usage error for a --confidence value.
func badConfidence(v float64) error {
	return configf("--confidence %v: want a confidence between 0.5 and 0.999, e.g. 0.95", v)
}

// sloRecord is what a run's header records of its SLO and confidence:
// the SLO's canonical text and per-request budget (none when it bounds no
// latency), and the confidence when not the default.
func sloRecord(cfg runConfig) (text string, budget *record.GoodputBudget, confidence float64) {
	if len(cfg.SLO) > 0 {
		text = slo.Text(cfg.SLO)
		if b, ok := slo.GoodputBudget(cfg.SLO); ok {
			budget = &b
		}
	}
	return text, budget, cfg.Confidence
}

// laterLevels counts the levels a stopped sweep did not run, in words.
func laterLevels(n int) string {
	if n == 1 {
		return "1 later level"
	}
	return fmt.Sprintf("%d later levels", n)
}
