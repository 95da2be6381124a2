package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/internal/liblog"
	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/internal/safetext"
	"github.com/servebench/servebench/launch"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/slo"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/trace"
	"github.com/servebench/servebench/workload"
)

const runSynopsis = `run [--url URL] [--backend B] [--model NAME] [flags]

Sends generation requests to a running server (vllm, llamacpp, sglang, tgi,
openai: any OpenAI-compatible endpoint; ollama: its native API) at each level
of a sweep, records every request and writes a report document in the shape
of multi-backend-sweep.json (runs[].levels[]), plus records[] in the shape of
vllm-text-image-example.json for --method batch.

Without --url it looks for a server on this machine's usual ports (vLLM
8000, SGLang 30000, llama.cpp 8080, Ollama 11434, TGI 8080 and 3000; no
other machine); without --backend it recognises the server; without
--model it takes the server's only model. It says what it found, and the
report records it (server.discovered).

On a terminal it ends with the report's table and writes the document to
--out or servebench-YYYYMMDD-HHMMSS.json; otherwise the document goes to
standard output, as for --out -.

Methods: pool = closed loop, --requests per level with C workers; batch =
--repeats batches of exactly C simultaneous requests, one after the other;
rate = open loop at --rate requests/s, at most --max-concurrency in flight.
Rate arrivals: poisson (default), constant, gamma --burstiness K (gaps of
coefficient of variation 1/sqrt(K), as vLLM's --burstiness; K=1 is
poisson), ramp (linear from --rate-start to --rate over --ramp, then
--rate); --duration D ends each level's schedule at D instead of (or as
well as) --requests. Rate levels report latencies from each request's
scheduled send time too (ttft_sched_*, e2e_sched_*) and say when the
client, not the server, limited the rate (client_limited).

--trace FILE replays a trace: servebench JSON Lines (t_ms, input_tokens,
output_tokens), the Azure LLM inference CSV, BurstGPT CSV or Mooncake JSON
Lines, detected from the file. A trace brings its own open-loop schedule:
it implies --method rate and makes one level whose requests go at the
trace's arrival times (scaled by --trace-speed, sliced by --trace-window),
each with its row's prompt and output lengths, at most --max-concurrency in
flight; --rate, --arrival, --duration, --requests, --concurrency,
--scenario, --prompt-tokens, --max-tokens and --mix do not apply.

--mix text:0.7,image:0.2,long:0.1 sends several request classes in one
level (pool or rate), each request drawn from a class by its weight, with
that scenario's prompt and output lengths (--max-tokens sets every class's
output); levels are summarized per class and overall.
With --scenario multiturn the unit is a session of --turns turns: pool keeps
--concurrency sessions in flight, rate starts --rate sessions per second.

Flags`

// runConfig is one `servebench run` configuration, parsed and validated,
// made of one part per concern. Each part is filled from its own flags by
// its own step of (*runFlags).config and has a Validate that checks its
// own values; the rules between parts are in run_across.go. The parts are embedded, so that a
// field reads as cfg.URL whatever part holds it.
type runConfig struct {
	serverConfig
	workloadConfig
	loadConfig
	outputConfig
	intervalConfig
	// Telemetry holds the telemetry flags.
	Telemetry telemetrySettings
	// Sim is the server run --backend sim simulates in virtual time
	// instead of measuring one; nil for a real server.
	Sim *simTarget
}

// serverConfig is the server under test and how requests reach it
// (--backend, --url, --model, --api, --api-key, --timeout, --connection,
// or --profile), with what finding it learned.
type serverConfig struct {
	// Backend, URL and Model name the server under test; each is empty
	// until found (discoverServer) when its flag was not given.
	Backend backend.Kind
	URL     string
	Model   string
	API     backend.API
	APIKey  string // never written anywhere
	Timeout time.Duration
	// Connection is how requests use connections, which sets where their
	// clock starts (--connection).
	Connection backend.Connection

	// Discovered is what discoverServer found by itself, recorded in
	// run.server.discovered; ServerNotes are warnings about the server
	// found, for the run's warnings.
	Discovered  *record.Discovery
	ServerNotes []string

	// Profile is the launch profile the server runs under, when run
	// launched it; nil otherwise.
	Profile *record.Profile
	// Profiles are the --profile files: when set, each profile's server
	// is launched and swept in turn, and --backend, --url and --model
	// come from the profiles.
	Profiles []string
}

// workloadConfig is what each request sends: the scenario and its
// lengths and images, sessions and shared prefixes, the people's profile
// of a --users run, or the trace, mix or dataset that replaces the
// scenario, and the user's part of every request body.
type workloadConfig struct {
	Scenario     workload.Scenario
	PromptTokens int
	MaxTokens    int
	ImageWidth   int
	ImageHeight  int
	ImageFormat  workload.ImageFormat
	Seed         int64

	// Sessions and shared prefixes: Turns per session
	// (multiturn scenario), the think time between turns, and the shared
	// system prompts.
	Turns              int
	FollowupTokens     int
	Think              load.ThinkTime
	SharedPrefixTokens int
	PrefixGroups       int

	// UserProfile is what the people of a --users run send (its lengths
	// as flags override them); zero for other methods.
	UserProfile workload.Profile

	// Trace is the trace to replay (--trace, already read, windowed and
	// scaled), with how it was asked for; nil otherwise.
	Trace     *trace.Trace
	TraceInfo *record.TraceInfo
	// TraceSessions is the number of sessions the trace's rows name, and
	// TraceRate its arrivals' mean rate (single requests and sessions'
	// first turns), arrivals/s.
	TraceSessions int
	TraceRate     float64
	// TraceNotes are run warnings about how the trace is replayed that
	// reading its flags decided (a default shared prefix length).
	TraceNotes []string
	// Mix is the mix of request classes (--mix); nil otherwise.
	Mix workload.Mix

	// Dataset is the prompt dataset (--dataset, already read); nil
	// otherwise. DatasetShuffle draws its rows by --seed, and
	// DatasetPromptTokens (an explicit --prompt-tokens) keeps only rows
	// near that length.
	Dataset             *workload.Dataset
	DatasetShuffle      bool
	DatasetPromptTokens int

	requestBody
}

// loadConfig is the load each level puts on the server: the method and
// its levels (concurrencies, rates or numbers of people), the counted and
// warm-up requests, and a rate level's arrival shape and length.
type loadConfig struct {
	Method      load.Method
	Concurrency []int
	// Users are the numbers of people of a --users run, one level each;
	// nil for other methods.
	Users          []int
	Requests       int
	Repeats        int
	Warmup         int
	Rates          []float64
	Arrival        load.Arrival
	MaxConcurrency int

	// Arrival shapes and level length, rate method: the gamma
	// shape of the gaps (gamma, ramp), the ramp's start rate and length,
	// and the time that ends each level's schedule (0: none).
	Burstiness float64
	RateStart  float64
	Ramp       time.Duration
	Duration   time.Duration
	// RequestsSet is whether --requests was given (with --duration, the
	// level ends at whichever comes first).
	RequestsSet bool
}

// outputConfig is where the run's results go and what they hold: the
// label, the report and records files, the terminal's table and its SLO,
// and the price each level's cost comes from.
type outputConfig struct {
	Label string
	// Out is the report document's path, "-" for standard output; ""
	// until resultOutput decides (no --out).
	Out     string
	Records string
	// RecordsText lets prompt and answer texts into the records
	// (--records-text).
	RecordsText bool
	Quiet       bool

	// The first five minutes: Table ends the run with the report's table
	// on standard output (a terminal), with the capacity answer for SLO
	// when given.
	Table       bool
	SLO         []slo.Bound
	TableChoice tableChoice

	// PricePerHour and PricePerKWh are the run's price (--price-per-hour,
	// --price-per-kwh; 0: none).
	PricePerHour, PricePerKWh float64
}

// intervalConfig is how the levels' figures are judged: Confidence is
// the confidence of their intervals (0: the default); StopWhenSaturated
// ends a sweep at its first saturated level. The SLO (outputConfig) is
// also the budget each level's goodput counts requests against.
type intervalConfig struct {
	Confidence        float64
	StopWhenSaturated bool
}

// runRun is `servebench run`. A reader can follow it top to bottom:
// parse the flags; find what --url, --backend and --model left open
// (findServer); decide where the report goes (resultOutput); list the
// servers to sweep (runTargets: the one at --url, or one per --profile);
// sweep them in turn (sweepTargets, which writes the records and the
// report, and on a terminal shows its table).
func runRun(ctx context.Context, deps Deps, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseRunFlags(ctx, args, stdout)
	if err != nil {
		return err
	}
	// What the HTTP library logs from here on goes into the warnings of
	// the runs (libraryLog); what no run took, to stderr at the end.
	logs, doneLogs := libraryLog(deps, cfg, stderr)
	defer doneLogs()
	if err := findServer(ctx, deps, &cfg, stderr); err != nil {
		return err
	}
	cfg.Out, cfg.Table = resultOutput(cfg.Out, deps.IsTerminal(stdout), deps.Clock.Now())
	targets, err := runTargets(deps, cfg)
	if err != nil {
		return err
	}
	return sweepTargets(ctx, deps, cfg, targets, logs, stdout, stderr)
}

// libraryLog subscribes to deps.LibraryLog for the command, the API key
// redacted from every line; nil (which takes nothing) without one. The
// runs take what it holds as their warnings; done, which the command
// defers, writes what no run took to stderr as warnings.
func libraryLog(deps Deps, cfg runConfig, stderr io.Writer) (logs *liblog.Subscription, done func()) {
	if deps.LibraryLog != nil {
		secrets := cfg.secrets()
		logs = deps.LibraryLog.Subscribe(func(s string) string { return backend.RedactAll(s, secrets) })
	}
	return logs, func() {
		for _, l := range logs.Close() {
			warn(stderr, l)
		}
	}
}

// runTarget is one server to sweep: the server already running at
// cfg.URL, or a launch profile's, which start launches and readies
// (launchTarget in run_profile.go).
type runTarget struct {
	cfg   runConfig
	start func(ctx context.Context) (*launchedServer, error) // nil: already running
}

// runTargets lists the servers to sweep, in order: one per --profile, or
// else the one at --url.
func runTargets(deps Deps, cfg runConfig) ([]runTarget, error) {
	if len(cfg.Profiles) > 0 {
		return profileTargets(deps, cfg)
	}
	return []runTarget{{cfg: cfg}}, nil
}

// sweepTargets sweeps each target in turn into one records file (--records)
// and one report (--out), built from those records as `servebench report`
// would. A Ctrl-C or an error stops it and marks the report incomplete.
func sweepTargets(ctx context.Context, deps Deps, cfg runConfig, targets []runTarget, logs *liblog.Subscription, stdout, stderr io.Writer) error {
	return sweepTargetsWith(ctx, deps, cfg, targets, runHooks(cfg), logs, stdout, stderr)
}

// sweepTargetsWith is sweepTargets with hooks that say how each sweep runs
// its levels and what is written (run's, or find's).
func sweepTargetsWith(ctx context.Context, deps Deps, cfg runConfig, targets []runTarget, hooks sweepHooks, logs *liblog.Subscription, stdout, stderr io.Writer) error {
	rec, err := newRecorder(cfg.Records, hooks.command())
	if err != nil {
		return err
	}
	rec.secrets = cfg.secrets()
	out, err := openOut(cfg.Out, hooks.command())
	if err != nil {
		rec.close()
		return err
	}
	prog := newProgress(stderr, cfg.Quiet, deps.IsTerminal(stderr))
	prog.loads(cfg.Method)
	if !hooks.planInEnd { // find chooses its levels as it goes
		prog.plan(plannedWork(targets))
	}
	env := &runEnv{rec: rec, progress: prog, stderr: stderr, hooks: hooks, libraryLog: logs}
	var runErr error
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		if runErr = sweepTarget(ctx, deps, t, env); runErr != nil {
			break
		}
	}
	prog.close()
	// Stopped before every target was swept (Ctrl-C, possibly before a
	// run's header was written, or an error): the report is partial.
	stopped := ctx.Err() != nil || runErr != nil
	if err := rec.close(); err != nil && runErr == nil {
		runErr = err
	}
	doc := rec.sum.Document()
	doc.Tool = "servebench " + moduleVersion()
	if stopped {
		incomplete := false
		doc.Complete = &incomplete
	}
	if err := writeDocument(out, stdout, hooks.output(&doc), hooks.command()); err != nil {
		return errors.Join(runErr, err) // the sweep's own error first, when it had one
	}
	if !cfg.Table && cfg.Out != "-" && !cfg.Quiet {
		// Piped or redirected, nothing else says where the result went.
		fmt.Fprintf(stderr, "servebench: wrote %s (servebench report %s shows it)\n", cfg.Out, cfg.Out)
	}
	if cfg.Table {
		// What was measured is shown even when the run then fails.
		if err := showTable(stdout, cfg.Out, cfg.SLO, cfg.TableChoice); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	if rec.sum.Succeeded() == 0 {
		if ctx.Err() != nil { // Ctrl-C, possibly before the first request
			return fmt.Errorf("%s: interrupted before any request succeeded", hooks.command())
		}
		return fmt.Errorf("%s: no request succeeded (see errors_by_reason in the report)", hooks.command())
	}
	return nil
}

// sweepTarget starts a target's server if it has one to start and sweeps
// it. The sweep stops the server before writing its run_end line, so that
// a stop error lands in the run's warnings; the deferred stop covers the
// paths that end before (errors, panics) and does nothing after the first.
func sweepTarget(ctx context.Context, deps Deps, t runTarget, env *runEnv) error {
	if t.start == nil {
		return runSweep(ctx, deps, t.cfg, env, nil)
	}
	ls, err := t.start(ctx)
	if err != nil {
		return err
	}
	defer ls.stop(env.stderr, t.cfg.Label)
	return runSweep(ctx, deps, t.cfg, env, ls)
}

// plannedWork is the levels and counted requests every target plans,
// for the progress lines' "level 2 of 4" and whole-run ETA.
func plannedWork(targets []runTarget) (levels, requests int) {
	for _, t := range targets {
		for _, l := range t.cfg.levels() {
			levels++
			requests += t.cfg.Method.Total(l)
		}
	}
	return levels, requests
}

// runEnv is what the runs of one invocation share.
type runEnv struct {
	rec      *recorder
	progress *progress
	// stderr takes warnings that must be seen even with --quiet.
	stderr io.Writer
	// libraryLog holds what the HTTP library logged since the last run
	// took it (nil: not captured); each run_end takes it as warnings.
	libraryLog *liblog.Subscription
	hooks      sweepHooks
	// fresh makes the fresh server of each level of the simulated sweep
	// running now (nil for a real server's).
	fresh *freshServers
}

// runSweep benchmarks one server with one configuration: it calibrates the
// workload, starts the observers, writes the run's header, runs the levels
// in order and closes the run with its run_end line; the report is built
// from those lines afterwards, as `servebench report` would. ls is the
// server run launched for this sweep (nil when it was already running): its
// client then reports requests to a server that died as server_exited, and
// it is stopped before run_end is written, with its stop warnings there.
func runSweep(ctx context.Context, deps Deps, cfg runConfig, env *runEnv, ls *launchedServer) error {
	client, clock, simulated, err := sweepClient(deps, cfg, ls)
	if err != nil {
		return err
	}
	run := newRun(cfg, deps.Clock.Now(), client.Warnings())
	source, err := newSource(ctx, cfg, client)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted: sweepTargets marks the report incomplete
		}
		return fmt.Errorf("run %s: %w", cfg.Label, err)
	}
	run.Warnings = append(run.Warnings, source.notes...)

	// The observers of the levels, in the order their fields merge: the
	// launched server's exit, then telemetry (which counts the GPU memory
	// of the launched server's process tree unless --server-pid names one).
	var observers []load.Observer
	serverPID := cfg.Telemetry.ServerPID
	if simulated != nil {
		describeSimRun(&run, cfg.Sim, cfg.Method)
		// each level on a fresh server, after the one that calibrated
		// the workload: its observer, client and clock are the level's
		// (freshServers.ready); the sweep's are the calibration server's
		env.fresh = newFreshServers(cfg.Sim.Config, simOptions(cfg), source.people, simulated)
		defer func() { env.fresh = nil }()
	} else if ls != nil {
		ls.describe(&run)
		observers = append(observers, &exitObserver{proc: ls.proc, logPath: ls.logPath})
		if serverPID == 0 {
			serverPID = ls.proc.PID()
		}
	}
	if simulated == nil {
		tel := startTelemetry(ctx, cfg, serverPID, &run)
		defer tel.Close()
		observers = append(observers, tel)
	}

	levels := cfg.levels()
	env.rec.header(&record.Header{Run: run, Levels: levels, Warmup: cfg.Warmup})
	sweep := &load.Sweep{
		Run: cfg.Label, Method: cfg.Method, Levels: levels, Warmup: cfg.Warmup, Seed: cfg.Seed,
		Client: client, Source: source.requests, Sessions: source.sessions, People: source.people, Think: cfg.Think, Observe: observers, Clock: clock,
		RecordText: cfg.RecordsText,
		Sink:       &runSink{rec: env.rec, progress: env.progress, method: cfg.Method, planInEnd: env.hooks.planInEnd},
	}
	complete, notes, err := env.hooks.drive(ctx, env, sweep, cfg)
	end := &record.RunEnd{Run: cfg.Label, Complete: complete && err == nil, Warnings: notes}
	if err != nil {
		end.Warnings = append(end.Warnings, "run stopped: "+err.Error())
	}
	if ls != nil {
		end.Warnings = append(end.Warnings, ls.stop(env.stderr, cfg.Label)...)
	}
	end.Warnings = append(end.Warnings, env.libraryLog.Drain()...)
	env.rec.runEnd(end)
	return err
}

// sweepClient is what a sweep sends its requests to and the clock it runs
// on: the server's client on deps.Clock (guarded by the launched server's
// process when run launched it), or for run --backend sim the simulated
// server, which is its own clock (simulated, nil otherwise).
func sweepClient(deps Deps, cfg runConfig, ls *launchedServer) (backend.Client, load.Clock, *sim.Virtual, error) {
	if cfg.Sim != nil {
		s, err := newSimServer(cfg)
		if err != nil {
			return nil, nil, nil, err
		}
		return s.Client(), s, s, nil
	}
	client, err := deps.NewClient(cfg.clientConfig())
	if err != nil {
		return nil, nil, nil, configf("%v", err)
	}
	if ls != nil {
		client = launch.Guard(client, ls.proc)
	}
	return client, deps.Clock, nil, nil
}

// runSource is what a run sends, calibrated against the server: its
// requests; the sessions of its levels that hold some (a multi-turn run,
// a trace whose rows name sessions), nil otherwise; and findings for the
// run's warnings.
type runSource struct {
	requests load.Source
	sessions load.SessionSource
	people   load.PeopleSource
	notes    []string
}

// newSource prepares what the run sends: the trace's rows (--trace), the
// classes of a mix (--mix, one Builder per class), or the scenario's
// requests (and sessions, --scenario multiturn).
func newSource(ctx context.Context, cfg runConfig, client backend.Client) (runSource, error) {
	base := workload.Spec{
		Scenario: cfg.Scenario, PromptTokens: cfg.PromptTokens, MaxTokens: cfg.MaxTokens, Seed: cfg.Seed,
		ImageWidth: cfg.ImageWidth, ImageHeight: cfg.ImageHeight, ImageFormat: cfg.ImageFormat,
	}
	switch {
	case cfg.Dataset != nil:
		return datasetSource(ctx, cfg, client)
	case cfg.Trace != nil:
		return traceSource(ctx, cfg, base, client)
	case cfg.Mix != nil:
		base.SharedPrefixTokens, base.PrefixGroups = cfg.SharedPrefixTokens, cfg.PrefixGroups
		var builders []*workload.Builder
		var notes []string
		for _, c := range cfg.Mix {
			spec := base
			spec.Scenario = c.Scenario
			spec.PromptTokens, spec.MaxTokens = c.Scenario.Defaults().PromptTokens, c.Scenario.Defaults().MaxTokens
			if cfg.MaxTokens > 0 {
				spec.MaxTokens = cfg.MaxTokens // --max-tokens for every class
			}
			b := workload.NewBuilder(spec, client)
			if err := b.Calibrate(ctx); err != nil {
				return runSource{}, fmt.Errorf("class %s: %w", c.Scenario, err)
			}
			for _, n := range b.Notes() {
				notes = append(notes, fmt.Sprintf("class %s: %s", c.Scenario, n))
			}
			builders = append(builders, b)
		}
		return runSource{requests: workload.NewMixSource(cfg.Mix, builders, cfg.Seed), notes: notes}, nil
	}
	base.SharedPrefixTokens, base.PrefixGroups = cfg.SharedPrefixTokens, cfg.PrefixGroups
	base.Turns, base.FollowupTokens = cfg.Turns, cfg.FollowupTokens
	b := workload.NewBuilder(base, client)
	if err := b.Calibrate(ctx); err != nil {
		return runSource{}, err
	}
	src := runSource{requests: b, notes: b.Notes()}
	if cfg.Turns > 0 {
		src.sessions = b
	}
	if cfg.Method == load.Users {
		src.people = &workload.People{Builder: b, Profile: cfg.UserProfile, Seed: cfg.Seed}
	}
	return src, nil
}

// traceSource prepares a replayed trace: one Builder for its rows without
// a shared prefix and one, with the trace's prefix groups of
// --shared-prefix-tokens tokens, for those that name a prefix_group.
func traceSource(ctx context.Context, cfg runConfig, base workload.Spec, client backend.Client) (runSource, error) {
	b := workload.NewBuilder(workload.TraceSpec(cfg.Trace, base), client)
	if err := b.Calibrate(ctx); err != nil {
		return runSource{}, err
	}
	notes := b.Notes()
	var grouped *workload.Builder
	if spec, ok := workload.TraceGroupSpec(cfg.Trace, base, cfg.SharedPrefixTokens); ok {
		grouped = workload.NewBuilder(spec, client)
		if err := grouped.Calibrate(ctx); err != nil {
			return runSource{}, fmt.Errorf("prefix groups: %w", err)
		}
		for _, n := range grouped.Notes() {
			notes = append(notes, "prefix groups: "+n)
		}
	}
	ts, err := workload.NewTraceSource(b, grouped, cfg.Trace)
	if err != nil {
		return runSource{}, err
	}
	notes = append(notes, cfg.TraceNotes...)
	src := runSource{requests: ts, notes: append(notes, ts.Notes()...)}
	if cfg.TraceSessions > 0 {
		src.sessions = ts
	}
	return src, nil
}

// clientConfig is the backend configuration of the server under test.
func (cfg *runConfig) clientConfig() backend.Config {
	return backend.Config{
		Kind: cfg.Backend, BaseURL: cfg.URL, Model: cfg.Model, API: cfg.API,
		APIKey: cfg.APIKey, Timeout: cfg.Timeout, Connection: cfg.Connection,
		Sampling: cfg.Sampling, ExtraBody: cfg.ExtraBody, Headers: cfg.Headers,
	}
}

// newRun is the run's description before any level ran; the run
// starts at now.
func newRun(cfg runConfig, now time.Time, warnings []string) record.Run {
	r := record.Run{
		Label: cfg.Label, Backend: string(cfg.Backend), Model: cfg.Model,
		Scenario: cfg.scenarioName(), PromptTokens: cfg.PromptTokens, MaxTokens: cfg.MaxTokens,
		StartedAt: now.UTC().Format("2006-01-02 15:04 UTC"),
		Method:    string(cfg.Method), API: string(cfg.API), URL: cfg.URL,
		Connection: string(cfg.Connection),
		Profile:    cfg.Profile, Warnings: append(slices.Clone(warnings), cfg.ServerNotes...),
		Trace: cfg.TraceInfo, Mix: mixClasses(cfg.Mix), Dataset: datasetInfo(cfg),
		Headers: backend.HeaderNames(cfg.Headers), Sampling: samplingNote(cfg),
		PricePerHour: cfg.PricePerHour, PricePerKWh: cfg.PricePerKWh,
		Turns: cfg.Turns, ThinkTime: cfg.Think.String(),
		SharedPrefixTokens: cfg.SharedPrefixTokens, PrefixGroups: cfg.PrefixGroups,
	}
	r.SLO, r.GoodputBudget, r.CIConfidence = sloRecord(cfg)
	return r
}

// mixClasses is a mix as the records header keeps it.
func mixClasses(m workload.Mix) []record.MixClass {
	var out []record.MixClass
	for _, c := range m {
		out = append(out, record.MixClass{Class: string(c.Scenario), Weight: c.Weight})
	}
	return out
}

// levels is the sweep plan: one level per concurrency (pool, batch) or per
// rate (rate, keyed by index), or the one level of a trace; parseRunFlags
// checked it (planLevels).
func (cfg *runConfig) levels() []load.Level {
	out, _ := cfg.planLevels()
	return out
}

// defaultTimeout is run's --timeout by default, which plan --users'
// simulated levels apply too, as the search it repeats does.
const defaultTimeout = 5 * time.Minute

// maxPlannedRequests bounds the requests --duration may plan per level
// (each is prepared before the level starts).
const maxPlannedRequests = 1_000_000

// planLevels is levels, or a usage error when a --duration level would
// plan more than maxPlannedRequests requests.
func (cfg *runConfig) planLevels() ([]load.Level, error) {
	var out []load.Level
	if cfg.Trace != nil {
		return []load.Level{{Level: 0, Concurrency: cfg.MaxConcurrency, Requests: len(cfg.Trace.Rows),
			Rate: cfg.TraceRate, Arrival: string(load.Trace), Sessions: cfg.TraceSessions}}, nil
	}
	if cfg.Method == load.Rate {
		for i, r := range cfg.Rates {
			l := cfg.sessionLevel(load.Level{Level: i, Concurrency: cfg.MaxConcurrency, Requests: cfg.Requests, Rate: r, Arrival: string(cfg.Arrival),
				Burstiness: cfg.Burstiness, RateStart: cfg.RateStart, RampSeconds: cfg.Ramp.Seconds(), DurationSeconds: cfg.Duration.Seconds()})
			if cfg.Duration > 0 {
				if err := cfg.planDuration(&l); err != nil {
					return nil, err
				}
			}
			out = append(out, l)
		}
		return out, nil
	}
	for _, n := range cfg.Users {
		out = append(out, load.Level{Level: n, Concurrency: n, Requests: cfg.Requests})
	}
	for _, c := range cfg.Concurrency {
		l := load.Level{Level: c, Concurrency: c, Requests: cfg.Requests}
		if cfg.Method == load.Batch {
			l.Requests, l.Repeats = 0, cfg.Repeats
		}
		out = append(out, cfg.sessionLevel(l))
	}
	return out, nil
}

// planDuration sets the requests of a --duration rate level l: the
// arrivals its schedule holds before the duration (and within --requests
// when given), each a request, or in a multi-turn level a session of
// l.Turns requests.
func (cfg *runConfig) planDuration(l *load.Level) error {
	arrivals, unit := *l, "requests"
	if l.Sessions > 0 {
		arrivals.Requests, unit = l.Sessions, "sessions"
	}
	if !cfg.RequestsSet {
		arrivals.Requests = 0
	}
	n, ok := load.Count(load.NewPacer(arrivals, cfg.Seed), maxPlannedRequests+1)
	if !ok || n > maxPlannedRequests {
		return configf("--duration %v at %g %s/s plans more than %d %s per level", cfg.Duration, l.Rate, unit, maxPlannedRequests, unit)
	}
	if l.Sessions > 0 {
		l.Sessions, l.Requests = n, n*l.Turns
		return nil
	}
	l.Requests = n
	return nil
}

// sessionLevel makes l a multi-turn level when the run has sessions:
// ⌈requests / turns⌉ sessions of Turns turns (so Requests becomes
// sessions × turns).
func (cfg *runConfig) sessionLevel(l load.Level) load.Level {
	if cfg.Turns < 1 {
		return l
	}
	l.Turns = cfg.Turns
	l.Sessions = (cfg.Requests + cfg.Turns - 1) / cfg.Turns
	l.Requests = l.Sessions * l.Turns
	return l
}

// openOut creates the --out report file before the run, so that a path
// that cannot be written is a usage error at once rather than after the
// benchmark; nil (no error) means standard output ("" or "-").
func openOut(path, cmd string) (*filecap.OutFile, error) {
	if path == "" || path == "-" {
		return nil, nil
	}
	f, err := filecap.Create(path)
	if err != nil {
		return nil, usagef("%s: --out: %v", cmd, err)
	}
	return f, nil
}

// writeDocument writes doc (a document, or a document with more fields
// beside it) as indented JSON to out and closes it, or to stdout when out
// is nil. Control characters and bidirectional overrides in strings a
// server sent are written as \uXXXX escapes (safetext.JSON).
func writeDocument(out *filecap.OutFile, stdout io.Writer, doc any, cmd string) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	b = append(safetext.JSON(b), '\n')
	if out == nil {
		if err == nil {
			_, err = stdout.Write(b)
		}
		return err
	}
	if err == nil {
		_, err = out.Write(b)
	}
	if err == nil {
		err = out.Commit()
	} else {
		out.Abort() // what was at the path stays as it was
	}
	if err != nil {
		return fmt.Errorf("%s: --out %s: %w", cmd, out.Name(), err)
	}
	return nil
}

// parseRunFlags parses and validates the flags of run; ctx ends the
// reading of a --trace (nil: no end).
func parseRunFlags(ctx context.Context, args []string, stdout io.Writer) (runConfig, error) {
	fs := newFlagSet("run", runSynopsis, stdout)
	f := defineRunFlags(fs)
	f.shapes.ctx = ctx
	if err := parseFlags(fs, args); err != nil {
		return runConfig{}, err
	}
	if fs.NArg() > 0 {
		return runConfig{}, usagef("run: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	cfg, err := f.config(set)
	if err != nil {
		return cfg, named(err, "run")
	}
	cfg.defaultLabel()
	return cfg, nil
}

// defaultLabel sets the label <backend>-<scenario> when --label was not
// given, once the backend is known; --profile names its own labels.
func (cfg *runConfig) defaultLabel() {
	if len(cfg.Profiles) == 0 && cfg.Label == "" && cfg.Backend != "" {
		cfg.Label = string(cfg.Backend) + "-" + cfg.scenarioName()
		if cfg.Sim != nil {
			cfg.Label = backendSim + "-" + cfg.Label
		}
	}
}

// runFlags holds the raw flag values.
type runFlags struct {
	backend, url, model, api, apiKey       *string
	connection                             *string
	scenario, concurrency, method, rate    *string
	arrival, label, imageSize, imageFormat *string
	out, records, slo                      *string
	// sloDefault is the SLO when --slo is not given (capacity's); the
	// flag itself stays as parsed.
	sloDefault                              string
	requests, repeats, warmup, promptTokens *int
	maxTokens, maxConcurrency               *int
	seed                                    *int64
	timeout                                 *time.Duration
	quiet                                   *bool
	table                                   tableFlags
	profiles                                *stringsFlag
	telemetry                               telemetryFlags
	shapes                                  shapeFlags
	sessions                                sessionFlags
	people                                  usersFlags
	dataset                                 datasetFlags
	body                                    bodyFlags
	cost                                    costFlags
	// Intervals and saturation.
	confidence        *float64
	stopWhenSaturated *bool
	// The simulated server of run --backend sim.
	sim *simRunFlags
}

// shapeFlags are the flags of workloads like real traffic:
// arrival shapes and level length, trace replay, mixes.
type shapeFlags struct {
	burstiness, rateStart, traceSpeed *float64
	ramp, duration                    *time.Duration
	trace, traceFormat, traceWindow   *string
	mix                               *string
	// ctx ends the reading of --trace (Ctrl-C); nil is no end.
	ctx context.Context
}

func defineShapeFlags(fs *flag.FlagSet) shapeFlags {
	return shapeFlags{
		burstiness:  fs.Float64("burstiness", 1, "gamma shape `K` of the gaps between arrivals (--arrival gamma or ramp): coefficient of variation 1/sqrt(K); 1 is poisson, below 1 burstier, above 1 more even"),
		rateStart:   fs.Float64("rate-start", 0, "rate in requests/s a ramp starts from (--arrival ramp); it rises linearly to --rate"),
		ramp:        fs.Duration("ramp", 0, "length of the ramp from --rate-start to --rate (--arrival ramp; required there)"),
		duration:    fs.Duration("duration", 0, "end each rate level's schedule after this long (rate): no request is due after it; with --requests set too, whichever comes first"),
		trace:       fs.String("trace", "", "replay the trace `FILE` (implies --method rate: the trace's own arrival times and lengths, one level)"),
		traceFormat: fs.String("trace-format", "auto", "layout of --trace: auto, servebench, azure, burstgpt or mooncake"),
		traceSpeed:  fs.Float64("trace-speed", 1, "replay speed of --trace: 2 halves every gap, 0.5 doubles it"),
		traceWindow: fs.String("trace-window", "", "replay only `START,DURATION` of --trace, in the trace's own time (e.g. 10m,5m; \"30s,\" to the end)"),
		mix:         fs.String("mix", "", "mix of request classes in one level, e.g. text:0.7,image:0.2,long:0.1 (scenario:weight; pool or rate)"),
	}
}

// defineRunFlags defines run's flags: the ones find shares
// (defineTargetFlags) and the sweep's own.
func defineRunFlags(fs *flag.FlagSet) *runFlags {
	f := defineTargetFlags(fs)
	f.method = fs.String("method", "pool", "load method: pool, batch or rate")
	f.concurrency = fs.String("concurrency", "1,4,16", "comma-separated concurrency levels, run in the order given (pool, batch)")
	f.repeats = fs.Int("repeats", 3, "batches per level (batch)")
	f.rate = fs.String("rate", "", "comma-separated request rates in requests/s, one level each (rate; required there)")
	f.stopWhenSaturated = fs.Bool("stop-when-saturated", false, "end the sweep at the first saturated level (see docs/metrics.md, saturation) and say so")
	return f
}

// defineTargetFlags defines the flags that say which server to load and
// with what (server, workload, profiles, telemetry, outputs, the SLO of
// goodput): run's, shared by find.
// defaultRequests is the counted requests of a pool or rate level: the
// fewest whose order statistics give a p95 a two-sided 95% interval
// (stats.QuantileSampleSize), more than the 59 a one-sided SLO verdict on
// it needs (docs/metrics.md, "Confidence intervals").
const defaultRequests = 72

func defineTargetFlags(fs *flag.FlagSet) *runFlags {
	return &runFlags{
		backend:        fs.String("backend", backendAuto, "server family: auto (recognise the server), "+backend.Join(backend.Kinds)+"; or sim: predict the run in virtual time with the simulator (--gpu, --model, --scheduler and the server settings below; no server needed)"),
		url:            fs.String("url", "", "server base URL, e.g. http://127.0.0.1:8000 (OpenAI-compatible; a trailing /v1 is fine) or http://127.0.0.1:11434 (ollama) (default: look on this machine's usual ports)"),
		model:          fs.String("model", "", "model name the server serves (default: the server's only model); with --backend sim, the "+modelFlagUsage),
		api:            fs.String("api", "chat", "request API: chat or completions (OpenAI-compatible backends), chat or generate (ollama)"),
		apiKey:         fs.String("api-key", "", "Bearer token for the server (default $OPENAI_API_KEY); never written to any output"),
		timeout:        fs.Duration("timeout", defaultTimeout, "per-request timeout, from sending to the last chunk (0: none)"),
		connection:     fs.String("connection", string(backend.KeepAlive), "how requests use connections, which sets where TTFT and E2E start: keep-alive (pooled connections; clock from the moment the request is written) or per-request (a new connection per request; clock from before it is opened, as vLLM's benchmark client does)"),
		scenario:       fs.String("scenario", "text", "workload: text (short prompts, 128 out), chat (512 in, 256 out), long (4096 in, 256 out), image (one image + short text, 128 out), multiturn (sessions of --turns turns, 128 in per turn plus the conversation so far, 64 out)"),
		promptTokens:   fs.Int("prompt-tokens", 0, "prompt length in tokens as the server counts them (default: the scenario's; 0 with the flag set: not controlled)"),
		maxTokens:      fs.Int("max-tokens", 0, "output tokens per request (default: the scenario's)"),
		imageSize:      fs.String("image-size", "512x512", "size `WxH` of the generated images (image scenario)"),
		imageFormat:    fs.String("image-format", "png", "encoding of the generated images: png or jpeg"),
		seed:           fs.Int64("seed", 1, "seed of prompts, images, mix classes and random arrivals (same seed, same workload)"),
		requests:       fs.Int("requests", defaultRequests, "counted requests per level (pool, rate); 72 give a p95 a two-sided 95% interval, 368 a p99"),
		warmup:         fs.Int("warmup", 2, "warm-up requests before each level, recorded with \"warmup\": true and not counted; a pool level of C ≥ 2 workers sends at least C, as its first C requests start together"),
		arrival:        fs.String("arrival", "poisson", "inter-arrival law of the rate method: poisson, constant, gamma (--burstiness) or ramp (--rate-start, --ramp)"),
		maxConcurrency: fs.Int("max-concurrency", 64, "most requests in flight (rate)"),
		label:          fs.String("label", "", "run label (default <backend>-<scenario>)"),
		out:            fs.String("out", "", "report document `FILE` (\"-\": standard output; default: standard output, or servebench-YYYYMMDD-HHMMSS.json when it is a terminal)"),
		slo:            fs.String("slo", "", "latency budget, e.g. ttft_p95=1.5s,tpot_p50=50ms: each level's goodput counts the requests that meet it (docs/metrics.md), and on a terminal the run ends with the capacity answer, as report --slo"),
		records:        fs.String("records", "", "per-request records `FILE` (JSON Lines, flushed as each request ends; default: none)"),
		quiet:          fs.Bool("quiet", false, "no progress or summary on standard error"),
		table:          defineTableFlags(fs),
		profiles:       defineProfileFlag(fs),
		telemetry:      defineTelemetryFlags(fs),
		shapes:         defineShapeFlags(fs),
		sessions:       defineSessionFlags(fs),
		people:         defineUsersFlags(fs),
		dataset:        defineDatasetFlags(fs),
		body:           defineBodyFlags(fs),
		cost:           defineCostFlags(fs),
		confidence:     fs.Float64("confidence", stats.DefaultConfidence, "confidence of the levels' intervals (0.5–0.999)"),
		sim:            defineSimRunFlags(fs),
	}
}

// config validates the raw values; set names the flags given explicitly.
// Each step reads one concern's flags into its part of runConfig and
// checks it (the part's Validate); the conflict steps and validateAcross
// (run_across.go) hold the rules between concerns. The order matters
// only where a step reads what an earlier one decided (the scenario's
// lengths, the method), and it decides which of two errors is reported.
// A flag given a value the configuration reads as none or as the default
// (0 for a price, --duration, --confidence or --max-tokens; --prefix-groups
// without a shared prefix) is refused by the step that reads it, with the
// message Validate gives for a bad value. No step writes a raw flag.
func (f *runFlags) config(set map[string]bool) (runConfig, error) {
	cfg := runConfig{
		serverConfig:   serverConfig{URL: strings.TrimSpace(*f.url), Model: strings.TrimSpace(*f.model), APIKey: *f.apiKey, Timeout: *f.timeout},
		workloadConfig: workloadConfig{Seed: *f.seed},
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	for _, step := range []func(*runConfig, map[string]bool) error{
		f.simConflicts,          // between concerns, on the flags given (run_across.go)
		f.simConfig,             // Sim (run_sim.go)
		f.server,                // serverConfig
		f.connectionMode,        // serverConfig
		f.bodyConfig,            // workloadConfig: the request body (run_body.go)
		f.prices,                // outputConfig: the price (run_cost.go)
		f.loadConflicts,         // between concerns, on the flags given (run_across.go)
		f.workload,              // workloadConfig: scenario, lengths, sessions
		f.datasetConfig,         // workloadConfig: the dataset (run_dataset.go)
		f.load,                  // loadConfig, its arrival shapes in run_shapes.go
		f.usersConfig,           // loadConfig and the people's profile (run_users.go)
		f.overflowNote,          // between concerns: conversations longer than a sequence (run_users.go)
		f.shapes.workload,       // workloadConfig: the mix, the trace (run_shapes.go)
		(*runConfig).acrossStep, // between concerns, parsed (run_across.go)
		profileConflicts,        // between concerns, on the flags given (run_across.go)
		f.profile,               // serverConfig, from --profile (run_profile.go)
		f.telemetryConfig,       // Telemetry (run_telemetry.go)
		f.outputs,               // outputConfig
		f.intervals,             // intervalConfig (run_steps.go)
	} {
		if err := step(&cfg, set); err != nil {
			return cfg, redactKey(err, cfg.APIKey)
		}
	}
	return cfg, nil
}

// redactKey removes the API key from an error about the input (a trace or
// profile line it quotes may hold it), keeping a usage error one.
func redactKey(err error, key string) error {
	msg := backend.Redact(err.Error(), key)
	if msg == err.Error() {
		return err
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return &UsageError{Cmd: ue.Cmd, Msg: backend.Redact(ue.Msg, key), unnamed: ue.unnamed}
	}
	return errors.New(msg)
}

// server reads --backend, --url and --api into cfg.serverConfig, unless
// --profile names the servers.
func (f *runFlags) server(cfg *runConfig, set map[string]bool) error {
	if set["profile"] {
		return nil // f.profile takes the server from each --profile
	}
	if b := strings.TrimSpace(*f.backend); b != backendAuto && b != "" && b != backendSim {
		k, err := backend.ParseKind(b)
		if err != nil {
			return configf("--backend: %v (or auto)", err)
		}
		cfg.Backend = k
	}
	cfg.API = backend.API(*f.api)
	return cfg.serverConfig.Validate()
}

// Validate checks the server's URL, that its backend takes the request
// API (a profile's backend is checked against it when the profile is
// read: checkProfileAPI), and the timeout.
func (c serverConfig) Validate() error {
	if c.URL != "" {
		if err := checkURL(c.URL); err != nil {
			return configf("--url: %v", err)
		}
	}
	if len(c.Profiles) == 0 {
		if err := checkAPI(c.Backend, c.API); err != nil {
			return err
		}
	}
	if c.Timeout < 0 {
		return configf("--timeout %v: must not be negative", c.Timeout)
	}
	return nil
}

// connectionMode reads --connection; it applies to --profile runs too.
func (f *runFlags) connectionMode(cfg *runConfig, _ map[string]bool) error {
	c, err := backend.ParseConnection(*f.connection)
	if err != nil {
		return configf("--connection: %v", err)
	}
	cfg.Connection = c
	return nil
}

// backendAuto is --backend's default: recognise the server.
const backendAuto = "auto"

// checkAPI checks that backend k takes the request API api (its
// backend.Descriptor's APIs); any API one of them takes passes while the
// backend is not known yet ("").
func checkAPI(k backend.Kind, api backend.API) error {
	apis := k.Describe().APIs
	switch {
	case k == "" && api != backend.Chat && api != backend.Completions && api != backend.Generate:
		return configf("--api %q: want chat, completions or generate", api)
	case len(apis) >= 2 && !slices.Contains(apis, api):
		return configf("--api %q: backend %s takes %s or %s", api, k, apis[0], apis[1])
	}
	return nil
}

// outputs reads the output flags into cfg.outputConfig and checks
// --out, --records and --slo before anything is sent: a file in a folder
// that does not exist, or a bad SLO, is a usage error at once, not after
// the benchmark (the files are created once the server is found).
func (f *runFlags) outputs(cfg *runConfig, set map[string]bool) error {
	o := &cfg.outputConfig
	o.Label, o.Out, o.Records, o.Quiet = *f.label, *f.out, *f.records, *f.quiet
	o.RecordsText = *f.dataset.recordsText
	if err := o.Validate(); err != nil {
		return err
	}
	text := *f.slo
	if !set["slo"] && f.sloDefault != "" {
		text = f.sloDefault
	}
	if text != "" {
		bounds, err := slo.Parse(text)
		if err != nil {
			return configf("--slo: %v", err)
		}
		o.SLO = bounds
	}
	choice, err := f.table.choice("")
	o.TableChoice = choice
	return err
}

// Validate checks the prices and that the folders of --out and --records
// exist.
func (c outputConfig) Validate() error {
	if err := c.validatePrices(); err != nil {
		return err
	}
	for _, o := range []struct{ flag, path string }{{"--out", c.Out}, {"--records", c.Records}} {
		if o.path == "" || o.path == "-" {
			continue
		}
		dir := filepath.Dir(o.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return configf("%s %s: folder %s does not exist", o.flag, o.path, dir)
		}
	}
	return nil
}

// checkURL accepts an absolute http(s) URL without credentials: user
// info, like a query string or a fragment (checkURLShape), would end up
// in the report, the records and warnings. The refusal shows the URL with
// those parts masked (redactURL).
func checkURL(raw string) error {
	u, err := checkURLShape(raw)
	if err != nil {
		return err
	}
	if u.User != nil {
		return fmt.Errorf("%q: credentials in the URL would be written to the report; use --api-key", redactURL(raw))
	}
	return nil
}

// checkURLShape parses an absolute http(s) URL with no query string or
// fragment: where keys are passed ("?api_key=…"), and neither has a
// place in a server's base URL.
func checkURLShape(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: not a URL", redactURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q: want an absolute http:// or https:// URL", redactURL(raw))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.RawFragment != "" {
		return nil, fmt.Errorf("%q: a query string or fragment would be written to the report; give the base URL (a key goes in --api-key)", redactURL(raw))
	}
	return u, nil
}

// workload reads the workload flags into cfg.workloadConfig: the
// scenario and its lengths, the images, sessions and shared prefixes
// (sessionsConfig). A dataset (datasetConfig), a mix and a trace
// (f.shapes.workload) come in their own steps; --trace leaves the lengths
// to the trace's rows, --mix the prompt to its classes.
func (f *runFlags) workload(cfg *runConfig, set map[string]bool) error {
	w := &cfg.workloadConfig
	sc, err := workload.ParseScenario(*f.scenario)
	if err != nil {
		return configf("--scenario: %v", err)
	}
	w.Scenario = sc
	def := sc.Defaults()
	w.PromptTokens, w.MaxTokens = def.PromptTokens, def.MaxTokens
	if set["prompt-tokens"] {
		w.PromptTokens = *f.promptTokens
	}
	if set["max-tokens"] {
		if *f.maxTokens == 0 { // 0 reads as each class's (a mix) or each row's (a trace)
			return badMaxTokens(0)
		}
		w.MaxTokens = *f.maxTokens
	}
	switch {
	case set["trace"]: // the trace's rows give the lengths (f.shapes.workload)
		w.PromptTokens, w.MaxTokens = 0, 0
	case set["mix"]: // each class takes its scenario's prompt (readMix)
		w.PromptTokens = 0
	}
	if err := w.validateLengths(); err != nil {
		return err
	}
	if w.ImageWidth, w.ImageHeight, err = workload.ParseImageSize(*f.imageSize); err != nil {
		return configf("--image-size: %v", err)
	}
	if w.ImageFormat, err = workload.ParseImageFormat(*f.imageFormat); err != nil {
		return configf("--image-format: %v", err)
	}
	if err := f.sessionsConfig(w, set); err != nil {
		return err
	}
	return w.Validate()
}

// Validate checks the lengths, sessions, shared prefixes, the people's
// profile and the request body. A length of 0 is the trace's or the
// mix's own (MaxTokens) or not controlled (PromptTokens).
func (c workloadConfig) Validate() error {
	if err := c.validateLengths(); err != nil {
		return err
	}
	if err := c.validateSessions(); err != nil {
		return err
	}
	if err := c.validateProfile(); err != nil {
		return err
	}
	return c.requestBody.Validate()
}

// validateLengths checks the prompt and output lengths.
func (c workloadConfig) validateLengths() error {
	switch {
	case c.PromptTokens < 0 || c.PromptTokens > limits.MaxTokens:
		return configf("--prompt-tokens %d: want 0 to %d", c.PromptTokens, limits.MaxTokens)
	case c.MaxTokens < 0 || c.MaxTokens > limits.MaxTokens:
		return badMaxTokens(c.MaxTokens)
	}
	return nil
}

// badMaxTokens is the usage error for a --max-tokens value.
func badMaxTokens(n int) error {
	return configf("--max-tokens %d: want 1 to %d", n, limits.MaxTokens)
}

// load reads the load flags into cfg.loadConfig: the arrival law, the
// method and its levels, and a rate level's shape (arrivals, in
// run_shapes.go). find, which has no --method (it chooses the loads),
// gets only the flags it shares.
func (f *runFlags) load(cfg *runConfig, set map[string]bool) error {
	l := &cfg.loadConfig
	l.Requests, l.Warmup, l.MaxConcurrency = *f.requests, *f.warmup, *f.maxConcurrency
	var err error
	if l.Arrival, err = load.ParseArrival(*f.arrival); err != nil {
		return configf("--arrival: %v", err)
	}
	if err := l.validateCounts(); err != nil {
		return err
	}
	if f.method != nil {
		l.Repeats = *f.repeats
		if l.Method, err = load.ParseMethod(f.methodName(set)); err != nil {
			return configf("--method: %v", err)
		}
		if err := l.validateRepeats(); err != nil {
			return err
		}
		if err := f.levels(l, set); err != nil {
			return err
		}
	}
	if err := f.shapes.arrivals(l, set); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return err
	}
	if l.Duration > 0 {
		_, err = cfg.planLevels() // a --duration level's requests are bounded
	}
	return err
}

// levels reads the method's levels: --rate's rates for rate (none with
// --trace: the trace is the schedule), else --concurrency's
// concurrencies.
func (f *runFlags) levels(l *loadConfig, set map[string]bool) error {
	var err error
	if l.Method == load.Rate {
		if set["concurrency"] {
			return configf("--concurrency does not apply to --method rate (use --rate and --max-concurrency)")
		}
		if set["trace"] {
			return nil // the trace is the schedule (f.shapes.workload)
		}
		if *f.rate == "" {
			return configf("--rate is required with --method rate (requests/s, e.g. 1,2,4)")
		}
		if l.Rates, err = parseRates(*f.rate); err != nil {
			return configf("--rate: %v", err)
		}
		return nil
	}
	if set["rate"] || set["arrival"] || set["max-concurrency"] {
		return configf("--rate, --arrival and --max-concurrency apply only to --method rate")
	}
	if l.Concurrency, err = parseLevels(*f.concurrency); err != nil {
		return configf("--concurrency: %v", err)
	}
	return nil
}

// Validate checks the counts (validateCounts, validateRepeats), the time
// each rate would take (checkRateSpan) and a rate level's shape
// (validateShape).
func (c loadConfig) Validate() error {
	for _, check := range []func() error{c.validateCounts, c.validateRepeats, c.checkRateSpan, c.validateShape} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateCounts checks the counted and warm-up requests and the most in
// flight.
func (c loadConfig) validateCounts() error {
	switch {
	case c.Requests < 1:
		return configf("--requests %d: must be at least 1", c.Requests)
	case c.Requests > limits.MaxRequests:
		return configf("--requests %d: at most %d per level", c.Requests, limits.MaxRequests)
	case c.Warmup < 0:
		return configf("--warmup %d: must not be negative", c.Warmup)
	case c.Warmup > limits.MaxRequests:
		return configf("--warmup %d: at most %d per level", c.Warmup, limits.MaxRequests)
	case c.MaxConcurrency < 1:
		return configf("--max-concurrency %d: must be at least 1", c.MaxConcurrency)
	}
	return nil
}

// validateRepeats checks the batches per level once a method is chosen
// (find has no --repeats: it chooses a method per probe).
func (c loadConfig) validateRepeats() error {
	if c.Method != "" && (c.Repeats < 1 || c.Repeats > limits.MaxRepeats) {
		return configf("--repeats %d: want 1 to %d", c.Repeats, limits.MaxRepeats)
	}
	return nil
}

// parseLevels parses a comma-separated list of distinct positive integers.
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want comma-separated positive integers, e.g. 1,4,16", clipArg(p))
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("level %d given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseRates parses a comma-separated list of positive request rates, each
// at most limits.MaxRate.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(r > 0) || r > limits.MaxRate {
			return nil, fmt.Errorf("%q: want comma-separated positive rates up to %g requests/s, e.g. 0.5,2", clipArg(p), float64(limits.MaxRate))
		}
		out = append(out, r)
	}
	return out, nil
}

// checkRateSpan refuses, before the first request, a rate whose level
// would take longer than limits.MaxSpan to send its requests (warm-up
// included): the schedule is known up front, and a run that waits
// decades would print nothing. Computed in float64, so a tiny rate
// cannot overflow a time.Duration.
func (c loadConfig) checkRateSpan() error {
	n := float64(c.Requests + c.Warmup)
	for _, r := range c.Rates {
		if wait := n / r; wait > limits.MaxSpan.Seconds() {
			return configf("--rate %g: %d requests would take %s, more than the %s a level may take; give a higher --rate or fewer --requests",
				r, c.Requests+c.Warmup, fmtSeconds(wait), fmtSeconds(limits.MaxSpan.Seconds()))
		}
	}
	return nil
}

// clipArg shortens one element of a flag's list for an error message.
func clipArg(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
