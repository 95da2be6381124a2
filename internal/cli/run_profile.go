package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/launch"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/serverlog"
	"github.com/servebench/servebench/telemetry"
)

// `servebench run --profile a.yaml --profile b.yaml [workload flags]`
// launches each profile's server in turn, sweeps it with the workload
// flags, and stops it; all runs go into one report. Per profile:
//
//  1. start the server in its own process group, its stdout and stderr in
//     <dir of --out>/<run label>.log (the run label is the profile's
//     label and the scenario, e.g. llamacpp-q8kv-long);
//  2. wait for its health URL up to the profile's start deadline;
//  3. for Ollama, which loads a model on first use, send one 1-token
//     request so the model is loaded and its KV cache logged;
//  4. parse the capacity lines from the log (serverlog) into the run's
//     capacity, and hold the planner's prediction for the profile against
//     it as the run's calibration record;
//  5. run the sweep (runSweep) with a client that reports requests to a
//     server that died as "server exited (code N)" and an observer that
//     warns on the level during which it died;
//  6. stop the server: SIGTERM to its group and every process it started
//     (its launch watchdog holds the whole tree), SIGKILL after the grace.
//
// The server is stopped on success, on error, on Ctrl-C (the context) and
// on a panic of the sweep (deferred teardown), and by launch's watchdog
// process should servebench itself be killed.

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }

// Set appends one value.
func (s *stringsFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty file name")
	}
	*s = append(*s, v)
	return nil
}

// defineProfileFlag adds --profile to run's flags.
func defineProfileFlag(fs *flag.FlagSet) *stringsFlag {
	var files stringsFlag
	fs.Var(&files, "profile", "launch profile `FILE` (YAML or JSON), repeatable: start each profile's server, sweep it, stop it; replaces --backend, --url and --model")
	return &files
}

// profile reads the --profile files into cfg.serverConfig and checks
// each profile's backend against --api (profileConflicts refuses the flags a
// profile replaces).
func (f *runFlags) profile(cfg *runConfig, _ map[string]bool) error {
	files := *f.profiles
	if len(files) == 0 {
		return nil
	}
	// f.server is skipped with --profile: the request API is read here.
	cfg.API, cfg.Profiles = backend.API(*f.api), files
	if err := cfg.serverConfig.Validate(); err != nil {
		return err
	}
	profiles, err := loadProfiles(files)
	if err != nil {
		return err
	}
	for _, p := range profiles {
		if err := checkProfileAPI(p, cfg.API); err != nil {
			return err
		}
	}
	return nil
}

// loadProfiles reads and checks every profile file; errors are usage
// errors naming the file.
func loadProfiles(files []string) ([]*launch.Profile, error) {
	var ps []*launch.Profile
	for _, f := range files {
		p, err := launch.Load(f)
		if err != nil {
			return nil, configf("--profile: %v", err)
		}
		if p.Model == "" {
			return nil, configf("--profile: profile %s: model: missing (the model the run requests)", f)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func checkProfileAPI(p *launch.Profile, api backend.API) error {
	ok := api == backend.Chat || api == backend.Completions
	if p.Backend == backend.Ollama {
		ok = api == backend.Chat || api == backend.Generate
	}
	if !ok {
		return configf("--api %q: profile %s is backend %s, which does not take it", api, p.Path, p.Backend)
	}
	return nil
}

// profileTargets turns each profile into a target whose start launches
// its server (launchTarget).
func profileTargets(deps Deps, cfg runConfig) ([]runTarget, error) {
	profiles, err := loadProfiles(cfg.Profiles)
	if err != nil {
		return nil, err
	}
	labels := launch.Labels(profiles)
	dir := "."
	if cfg.Out != "" && cfg.Out != "-" {
		dir = filepath.Dir(cfg.Out)
	}
	var targets []runTarget
	for i, p := range profiles {
		spec, err := launch.Build(p, labels[i])
		if err != nil {
			return nil, configf("--profile: %v", err)
		}
		tc := cfg
		tc.Backend, tc.Model, tc.URL = p.Backend, p.Model, spec.BaseURL
		tc.Label = labels[i] + "-" + cfg.scenarioName()
		tc.Profile = p.Knobs()
		tc.Profiles = nil
		logPath := filepath.Join(dir, tc.Label+".log")
		targets = append(targets, runTarget{
			cfg:   tc,
			start: func(ctx context.Context) (*launchedServer, error) { return launchTarget(ctx, deps, tc, spec, logPath) },
		})
	}
	return targets, nil
}

// serverProcess is what a sweep needs of the server it launched
// (*launch.Server): whether and how it exited, its process group, and
// stopping it.
type serverProcess interface {
	launch.ExitWatcher
	// PID is the server's process id, also its process group's.
	PID() int
	// StoppedByUs reports whether Stop ended it (not a crash).
	StoppedByUs() bool
	// Stop stops the process group; its error names members left behind.
	Stop() error
}

// launchedServer is a server run launched for one sweep, and what run
// learned from it before the sweep.
type launchedServer struct {
	proc    serverProcess
	logPath string
	// capacity, calibration, runtime and warnings go into the run's description.
	capacity    *record.Capacity
	calibration *record.Calibration
	runtime     *string
	warnings    []string

	stopOnce  sync.Once
	stopWarns []string
}

// describe copies what was learned from the server into the run document
// before its header is written.
func (ls *launchedServer) describe(run *record.Run) {
	if ls.capacity != nil {
		run.Capacity = ls.capacity
	}
	if ls.runtime != nil && run.Runtime == nil {
		run.Runtime = ls.runtime
	}
	run.Calibration = ls.calibration
	run.Warnings = append(run.Warnings, ls.warnings...)
}

// stop stops the server once; a stop error (processes of its group left
// behind) is returned as a run warning, and said on stderr at once.
// Later calls return the same warnings.
func (ls *launchedServer) stop(stderr io.Writer, label string) []string {
	ls.stopOnce.Do(func() {
		if err := ls.proc.Stop(); err != nil {
			w := "stopping the server: " + err.Error()
			warn(stderr, "run "+label+": "+report.Clean(w))
			ls.stopWarns = []string{w}
		}
	})
	return ls.stopWarns
}

// launchTarget starts the server of one profile (deps.StartServer) and
// readies it for the sweep: health, the model loaded, its log read. When
// readying fails, the server is stopped at once and a Stop error joins the
// launch error, so that processes left behind are never silent.
func launchTarget(ctx context.Context, deps Deps, cfg runConfig, spec *launch.Spec, logPath string) (_ *launchedServer, err error) {
	srv, err := deps.StartServer(spec, logPath)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", cfg.Label, err)
	}
	ok := false
	defer func() {
		if !ok {
			if stopErr := srv.Stop(); stopErr != nil {
				err = errors.Join(err, fmt.Errorf("run %s: stopping the server: %w", cfg.Label, stopErr))
			}
		}
	}()
	if err := srv.WaitHealthy(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("run %s: interrupted while the server started", cfg.Label)
		}
		return nil, fmt.Errorf("run %s: %w", cfg.Label, err)
	}
	if err := preload(ctx, deps, cfg, srv); err != nil {
		return nil, err
	}
	ls := &launchedServer{proc: srv, logPath: srv.LogPath, warnings: append([]string{}, srv.Warnings...)}
	describeLaunch(ctx, cfg, spec, srv, ls)
	ok = true
	return ls, nil
}

// preload makes Ollama load the model (it does on first use) with one
// 1-token request, so the KV cache it logs at load time is in the log
// before the run's header is written. Other servers load at start-up.
func preload(ctx context.Context, deps Deps, cfg runConfig, srv *launch.Server) error {
	if cfg.Backend != backend.Ollama {
		return nil
	}
	c, err := deps.NewClient(backend.Config{Kind: cfg.Backend, BaseURL: cfg.URL, Model: cfg.Model, API: cfg.API, Timeout: cfg.Timeout})
	if err != nil {
		return usagef("run %s: %v", cfg.Label, err)
	}
	var res record.Result
	launch.Guard(c, srv).Do(ctx, &backend.Request{Prompt: "Hello", MaxTokens: 1}, &res)
	if !res.OK() && ctx.Err() == nil {
		return fmt.Errorf("run %s: loading model %s failed: %s; last lines of %s:\n  %s", cfg.Label, cfg.Model, res.Error,
			srv.LogPath, strings.Join(srv.Tail(launch.TailLines), "\n  "))
	}
	return nil
}

// describeLaunch fills what the run records about the launched server:
// the capacity its log reports and the planner's prediction beside it.
// The log is read once (serverlog.ReadFile) for all three.
func describeLaunch(ctx context.Context, cfg runConfig, spec *launch.Spec, srv *launch.Server, ls *launchedServer) {
	lg, err := serverlog.ReadFile(srv.LogPath)
	if err != nil {
		ls.warnings = append(ls.warnings, fmt.Sprintf("server log %s: %v", srv.LogPath, err))
		return
	}
	if capacity := lg.Capacity.Document(filepath.Base(srv.LogPath)); capacity == nil {
		ls.warnings = append(ls.warnings, "no KV-cache capacity line found in "+srv.LogPath)
	} else {
		ls.capacity = capacity
		cal, warns := profileCalibration(ctx, cfg, spec, &lg, srv.LogPath)
		ls.calibration = cal
		ls.warnings = append(ls.warnings, warns...)
	}
	if v := lg.Server.Version(cfg.Backend); v != "" {
		rt := string(cfg.Backend) + " " + v
		ls.runtime = &rt
	}
}

// exitObserver reports, on the level during which it happened, that the
// launched server exited.
type exitObserver struct {
	proc     serverProcess
	logPath  string
	reported bool
}

// LevelStart does nothing; the exit is looked at when the level ends.
func (o *exitObserver) LevelStart(context.Context, load.Level) {}

// LevelEnd returns a level warning the first time the server is seen to
// have exited.
func (o *exitObserver) LevelEnd(context.Context, load.Level) *record.Observations {
	gone, how := o.proc.Exited()
	if !gone || o.reported || o.proc.StoppedByUs() {
		return nil
	}
	o.reported = true
	return &record.Observations{Warnings: []string{fmt.Sprintf("server exited (%s) during this level; its log is %s", how, o.logPath)}}
}

// profileCalibration is the planner's prediction for the profile beside
// the capacity its log reported; it needs the model's spec (plan_model,
// the llama.cpp GGUF, or the blob Ollama loaded) and the device memory
// (the GPU's, else the host's for a CPU-only server).
func profileCalibration(ctx context.Context, cfg runConfig, spec *launch.Spec, lg *serverlog.Log, logPath string) (*record.Calibration, []string) {
	gib, where := deviceGiB(ctx)
	rec, warns, err := launch.Calibrate(spec.Profile, lg, logPath, gib)
	if err != nil {
		return nil, append(warns, "no calibration record: "+err.Error())
	}
	rec.Model, rec.Source = cfg.Model, rec.Source+"; memory: "+where
	return rec, warns
}

// deviceGiB is the memory the planner is given: the GPU's total when one
// can be read, else the host's (a CPU-only server keeps its KV cache in
// RAM). llama.cpp's and Ollama's predicted cells do not depend on it.
func deviceGiB(ctx context.Context) (float64, string) {
	if g, _ := telemetry.OpenGPU(ctx, telemetry.GPUConfig{}); g != nil {
		defer g.Close()
		if d, ok := g.Device(); ok && d.TotalMiB > 0 {
			return d.TotalMiB / 1024, "GPU " + d.Name
		}
	}
	if kb := hostMemKiB(); kb > 0 {
		return float64(kb) / (1 << 20), "host RAM (no GPU found)"
	}
	return 1, "unknown (no GPU found, no /proc/meminfo)"
}

// hostMemKiB reads MemTotal from /proc/meminfo; 0 when unknown.
func hostMemKiB() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
