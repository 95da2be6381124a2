package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
)

const simSynopsis = `sim <subcommand> [flags]

Simulates an LLM server on a GPU you do not own (package sim: the
server's scheduler, its KV cache and a roofline of the GPU).

Subcommands:`

// simCommands are the subcommands of "servebench sim", in help order. A
// new one (sim fit, ...) is one more case here.
func (d Deps) simCommands() []command {
	return []command{
		{"serve", "run the simulator in real time behind a real server's HTTP API", runSimServe},
		{"fit", "fit the simulator to measured sweeps and write a sim-profile.json", runSimFit},
	}
}

// runSim dispatches "servebench sim <subcommand>".
func (d Deps) runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := d.simCommands()
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: servebench %s\n", simSynopsis)
		for _, c := range cmds {
			fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
		}
		fmt.Fprintln(w, "\nRun 'servebench sim <subcommand> --help' for its flags.")
	}
	if len(args) == 0 {
		usage(stderr)
		return usagef("sim: no subcommand given (want one of: %s)", commandNames(cmds))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	}
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		return unknownCommand("sim", args[0], cmds)
	}
	return cmds[i].run(ctx, args[1:], stdout, stderr)
}

func commandNames(cmds []command) string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

const simServeSynopsis = `sim serve --as vllm|sglang|llamacpp|tgi|ollama|openai --gpu G --model M [flags]

Runs the simulator in real time behind the HTTP API of the server --as
names: its streaming endpoints (with usage and timings), /tokenize,
/v1/models, its identity endpoints and /metrics with its own metric
families, driven by the simulated KV cache, queue and preemptions. Point
'servebench run --backend <same> --url <printed URL> --model <model>' (or
any client) at it. Versions it reports carry "+servebench.sim". Faults
(429, 5xx, cut streams, stalls, a slow first token) are injected with the
--fault-* flags, drawn from --seed. Ctrl-C stops it.

Flags`

// simServeFlags are the flags of sim serve: the engine's (simEngineFlags,
// shared with run --backend sim) and the server's own.
type simServeFlags struct {
	engine                       simEngineFlags
	as, gpu, model, served, addr string
	noMetrics                    bool
	seed                         uint64
	grace                        time.Duration
	faults                       simserve.Faults
	// Fitted profile (sim fit).
	profile, profileRun string
}

func (f *simServeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.as, "as", "", "the server whose HTTP API to speak: "+backend.Or(simserve.Kinds)+" (required)")
	fs.StringVar(&f.gpu, "gpu", "", "GPU from the catalog, e.g. \"RTX 4090\", \"H100\" (required)")
	fs.StringVar(&f.model, "model", "", modelFlagUsage+" (required)")
	f.engine.register(fs, "default: --as's; vllm for tgi and openai")
	fs.StringVar(&f.served, "served-model-name", "", "model name the server answers to and lists (default: --model as given)")
	fs.StringVar(&f.addr, "addr", "", "listen address (default 127.0.0.1 and the server's usual port: "+usualPorts()+"; port 0 picks a free one)")
	fs.BoolVar(&f.noMetrics, "no-metrics", false, "answer /metrics as a server with metrics off (llama.cpp: 501, others: 404)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the output text and the fault draws")
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "on Ctrl-C, how long streams in flight may take to finish")
	fs.Float64Var(&f.faults.TooManyRequests, "fault-429", 0, "fraction of generation requests answered 429 Too Many Requests")
	fs.Float64Var(&f.faults.ServerError, "fault-5xx", 0, "fraction answered 500 Internal Server Error")
	fs.Float64Var(&f.faults.CutStream, "fault-cut", 0, "fraction whose connection is dropped mid-stream")
	fs.IntVar(&f.faults.CutAfter, "fault-cut-after", 1, "tokens sent before a cut")
	fs.Float64Var(&f.faults.Stall, "fault-stall", 0, "fraction whose stream goes silent (open, no end) until the client gives up")
	fs.IntVar(&f.faults.StallAfter, "fault-stall-after", 1, "tokens sent before a stall")
	fs.Float64Var(&f.faults.SlowFirstToken, "fault-slow-first-token", 0, "fraction held --fault-first-token-delay before reaching the scheduler")
	fs.DurationVar(&f.faults.FirstTokenDelay, "fault-first-token-delay", 0, "how long a slow first token is held")
	fs.StringVar(&f.profile, "sim-profile", "", "apply the fit in `FILE` (a sim-profile.json from sim fit): its efficiencies, overheads and chosen settings replace the defaults")
	fs.StringVar(&f.profileRun, "sim-profile-run", "", "with --sim-profile: the `LABEL` of the fitted run to apply (default: the file's only run)")
}

// defaultPort is the port a simulated server of family k listens on: its
// family's usual one (backend.Descriptor.Ports), else that of the family
// whose engine it runs (a generic OpenAI endpoint: vLLM's 8000).
func defaultPort(k backend.Kind) string {
	p := k.Port()
	if p == 0 {
		p = simserve.Engine(k).Port()
	}
	return strconv.Itoa(p)
}

// usualPorts lists defaultPort's ports for help, families that share one
// together: "vllm/openai 8000, sglang 30000, llamacpp/tgi 8080, ollama 11434".
func usualPorts() string {
	var ports []string
	kinds := map[string][]string{}
	for _, k := range simserve.Kinds {
		p := defaultPort(k)
		if kinds[p] == nil {
			ports = append(ports, p)
		}
		kinds[p] = append(kinds[p], string(k))
	}
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = strings.Join(kinds[p], "/") + " " + p
	}
	return strings.Join(parts, ", ")
}

// options turns the flags into simserve.Options; errors are usage errors
// naming the flag.
func (f *simServeFlags) options() (simserve.Options, error) {
	var o simserve.Options
	if f.as == "" {
		return o, usagef("sim serve: --as is required (%s)", backend.Or(simserve.Kinds))
	}
	as, err := simserve.ParseKind(f.as)
	if err != nil {
		return o, usagef("sim serve: --as %q: want one of %s", f.as, backend.Join(simserve.Kinds))
	}
	if f.gpu == "" {
		return o, usagef("sim serve: --gpu is required (a GPU from the catalog, e.g. \"RTX 4090\")")
	}
	if f.model == "" {
		return o, usagef("sim serve: --model is required (e.g. qwen2.5-7b)")
	}
	spec, err := f.engine.spec("sim serve", f.gpu, f.model, simserve.Engine(as))
	if err != nil {
		return o, err
	}
	o = simserve.Options{As: as, Spec: spec, ServedModelName: f.served, Seed: f.seed, Faults: f.faults, NoMetrics: f.noMetrics}
	if f.profileRun != "" && f.profile == "" {
		return o, usagef("sim serve: --sim-profile-run needs --sim-profile")
	}
	if f.profile != "" {
		fam, flag := simserve.Engine(as), "--as"
		if spec.Backend != "" && spec.Backend != fam {
			fam, flag = spec.Backend, "--scheduler"
		}
		if o.Fit, err = loadSimProfile("sim serve", f.profile, f.profileRun, fam, flag); err != nil {
			return o, err
		}
	}
	return o, nil
}

// loadSimProfile reads the sim-profile.json at path (a 'sim fit'
// output, at most filecap.Config), picks its run label ("" = its only
// run), checks that the run was fitted to fam, the family simulated
// (flag names the flag that chooses it), and only then that it has what
// that family needs; every failure is a usage error naming
// --sim-profile or --sim-profile-run. cmd prefixes the message ("sim
// serve"). fam "" takes the run's own family (a model-less profile is
// the whole server).
func loadSimProfile(cmd, path, label string, fam backend.Kind, flag string) (*sim.RunProfile, error) {
	data, err := filecap.ReadFile(path, filecap.Config, "a sim profile")
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, usageOf(cmd, "--sim-profile %s: cannot read: %s", path, msg)
	}
	p, err := sim.ReadProfile(bytes.NewReader(data))
	if err != nil {
		return nil, usageOf(cmd, "--sim-profile %s: %v", path, err)
	}
	rp, err := p.Select(label)
	if err != nil {
		return nil, usageOf(cmd, "--sim-profile-run: %s: %v", path, err)
	}
	if fam == "" {
		fam = rp.Backend
	}
	if rp.Backend != fam {
		return nil, usageOf(cmd, "--sim-profile: run %q was fitted to %s, not the %s being simulated (%s %s)", rp.Label, rp.Backend, fam, flag, rp.Backend)
	}
	if err := rp.Check(); err != nil {
		return nil, usageOf(cmd, "--sim-profile %s: %v", path, err)
	}
	return rp, nil
}

// simServeError turns an error of simserve.New into one line naming the
// flag at fault: a usage error (exit 2) for bad options, an unknown GPU
// or model, or a model that does not fit.
func simServeError(err error) error {
	if errors.Is(err, simserve.ErrBadOptions) {
		return usagef("sim serve: %v", err)
	}
	return simSpecError("sim serve", err)
}

func runSimServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sim serve", simServeSynopsis, stdout)
	var f simServeFlags
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("sim serve: unexpected argument %q", fs.Arg(0))
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	srv, err := simserve.New(opts)
	if err != nil {
		return simServeError(err)
	}
	addr := f.addr
	if addr == "" {
		addr = "127.0.0.1:" + defaultPort(opts.As)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return fmt.Errorf("sim serve: --addr %s: %v", addr, err)
	}
	fmt.Fprintf(stdout, "sim serve: simulated %s API on http://%s (model %q)\n", opts.As, ln.Addr(), srv.ModelName())
	fmt.Fprintf(stdout, "sim serve: %s\n", describeSim(srv.Config()))
	if opts.Fit != nil {
		p := srv.Config().Params
		fmt.Fprintf(stdout, "sim serve: fit %q of %s applied: memory efficiency %.3f, compute efficiency %.3f, step overhead %v, sequence cost %v, request latency %v\n",
			opts.Fit.Label, f.profile, p.MemoryEfficiency, p.ComputeEfficiency, p.StepOverhead, p.SeqCost, p.RequestLatency)
	}
	fmt.Fprintln(stdout, "sim serve: Ctrl-C stops it")
	err = srv.Serve(ctx, ln, f.grace)
	s := srv.Summary()
	fmt.Fprintf(stderr, "sim serve: served %d requests (%d finished, %d aborted), %d tokens, %d preemptions; tokens written behind schedule: p50 %v, p99 %v, max %v; paused %v (the machine fell behind)\n",
		s.Requests, s.Finished, s.Aborted, s.GeneratedTokens, s.Preemptions, s.LatenessP50, s.LatenessP99, s.LatenessMax.Round(time.Microsecond), s.Paused.Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("sim serve: %v", err)
	}
	return nil
}

// describeSim is one line on the simulated server.
func describeSim(c sim.Config) string {
	s := c.Server
	kv := fmt.Sprintf("%d KV blocks of %d tokens, max_num_seqs %d, max_num_batched_tokens %d, max_model_len %d",
		s.KVBlocks, s.BlockSize, s.MaxNumSeqs, s.MaxNumBatchedTokens, s.MaxModelLen)
	if c.Backend == backend.LlamaCpp || c.Backend == backend.Ollama {
		kv = fmt.Sprintf("%d slots of %d cells, n_batch %d, n_ubatch %d", s.Slots, s.SlotContext, s.NBatch, s.NUBatch)
	}
	return fmt.Sprintf("%s scheduler, %s on %s (%.0f GB/s, %.0f TFLOP/s fp16): %s", c.Backend, c.Model.Name, c.GPU.Name,
		c.GPU.BandwidthBytesPerS/1e9, c.GPU.PeakFLOPS/1e12, kv)
}
