package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/plan"
)

// Spec is a profile resolved for one launch: the exact argument list and
// environment the server gets, where it listens and how long to wait.
type Spec struct {
	// Label names the run and the log file.
	Label   string
	Backend backend.Kind
	// Model is what requests ask for.
	Model string
	// Argv is the binary and its arguments, run without a shell.
	Argv []string
	// Env holds the variables the profile and its knobs set (KEY=VALUE,
	// sorted); the server also inherits servebench's environment minus
	// Unset.
	Env []string
	// Unset names inherited variables removed because a knob controls
	// them and the profile did not set them.
	Unset []string
	// Port is the loopback port; BaseURL is http://127.0.0.1:Port.
	Port    int
	BaseURL string
	// HealthURL answers 200 once the server is ready.
	HealthURL     string
	StartDeadline time.Duration
	StopGrace     time.Duration
	// Profile is the profile the spec was built from.
	Profile *Profile
}

// launcher is how launch starts a server of one family: its start
// deadline, command and knob mapping (where it listens and what answers
// once it is ready are its backend.Descriptor's Ports and Health).
type launcher struct {
	deadline time.Duration
	command  func(model string) []string
	mapKnobs func(p *Profile, port int) (args []string, env map[string]string, err error)
	// controlled lists the inherited variables the knobs own, by prefix.
	controlled []string
	// planKnobs maps the profile's knobs that size the KV cache to the
	// planner's inputs (calibration.go); nil for no capacity model.
	planKnobs func(p *Profile, in *plan.Inputs)
}

// launchers are the families launch can start, one table keyed by Kind.
var launchers = map[backend.Kind]launcher{
	backend.VLLM: {
		deadline:  15 * time.Minute,
		command:   func(m string) []string { return []string{"vllm", "serve", m} },
		mapKnobs:  vllmArgs,
		planKnobs: vllmPlanKnobs,
	},
	backend.LlamaCpp: {
		deadline:   5 * time.Minute,
		command:    func(m string) []string { return []string{"llama-server", "-m", m} },
		mapKnobs:   llamacppArgs,
		controlled: []string{"LLAMA_ARG_"},
		planKnobs:  slotPlanKnobs,
	},
	backend.Ollama: {
		deadline:  2 * time.Minute,
		command:   func(string) []string { return []string{"ollama", "serve"} },
		mapKnobs:  ollamaEnv,
		planKnobs: slotPlanKnobs,
		controlled: []string{"OLLAMA_HOST", "OLLAMA_NUM_PARALLEL", "OLLAMA_KV_CACHE_TYPE",
			"OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH", "OLLAMA_MODELS"},
	},
}

// launchable lists the families launch can start, in help order:
// "vllm, llamacpp or ollama".
func launchable() string {
	var ks []backend.Kind
	for _, k := range backend.Kinds {
		if _, ok := launchers[k]; ok {
			ks = append(ks, k)
		}
	}
	return backend.Or(ks)
}

// DefaultStopGrace is how long Stop waits between SIGTERM and SIGKILL.
const DefaultStopGrace = 10 * time.Second

// Build resolves p into the Spec of one launch under label: it picks a
// free port when p.Port is 0, maps the knobs to the family's flags or
// environment, and fails on a knob the family does not have or one that
// the command or env already sets by hand.
func Build(p *Profile, label string) (*Spec, error) {
	fam, ok := launchers[p.Backend]
	if !ok {
		return nil, fmt.Errorf("profile %s: backend %q cannot be launched", p.Path, p.Backend)
	}
	port, err := resolvePort(p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Path, err)
	}
	args, env, err := fam.mapKnobs(p, port)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Path, err)
	}
	argv := p.Command
	if len(argv) == 0 {
		argv = fam.command(p.Model)
	}
	if err := checkConflicts(argv, p.Env, args, env); err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Path, err)
	}
	s := &Spec{
		Label: label, Backend: p.Backend, Model: p.Model,
		Argv:          append(append([]string{}, argv...), args...),
		Port:          port,
		BaseURL:       "http://127.0.0.1:" + strconv.Itoa(port),
		StartDeadline: time.Duration(p.StartDeadline),
		StopGrace:     time.Duration(p.StopGrace),
		Profile:       p,
	}
	if s.StartDeadline == 0 {
		s.StartDeadline = fam.deadline
	}
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	s.HealthURL = p.HealthURL
	if s.HealthURL == "" {
		s.HealthURL = s.BaseURL + p.Backend.Describe().Health
	}
	s.Env, s.Unset = mergeEnv(p.Env, env, fam.controlled, os.Environ())
	return s, nil
}

func resolvePort(p *Profile) (int, error) {
	if p.Port == nil {
		return p.Backend.Port(), nil
	}
	if *p.Port != 0 {
		return *p.Port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("port: picking a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// intArg appends flag and v when v is set.
func intArg(args []string, flag string, v *int) []string {
	if v == nil {
		return args
	}
	return append(args, flag, strconv.Itoa(*v))
}

// unsupported returns an error for the first knob in knobs that is set.
func unsupported(fam backend.Kind, knobs []knob) error {
	for _, k := range knobs {
		if k.set {
			msg := fmt.Sprintf("%s is not a %s setting", k.name, fam)
			if k.hint != "" {
				msg += " (" + k.hint + ")"
			}
			return errors.New(msg)
		}
	}
	return nil
}

type knob struct {
	name string
	set  bool
	hint string
}

// vllmArgs maps the knobs to `vllm serve` flags:
//
//	max_model_len          --max-model-len N
//	max_num_seqs           --max-num-seqs N
//	max_num_batched_tokens --max-num-batched-tokens N
//	gpu_memory_utilization --gpu-memory-utilization F
//	cuda_graphs: false     --enforce-eager (true: nothing, the default)
//	prefix_caching         --enable-prefix-caching / --no-enable-prefix-caching
//	limit_mm_per_prompt    --limit-mm-per-prompt {"image":1,"video":0} (one argument, JSON)
//	kv_cache_dtype         --kv-cache-dtype D
//	tensor_parallel_size   --tensor-parallel-size N
//	port                   --port P
func vllmArgs(p *Profile, port int) ([]string, map[string]string, error) {
	if err := unsupported(backend.VLLM, []knob{
		{"parallel", p.Parallel != nil, "use max_num_seqs"},
		{"context_length", p.ContextLength != nil, "use max_model_len"},
		{"flash_attention", p.FlashAttention != nil, "set VLLM_ATTENTION_BACKEND in env"},
		{"models_dir", p.ModelsDir != "", "set HF_HOME in env"},
	}); err != nil {
		return nil, nil, err
	}
	var a []string
	a = append(a, "--port", strconv.Itoa(port))
	a = intArg(a, "--max-model-len", p.MaxModelLen)
	a = intArg(a, "--max-num-seqs", p.MaxNumSeqs)
	a = intArg(a, "--max-num-batched-tokens", p.MaxNumBatchedTokens)
	if u := p.GPUMemoryUtilization; u != nil {
		a = append(a, "--gpu-memory-utilization", strconv.FormatFloat(*u, 'g', -1, 64))
	}
	if g := p.CUDAGraphs; g != nil && !*g {
		a = append(a, "--enforce-eager")
	}
	if pc := p.PrefixCaching; pc != nil {
		if *pc {
			a = append(a, "--enable-prefix-caching")
		} else {
			a = append(a, "--no-enable-prefix-caching")
		}
	}
	if p.LimitMMPerPrompt != nil {
		// encoding/json sorts map keys, so the argument is stable.
		b, err := json.Marshal(p.LimitMMPerPrompt)
		if err != nil {
			return nil, nil, fmt.Errorf("limit_mm_per_prompt: %v", err)
		}
		a = append(a, "--limit-mm-per-prompt", string(b))
	}
	if d := p.KVCacheDtype; d != nil {
		a = append(a, "--kv-cache-dtype", *d)
	}
	a = intArg(a, "--tensor-parallel-size", p.TensorParallelSize)
	return a, nil, nil
}

// llamacppArgs maps the knobs to `llama-server` flags:
//
//	context_length   -c N (total context, shared by the -np slots)
//	parallel         -np N
//	flash_attention  -fa on / -fa off (llama.cpp b6325 and later take a value)
//	kv_cache_dtype   -ctk D -ctv D
//	(always)         --metrics, --port P
func llamacppArgs(p *Profile, port int) ([]string, map[string]string, error) {
	if err := unsupported(backend.LlamaCpp, []knob{
		{"max_model_len", p.MaxModelLen != nil, "use context_length (-c)"},
		{"max_num_seqs", p.MaxNumSeqs != nil, "use parallel (-np)"},
		{"max_num_batched_tokens", p.MaxNumBatchedTokens != nil, "pass -b in command"},
		{"gpu_memory_utilization", p.GPUMemoryUtilization != nil, ""},
		{"cuda_graphs", p.CUDAGraphs != nil, ""},
		{"prefix_caching", p.PrefixCaching != nil, "pass --cache-reuse in command"},
		{"limit_mm_per_prompt", p.LimitMMPerPrompt != nil, ""},
		{"models_dir", p.ModelsDir != "", "give the GGUF path as model"},
		{"tensor_parallel_size", p.TensorParallelSize != nil, "llama-server splits layers over GPUs: pass --split-mode in command"},
	}); err != nil {
		return nil, nil, err
	}
	var a []string
	a = intArg(a, "-c", p.ContextLength)
	a = intArg(a, "-np", p.Parallel)
	if fa := p.FlashAttention; fa != nil {
		a = append(a, "-fa", onOff(*fa))
	}
	if d := p.KVCacheDtype; d != nil {
		a = append(a, "-ctk", *d, "-ctv", *d)
	}
	a = append(a, "--metrics", "--port", strconv.Itoa(port))
	return a, nil, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ollamaEnv maps the knobs to `ollama serve` environment variables:
//
//	parallel         OLLAMA_NUM_PARALLEL=N
//	kv_cache_dtype   OLLAMA_KV_CACHE_TYPE=D (Ollama needs flash attention for q8_0/q4_0)
//	flash_attention  OLLAMA_FLASH_ATTENTION=1 / 0
//	context_length   OLLAMA_CONTEXT_LENGTH=N
//	models_dir       OLLAMA_MODELS=DIR
//	(always)         OLLAMA_HOST=127.0.0.1:P
func ollamaEnv(p *Profile, port int) ([]string, map[string]string, error) {
	if err := unsupported(backend.Ollama, []knob{
		{"max_model_len", p.MaxModelLen != nil, "use context_length"},
		{"max_num_seqs", p.MaxNumSeqs != nil, "use parallel"},
		{"max_num_batched_tokens", p.MaxNumBatchedTokens != nil, ""},
		{"gpu_memory_utilization", p.GPUMemoryUtilization != nil, ""},
		{"cuda_graphs", p.CUDAGraphs != nil, ""},
		{"prefix_caching", p.PrefixCaching != nil, ""},
		{"limit_mm_per_prompt", p.LimitMMPerPrompt != nil, ""},
		{"tensor_parallel_size", p.TensorParallelSize != nil, "Ollama spreads layers over the GPUs it sees"},
	}); err != nil {
		return nil, nil, err
	}
	env := map[string]string{"OLLAMA_HOST": "127.0.0.1:" + strconv.Itoa(port)}
	if v := p.Parallel; v != nil {
		env["OLLAMA_NUM_PARALLEL"] = strconv.Itoa(*v)
	}
	if d := p.KVCacheDtype; d != nil {
		env["OLLAMA_KV_CACHE_TYPE"] = *d
	}
	if fa := p.FlashAttention; fa != nil {
		env["OLLAMA_FLASH_ATTENTION"] = map[bool]string{true: "1", false: "0"}[*fa]
	}
	if v := p.ContextLength; v != nil {
		env["OLLAMA_CONTEXT_LENGTH"] = strconv.Itoa(*v)
	}
	if p.ModelsDir != "" {
		env["OLLAMA_MODELS"] = p.ModelsDir
	}
	return nil, env, nil
}

// flagAliases lists, for a flag the mapping emits, every spelling a user
// could have written in command for the same setting.
var flagAliases = map[string][]string{
	"-c":                         {"-c", "--ctx-size"},
	"-np":                        {"-np", "--parallel"},
	"-fa":                        {"-fa", "--flash-attn"},
	"-ctk":                       {"-ctk", "--cache-type-k"},
	"-ctv":                       {"-ctv", "--cache-type-v"},
	"--tensor-parallel-size":     {"--tensor-parallel-size", "-tp"},
	"--enable-prefix-caching":    {"--enable-prefix-caching", "--no-enable-prefix-caching"},
	"--no-enable-prefix-caching": {"--enable-prefix-caching", "--no-enable-prefix-caching"},
}

// checkConflicts fails when command or env already set what a knob maps
// to, so the launched server never gets a setting twice.
func checkConflicts(command []string, userEnv map[string]string, args []string, env map[string]string) error {
	for _, f := range args {
		if !strings.HasPrefix(f, "-") || isNumber(f) {
			continue
		}
		spellings := flagAliases[f]
		if spellings == nil {
			spellings = []string{f}
		}
		for _, c := range command[1:] {
			for _, s := range spellings {
				if c == s || strings.HasPrefix(c, s+"=") {
					return fmt.Errorf("command: %s is set by servebench from the profile; remove it from command and use the profile key", c)
				}
			}
		}
	}
	for k := range env {
		if _, dup := userEnv[k]; dup {
			return fmt.Errorf("env: %s is set by servebench from the profile; remove it from env and use the profile key", k)
		}
	}
	return nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// mergeEnv returns the variables to set (user env and knob env, sorted
// KEY=VALUE) and the inherited variables to remove: those the family's
// knobs control that neither the profile nor the knobs set.
func mergeEnv(user, knobs map[string]string, controlled, inherited []string) (set, unset []string) {
	all := map[string]string{}
	for k, v := range user {
		all[k] = v
	}
	for k, v := range knobs {
		all[k] = v
	}
	for k, v := range all {
		set = append(set, k+"="+v)
	}
	sort.Strings(set)
	for _, kv := range inherited {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := all[k]; ok {
			continue
		}
		for _, c := range controlled {
			if k == c || (strings.HasSuffix(c, "_") && strings.HasPrefix(k, c)) {
				unset = append(unset, k)
				break
			}
		}
	}
	sort.Strings(unset)
	return set, unset
}

// Environ is the complete environment the server gets: inherited minus
// Unset, then Env.
func (s *Spec) Environ(inherited []string) []string {
	drop := map[string]bool{}
	for _, k := range s.Unset {
		drop[k] = true
	}
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var out []string
	for _, kv := range inherited {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, s.Env...)
}
