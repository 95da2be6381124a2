package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/find"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/summary"
	"github.com/servebench/servebench/workload"
)

const findSynopsis = `find --slo ttft_p95=1.5s,tpot_p50=50ms[,e2e_p99=…][,goodput=0.9] --by concurrency|rate [run's server, workload and profile flags] [--max-time 30m] [--confidence 0.95] [--out find.json]

Finds the largest load (concurrent requests, or requests per second with
--by rate) at which the server meets every bound of the SLO: it grows the
load ×2 until a bound fails or the server saturates, then bisects between
the last pass and the first fail until they are at most 25% of the answer
apart (one request in flight where that is more). Each probe is a level of
--requests requests (by default 20 beyond the SLO's highest percentile:
400 for a p95) after the warm-up; a probe whose confidence interval
straddles a bound is measured again, at most 3 times, and the loads that
bound the answer's interval are measured twice before it answers. It prints the
answer in one line and writes the probes as a servebench document, with
the answer as its "find" field, that report and compare read.

Flags`

// findSettings are find's own flags, checked.
type findSettings struct {
	By         slo.Load
	Start, Max float64
	MaxTime    time.Duration
	MaxRepeats int
	Requests   int
	// Capacity says the search is servebench capacity's: its answers
	// begin with one sentence in people (find.Answer.Sentence).
	Capacity bool
}

// command is the name of the command searching, which its usage errors
// begin with: capacity, or find.
func (f findSettings) command() string {
	if f.Capacity {
		return "capacity"
	}
	return "find"
}

// config is the search's configuration for the SLO bounds.
func (f findSettings) config(bounds []slo.Bound) find.Config {
	return find.Config{By: f.By, Bounds: bounds, Start: f.Start, Max: f.Max, MaxRepeats: find.Repeats(f.MaxRepeats)}
}

// runFind is `servebench find`: parse the flags (run's target flags and
// find's own), list the targets as run does, and sweep each with a search
// choosing its levels.
func runFind(ctx context.Context, deps Deps, args []string, stdout, stderr io.Writer) error {
	cfg, fs, err := parseFindFlags(args, stdout)
	if err != nil {
		return err
	}
	return search(ctx, deps, cfg, fs, stdout, stderr)
}

// search runs find's (or capacity's) searches of cfg's targets.
func search(ctx context.Context, deps Deps, cfg runConfig, fs findSettings, stdout, stderr io.Writer) error {
	// What the HTTP library logs from here on (finding the server
	// included) goes into the runs' warnings, redacted, as in run.
	logs, doneLogs := libraryLog(deps, cfg, stderr)
	defer doneLogs()
	if err := findServer(ctx, deps, &cfg, stderr); err != nil {
		return named(err, fs.command())
	}
	cfg.Out, cfg.Table = resultOutput(cfg.Out, deps.IsTerminal(stdout), deps.Clock.Now())
	targets, err := runTargets(deps, cfg)
	if err != nil {
		return named(err, fs.command())
	}
	f := &finder{deps: deps, cfg: fs, started: deps.Clock.Now(), lines: stdout, sentence: fs.Capacity}
	if cfg.Out == "-" {
		f.lines = stderr // standard output carries the document
	}
	return sweepTargetsWith(ctx, deps, cfg, targets, sweepHooks{drive: f.drive, output: f.output, planInEnd: true, cmd: "find"}, logs, stdout, stderr)
}

// findShapeFlags refuses run's load shapes under find: a probe is one
// steady load (a fixed concurrency, or a rate with poisson or constant
// gaps), so a ramp, bursts or a level's duration would change what the
// probe measures, and a trace brings its own schedule where find chooses
// the loads.
func findShapeFlags(set map[string]bool, arrival string) error {
	if set["trace"] {
		return configf("--trace does not apply to find (a trace brings its own schedule; find chooses the loads): replay it with servebench run")
	}
	for _, name := range []string{"ramp", "rate-start", "burstiness", "duration"} {
		if set[name] {
			return configf("--%s does not apply to find (each probe is one steady load); sweep ramps, bursts and durations with servebench run", name)
		}
	}
	if set["arrival"] && arrival != string(load.Poisson) && arrival != string(load.Constant) {
		return configf("--arrival %s does not apply to find: want poisson or constant (each probe is one steady load)", arrival)
	}
	return nil
}

// parseFindFlags parses find's flags into a run configuration (the load
// method and requests set for the search) and find's settings.
func parseFindFlags(args []string, stdout io.Writer) (runConfig, findSettings, error) {
	return parseSearchFlags(args, stdout, false)
}

// parseSearchFlags is parseFindFlags, or for servebench capacity
// (capacity) the same flags but --by, which is users, with the default
// SLO unless --slo says otherwise.
func parseSearchFlags(args []string, stdout io.Writer, capacity bool) (runConfig, findSettings, error) {
	name := findSettings{Capacity: capacity}.command()
	cfg, fsets, err := searchFlags(name, args, stdout, capacity)
	return cfg, fsets, named(err, name)
}

// searchFlags parses and checks find's or capacity's flags; its usage
// errors from the shared steps are named by parseSearchFlags.
func searchFlags(name string, args []string, stdout io.Writer, capacity bool) (runConfig, findSettings, error) {
	synopsis := findSynopsis
	if capacity {
		synopsis = capacitySynopsis
	}
	fs := newFlagSet(name, synopsis, stdout)
	rf := defineTargetFlags(fs)
	byUsers := string(slo.ByUsers)
	by := &byUsers
	if !capacity {
		by = fs.String("by", "concurrency", "what to vary: concurrency (requests in flight), rate (requests/s, open loop, at most --max-concurrency in flight) or users (people of --user-profile who think between turns, docs/users.md)")
	}
	start := fs.Float64("start", 1, "first load of the search (concurrency, or requests/s)")
	maxLoad := fs.Float64("max-load", 0, "highest load to try (default 4096 concurrency, 100000 requests/s)")
	maxTime := fs.Duration("max-time", 30*time.Minute, "start no probe after this long; the answer says the search was cut short (0: no limit)")
	maxRepeats := fs.Int("max-repeats", find.DefaultMaxRepeats, "most times a probe whose verdict its one-sided 95% bounds leave undecided is measured again before its verdict counts, and past them until it has the requests a decided pass needs (59 for a p95, 299 for a p99) (0–3; 0 turns both off and skips confirming the answer's bounds)")
	var fsets findSettings
	if err := parseFlags(fs, args); err != nil {
		return runConfig{}, fsets, err
	}
	if fs.NArg() > 0 {
		return runConfig{}, fsets, configf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := findShapeFlags(set, *rf.arrival); err != nil {
		return runConfig{}, fsets, err
	}
	if err := findUsers(rf, set, *by); err != nil {
		return runConfig{}, fsets, err
	}
	if capacity {
		rf.sloDefault = DefaultCapacitySLO
	}
	cfg, err := rf.config(set)
	if err != nil {
		return cfg, fsets, err
	}
	if len(cfg.SLO) == 0 {
		return cfg, fsets, configf("--slo is required (e.g. ttft_p95=1.5s,tpot_p50=50ms)")
	}
	// A probe is a level of single requests (sessions are
	// run's): find cannot probe sessions, a replayed trace's included.
	if cfg.Scenario == workload.Multiturn || cfg.TraceSessions > 0 {
		return cfg, fsets, configf("sessions (--scenario multiturn, or a --trace whose rows name sessions) are not probed; sweep them with servebench run")
	}
	fsets = findSettings{By: slo.Load(*by), Start: *start, Max: *maxLoad, MaxTime: *maxTime, MaxRepeats: *maxRepeats, Capacity: capacity}
	if fsets.MaxRepeats < 0 || fsets.MaxRepeats > find.DefaultMaxRepeats {
		return cfg, fsets, configf("--max-repeats %d: want 0 to %d", fsets.MaxRepeats, find.DefaultMaxRepeats)
	}
	if err := searchLoad(&cfg, &fsets, set); err != nil {
		return cfg, fsets, err
	}
	fsets.Requests = cfg.Requests
	cfg.defaultLabel()
	return cfg, fsets, nil
}

// searchLoad checks find's load settings into cfg and fsets: the method
// of the load searched, the time limit and the start and highest loads,
// and the counted requests a probe needs.
func searchLoad(cfg *runConfig, fsets *findSettings, set map[string]bool) error {
	switch fsets.By {
	case slo.ByConcurrency:
		cfg.Method = load.Pool
		if set["arrival"] || set["max-concurrency"] {
			return configf("--arrival and --max-concurrency apply only to --by rate")
		}
	case slo.ByRate:
		cfg.Method = load.Rate
	case slo.ByUsers:
		// usersConfig made the people's load (findUsers asked it to)
	default:
		return configf("--by %q: want concurrency, rate or users", fsets.By)
	}
	if fsets.MaxTime < 0 {
		return configf("--max-time %v: must not be negative", fsets.MaxTime)
	}
	if _, err := find.New(fsets.config(cfg.SLO)); err != nil {
		return configf("--start/--max-load: %v", err)
	}
	need := slo.MinRequests(cfg.SLO)
	if fsets.By == slo.ByUsers {
		// a users level counts 72 turns, which a p95's two-sided 95%
		// interval needs; a straddling verdict is measured again
		need = min(need, defaultUserTurns)
	}
	switch {
	case set["requests"] && cfg.Requests < need:
		return configf("--requests %d: the SLO's percentiles need at least %d requests per probe (20 beyond the highest percentile)", cfg.Requests, need)
	case !set["requests"] && need > 0:
		cfg.Requests = need
	}
	return nil
}

// findUsers readies a search by users: the people's load, whose number
// the search chooses, so --users itself and the flags of other loads do
// not apply.
func findUsers(rf *runFlags, set map[string]bool, by string) error {
	if slo.Load(by) != slo.ByUsers {
		return nil
	}
	if set["users"] {
		return configf("--by users and --users do not go together (the search chooses the number of people; --start and --max-load bound it)")
	}
	for _, name := range usersExcludes {
		if set[name] {
			return configf("--by users and --%s do not go together (the load is people who think between turns)", name)
		}
	}
	set["users"], *rf.people.users = true, "1"
	return nil
}

// finder runs the searches of one find invocation, one per target, and
// keeps their answers.
type finder struct {
	deps    Deps
	cfg     findSettings
	started time.Time
	lines   io.Writer
	answers []find.Answer
	// sentence prints each answer's sentence in people first (capacity).
	sentence bool
}

// drive searches one target: each probe the search asks for becomes one
// level of the sweep (a further pass of that level for a repeat), read
// back from the records as soon as it ended.
func (f *finder) drive(ctx context.Context, env *runEnv, sweep *load.Sweep, cfg runConfig) (bool, []string, error) {
	s, err := find.New(f.cfg.config(cfg.SLO))
	if err != nil {
		return false, nil, err
	}
	pr := &sweepProber{env: env, sweep: sweep, cfg: cfg, keys: map[float64]int{}}
	outOfTime := func() bool { return f.cfg.MaxTime > 0 && f.deps.Clock.Now().Sub(f.started) >= f.cfg.MaxTime }
	a, err := find.Drive(ctx, s, pr, outOfTime)
	a.Label = cfg.Label
	for _, p := range a.Probes {
		if p.Saturation != nil {
			markSaturated(env, cfg.Label, pr.keys[p.Load], *p.Saturation)
		}
	}
	f.answers = append(f.answers, a)
	if f.sentence {
		fmt.Fprintln(f.lines, a.Sentence(serverWords(cfg), string(cfg.UserProfile.Name), cfg.Sim != nil))
	}
	line := a.Line()
	fmt.Fprintln(f.lines, line)
	notes := []string{"find: " + line}
	for _, w := range a.Warnings {
		fmt.Fprintln(env.stderr, "servebench: find: "+w)
		notes = append(notes, "find: "+w)
	}
	return a.Stop != find.Interrupted, notes, err
}

// breakStop is a simulated search's early stop of probe pb's pass
// (load.LevelStop): a pass whose verdict is decided to break against
// bounds on its own requests stops, as more requests would not make it
// pass (slo.BreakWatch). The repeat of a load its earlier passes left
// undecided has none: that load is borderline, and its pooled verdict
// rests on whole passes.
func breakStop(pb find.Probe, bounds []slo.Bound, confidence float64) load.LevelStop {
	if pb.Undecided {
		return nil
	}
	return func(load.Level) func(*record.Result) string {
		return slo.NewBreakWatch(bounds, confidence).Add
	}
}

// output is find's document: the probes as runs[].levels[], and the
// answers beside them as "find".
func (f *finder) output(doc *document.Document) any {
	return struct {
		*document.Document
		Find []find.Answer `json:"find"`
	}{doc, f.answers}
}

// sweepProber measures a search's probes on a prepared sweep: one Do per
// probe, all on the sweep's time origin and sequence, so the probes make
// one run of the records file.
type sweepProber struct {
	env   *runEnv
	sweep *load.Sweep
	cfg   runConfig
	// keys maps each load to its level key: the concurrency, or for rate
	// probes their index in the order first probed.
	keys map[float64]int
	// last is the latest probe's pass alone (lastOK: it has one).
	last   document.Level
	lastOK bool
}

// PassLevel implements find.PassProber: the latest probe's pass alone,
// for the search's drift check; none on the simulator (passAlone).
func (p *sweepProber) PassLevel() (document.Level, bool) { return p.last, p.lastOK }

// passAlone says whether a probe's pass is summarized alone, for the
// drift check. Not on the simulator: each of its passes runs on a fresh
// server (freshServers), which cannot have changed between them, so
// passes that differ only by their draws would be reported as drift.
func (p *sweepProber) passAlone() bool { return p.cfg.Sim == nil }

// Probe runs the probe's level (pass p.Pass of it) and returns the level
// pooled over its passes.
func (p *sweepProber) Probe(ctx context.Context, pb find.Probe) (document.Level, error) {
	key, ok := p.keys[pb.Load]
	if !ok {
		key = int(pb.Load)
		if p.cfg.Method == load.Rate {
			key = len(p.keys)
		}
		p.keys[pb.Load] = key
	}
	l := load.Level{Level: key, Concurrency: int(pb.Load), Requests: p.cfg.Requests, Pass: pb.Pass}
	if p.cfg.Method == load.Rate {
		l.Concurrency, l.Rate, l.Arrival = p.cfg.MaxConcurrency, pb.Load, string(p.cfg.Arrival)
	}
	// On the simulator a pass stops once it breaks decisively
	// (breakStop). A real server's passes run their length: its latency drifts
	// within a pass on a busy machine (two searches side by side on the
	// testbed answered 7 and 5 with passes stopped at their first look),
	// so a verdict from a pass's first requests is weaker evidence there
	// than the one-sided bound says.
	p.sweep.Stop = nil
	if p.cfg.Sim != nil {
		p.sweep.Stop = breakStop(pb, p.cfg.SLO, p.cfg.Confidence)
	}
	sum := p.env.rec.sum
	// A level's first pass alone is the level so far: the records'
	// Builder says it (ResultsLevel, from the level's one accumulator).
	// A later pass gets a Builder of its own.
	var pass *summary.Builder
	if p.passAlone() && sum.Counted(p.cfg.Label, key) {
		pass = summary.NewBuilder(summary.Options{})
		if h := p.env.rec.hdr; h != nil {
			pass.Add(record.Line{Header: h})
		}
	}
	p.env.rec.pass = pass
	_, err := doLevels(ctx, p.sweep, p.env.fresh, []load.Level{l})
	p.env.rec.pass = nil
	if err != nil {
		return document.Level{}, err
	}
	switch {
	case pass != nil:
		p.last, p.lastOK = pass.Level(p.cfg.Label, key)
	case p.passAlone():
		p.last, p.lastOK = sum.ResultsLevel(p.cfg.Label, key)
	}
	lvl, ok := sum.Level(p.cfg.Label, key)
	if !ok {
		if ctx.Err() != nil {
			return document.Level{}, nil // interrupted: Drive stops
		}
		return document.Level{}, fmt.Errorf("find: the probe at %s: no request was counted", levelName(l, p.cfg.Method))
	}
	return lvl, nil
}
