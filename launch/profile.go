// Package launch starts, watches and stops the LLM server under test from a
// launch profile: a YAML or JSON file that names the server family, its
// command (an argument list, never a shell string), its environment, its
// port and health URL, and the knobs of the reference server profile
// (max_model_len, max_num_seqs, kv_cache_dtype, parallel, ...), which launch
// maps to each server's own flags or environment variables.
//
// A launched server runs in its own process group with its stdout and stderr
// captured to a log file, started by a watchdog process that is its
// parent and (on Linux) a child subreaper: Stop, or servebench's death,
// has the watchdog send SIGTERM to the group and to every process the
// server started outside it, and SIGKILL after a grace period, so no
// process of the server's tree is left behind (watchdog.go).
package launch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/internal/limits"
	"github.com/servebench/servebench/record"
)

// Profile is one launch profile as read from a file. Pointer fields are
// optional: nil means "not set", so the server's own default applies and
// nothing is passed for it.
type Profile struct {
	// Label names the run in reports and the log file (<label>.log); by
	// default it is derived from the backend and the knobs, like the
	// reference labels ("llamacpp-q8kv", "ollama-np4").
	Label string `yaml:"label" json:"label"`
	// Backend is the server family: vllm, llamacpp or ollama.
	Backend backend.Kind `yaml:"backend" json:"backend"`
	// Command is the binary and its arguments. Empty means the family's
	// default: "vllm serve <model>", "llama-server -m <model>",
	// "ollama serve". Knob flags are appended after it.
	Command []string `yaml:"command" json:"command"`
	// Model is the model the server serves and the run requests: a Hugging
	// Face id (vLLM), a GGUF path (llama.cpp) or an Ollama model name.
	Model string `yaml:"model" json:"model"`
	// Env holds extra environment variables for the server, on top of
	// servebench's own environment.
	Env map[string]string `yaml:"env" json:"env"`
	// Port is the loopback port the server listens on; nil means the
	// family's default (vLLM 8000, llama.cpp 8080, Ollama 11434) and 0
	// means a free port picked at launch.
	Port *int `yaml:"port" json:"port"`
	// HealthURL is polled until it answers 200; empty means the family's
	// default (/health for vLLM and llama.cpp, /api/version for Ollama).
	HealthURL string `yaml:"health_url" json:"health_url"`
	// StartDeadline bounds the wait for health, e.g. "90s"; zero means the
	// family's default (vLLM 15m, llama.cpp 5m, Ollama 2m).
	StartDeadline Duration `yaml:"start_deadline" json:"start_deadline"`
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL;
	// zero means 10s.
	StopGrace Duration `yaml:"stop_grace" json:"stop_grace"`
	// ModelsDir is Ollama's model store (OLLAMA_MODELS).
	ModelsDir string `yaml:"models_dir" json:"models_dir"`
	// PlanModel is the model the planner predicts the capacity of, for the
	// report's calibration record: a preset name, a config.json (or its
	// folder) or a GGUF file. Empty means the GGUF servebench can find:
	// the llama.cpp model file, or the blob Ollama's log says it loaded.
	PlanModel string `yaml:"plan_model" json:"plan_model"`

	// The reference profile knobs (record.Profile); see the mapping
	// table in mapping.go for what each becomes per server family.
	MaxModelLen          *int           `yaml:"max_model_len" json:"max_model_len"`
	MaxNumSeqs           *int           `yaml:"max_num_seqs" json:"max_num_seqs"`
	MaxNumBatchedTokens  *int           `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"`
	GPUMemoryUtilization *float64       `yaml:"gpu_memory_utilization" json:"gpu_memory_utilization"`
	CUDAGraphs           *bool          `yaml:"cuda_graphs" json:"cuda_graphs"`
	PrefixCaching        *bool          `yaml:"prefix_caching" json:"prefix_caching"`
	LimitMMPerPrompt     map[string]int `yaml:"limit_mm_per_prompt" json:"limit_mm_per_prompt"`
	KVCacheDtype         *string        `yaml:"kv_cache_dtype" json:"kv_cache_dtype"`
	Parallel             *int           `yaml:"parallel" json:"parallel"`
	ContextLength        *int           `yaml:"context_length" json:"context_length"`
	FlashAttention       *bool          `yaml:"flash_attention" json:"flash_attention"`
	// TensorParallelSize splits a vLLM model over that many GPUs.
	TensorParallelSize *int `yaml:"tensor_parallel_size" json:"tensor_parallel_size"`

	// Path is the file the profile was read from ("" when built in code).
	Path string `yaml:"-" json:"-"`

	// shownCommand and shownEnv are what launch --dry-run prints for the
	// command elements (by index) and env values (by name) that took a
	// secret-looking variable's value; secretValues are those values.
	shownCommand map[int]string
	shownEnv     map[string]string
	secretValues []string
}

// Duration is a time.Duration read from a profile as a Go duration string
// ("90s", "2m") or a number of seconds.
type Duration time.Duration

// UnmarshalYAML reads a duration string or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like \"90s\"", n.Line)
	}
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = v
	return nil
}

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func parseDuration(s string) (Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. \"90s\" or \"2m\")", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return Duration(v), nil
}

// Load reads one profile from path: JSON when the name ends in .json,
// YAML otherwise. Unknown keys are an error naming the key and the file.
// Relative paths in command[0] (when it contains a slash) and models_dir
// are taken relative to the profile's directory and made absolute;
// ${VAR} and $VAR in command, env values and models_dir are replaced from
// servebench's environment (an unset variable is an error), and $$ is a
// literal $ (expand.go).
//
// A profile file is at most filecap.Config (16 MiB); a larger one is an
// error naming the file.
func Load(path string) (*Profile, error) {
	data, err := filecap.ReadFile(path, filecap.Config, "a launch profile")
	if filecap.IsTooLarge(err) {
		return nil, fmt.Errorf("profile %s: %v", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	p, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	p.resolvePaths(filepath.Dir(path))
	return p, nil
}

// Parse decodes and checks a profile; name is the file name used in error
// messages and to choose JSON (".json") or YAML.
func Parse(name string, data []byte) (*Profile, error) {
	p := &Profile{Path: name}
	var err error
	if strings.EqualFold(filepath.Ext(name), ".json") {
		err = decodeJSON(data, p)
	} else {
		err = decodeYAML(data, p)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", name, err)
	}
	if err := p.expandEnv(); err != nil {
		return nil, fmt.Errorf("profile %s: %v", name, err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("profile %s: %v", name, err)
	}
	return p, nil
}

var yamlUnknown = regexp.MustCompile(`line (\d+): field (\S+) not found in type`)

func decodeYAML(data []byte, p *Profile) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(p)
	if errors.Is(err, io.EOF) {
		return errors.New("empty profile")
	}
	if err != nil {
		if m := yamlUnknown.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("line %s: unknown key %q", m[1], m[2])
		}
		if te, ok := yamlTypeError(data, err); ok {
			return te
		}
		return errors.New(oneLine(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document (one profile per file)")
	}
	return nil
}

var jsonUnknown = regexp.MustCompile(`json: unknown field "(.*)"`)

func decodeJSON(data []byte, p *Profile) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty profile")
		}
		if m := jsonUnknown.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("unknown key %q", m[1])
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("JSON syntax error at byte %d: %v", se.Offset, se)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %s is not %s", te.Field, te.Value, kindWords(te.Type.Kind()))
		}
		return errors.New(oneLine(err.Error()))
	}
	// Anything but blanks after the object is an error: Decoder.More
	// passes a stray '}' or ']'.
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return fmt.Errorf("trailing data after the profile object at byte %d", off)
	}
	return nil
}

// kindWords names what a value of kind k must be, for an error that
// names the field rather than the Go type.
func kindWords(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of the right type"
}

// yamlType is a YAML decoding error for a value of the wrong type or out
// of range: its line, the value's tag and text, and the Go type.
var yamlType = regexp.MustCompile("line (\\d+): cannot unmarshal !!(\\w+) `([^`]*)` into (\\S+)")

// yamlTypeError rewrites a yamlType error as "line N: key: value is not
// …", reading the key from the line itself; ok false when err is not one.
func yamlTypeError(data []byte, err error) (error, bool) {
	m := yamlType.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	n, _ := strconv.Atoi(m[1])
	key := "value"
	lines := bytes.Split(data, []byte("\n"))
	if n >= 1 && n <= len(lines) {
		if k, _, ok := bytes.Cut(lines[n-1], []byte(":")); ok {
			key = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(k)), "- "))
		}
	}
	want := "of the right type"
	switch {
	case strings.HasPrefix(m[4], "int") || strings.HasPrefix(m[4], "uint"):
		want = "an integer in range"
	case strings.HasPrefix(m[4], "float"):
		want = "a number"
	case m[4] == "bool":
		want = "true or false"
	case m[4] == "string":
		want = "a string"
	}
	return fmt.Errorf("line %d: %s: %s is not %s", n, key, m[3], want), true
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// expandEnv replaces ${VAR} and $VAR in command, env values and
// models_dir, and $$ with $ (expand). It keeps what launch --dry-run
// shows of the strings that took a secret-looking variable's value
// (${OPENAI_API_KEY} under any name shows as <redacted>), and those
// values, so that log lines quoting them are redacted too.
func (p *Profile) expandEnv() error {
	var firstErr error
	do := func(where, s string, shown func(string)) string {
		if firstErr != nil {
			return s
		}
		e, err := expand(s, os.LookupEnv)
		if err != nil {
			firstErr = fmt.Errorf("%s: %v", where, err)
			return s
		}
		if len(e.Secrets) > 0 {
			p.secretValues = append(p.secretValues, e.Secrets...)
			shown(e.Shown)
		}
		return e.Value
	}
	for i, a := range p.Command {
		p.Command[i] = do(fmt.Sprintf("command[%d]", i), a, func(sh string) {
			if p.shownCommand == nil {
				p.shownCommand = map[int]string{}
			}
			p.shownCommand[i] = sh
		})
	}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error is the same on every run
	for _, k := range keys {
		p.Env[k] = do("env: "+k, p.Env[k], func(sh string) {
			if p.shownEnv == nil {
				p.shownEnv = map[string]string{}
			}
			p.shownEnv[k] = sh
		})
	}
	p.ModelsDir = do("models_dir", p.ModelsDir, func(string) {})
	return firstErr
}

// resolvePaths takes the profile's relative paths from its folder dir: a
// command[0] with a slash ("./x.sh", "bin/server") and models_dir become
// absolute paths, so that the program run is the profile's own file and
// never one that exec would look up in $PATH ("./x.sh" in a profile of
// the current folder was joined to "x.sh", a bare name). A command[0]
// without a slash ("vllm") is a program on $PATH, as in a shell.
func (p *Profile) resolvePaths(dir string) {
	abs := func(rel string) string {
		if a, err := filepath.Abs(filepath.Join(dir, rel)); err == nil {
			return a
		}
		return "." + string(filepath.Separator) + filepath.Join(dir, rel)
	}
	if len(p.Command) > 0 {
		c := p.Command[0]
		if strings.ContainsRune(c, '/') && !filepath.IsAbs(c) {
			p.Command[0] = abs(c)
		}
	}
	if p.ModelsDir != "" && !filepath.IsAbs(p.ModelsDir) {
		p.ModelsDir = abs(p.ModelsDir)
	}
	if pm := p.PlanModel; pm != "" && !filepath.IsAbs(pm) {
		if _, err := os.Stat(filepath.Join(dir, pm)); err == nil {
			p.PlanModel = filepath.Join(dir, pm)
		}
	}
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// check validates the fields that do not depend on the server family's
// flag mapping (that is Build's job).
func (p *Profile) check() error {
	if _, ok := launchers[p.Backend]; !ok {
		if p.Backend == "" {
			return fmt.Errorf("backend: missing (want %s)", launchable())
		}
		return fmt.Errorf("backend: %q cannot be launched (want %s)", p.Backend, launchable())
	}
	if p.Label != "" && !labelRE.MatchString(p.Label) {
		return fmt.Errorf("label: %q must be letters, digits, '.', '_' or '-' (it names the log file)", p.Label)
	}
	if len(p.Command) > 0 && strings.TrimSpace(p.Command[0]) == "" {
		return errors.New("command: first element (the binary) is empty")
	}
	if len(p.Command) == 1 && strings.ContainsAny(p.Command[0], " \t") {
		if _, err := os.Stat(p.Command[0]); err != nil {
			return fmt.Errorf("command: %q looks like a shell string; give a list [binary, arg, ...]", p.Command[0])
		}
	}
	if p.Model == "" && p.Backend != backend.Ollama {
		return errors.New("model: missing")
	}
	if p.Port != nil && (*p.Port < 0 || *p.Port > 65535) {
		return fmt.Errorf("port: %d out of range 0-65535", *p.Port)
	}
	for k := range p.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: bad variable name %q", k)
		}
	}
	if err := p.checkKnobRanges(); err != nil {
		return err
	}
	return nil
}

func (p *Profile) checkKnobRanges() error {
	ints := []struct {
		name string
		v    *int
		max  int
	}{
		{"max_model_len", p.MaxModelLen, limits.MaxTokens}, {"max_num_seqs", p.MaxNumSeqs, limits.MaxSequences},
		{"max_num_batched_tokens", p.MaxNumBatchedTokens, limits.MaxTokens}, {"parallel", p.Parallel, limits.MaxSequences},
		{"context_length", p.ContextLength, limits.MaxTokens}, {"tensor_parallel_size", p.TensorParallelSize, limits.MaxTensorParallel},
	}
	for _, f := range ints {
		if f.v != nil && *f.v <= 0 {
			return fmt.Errorf("%s: %d must be positive", f.name, *f.v)
		}
		if f.v != nil && *f.v > f.max {
			return fmt.Errorf("%s: %d is above %d, the most servebench launches a server with", f.name, *f.v, f.max)
		}
	}
	if u := p.GPUMemoryUtilization; u != nil && (*u <= 0 || *u > 1) {
		return fmt.Errorf("gpu_memory_utilization: %g must be in (0, 1]", *u)
	}
	for k, v := range p.LimitMMPerPrompt {
		if v < 0 || v > limits.MaxSequences {
			return fmt.Errorf("limit_mm_per_prompt: %s: %d must be from 0 to %d", k, v, limits.MaxSequences)
		}
	}
	// The dtype goes into the default label, which names the log file.
	if d := p.KVCacheDtype; d != nil && !labelRE.MatchString(*d) {
		return fmt.Errorf("kv_cache_dtype: bad value %q", *d)
	}
	return nil
}

// Knobs returns the profile's reference knobs as the report records them.
func (p *Profile) Knobs() *record.Profile {
	return &record.Profile{
		MaxModelLen:          p.MaxModelLen,
		MaxNumSeqs:           p.MaxNumSeqs,
		MaxNumBatchedTokens:  p.MaxNumBatchedTokens,
		GPUMemoryUtilization: p.GPUMemoryUtilization,
		CUDAGraphs:           p.CUDAGraphs,
		PrefixCaching:        p.PrefixCaching,
		LimitMMPerPrompt:     p.LimitMMPerPrompt,
		KVCacheDtype:         p.KVCacheDtype,
		Parallel:             p.Parallel,
		ContextLength:        p.ContextLength,
		FlashAttention:       p.FlashAttention,
		TensorParallelSize:   p.TensorParallelSize,
	}
}

// DefaultLabel derives a label in the reference style from the backend
// and the knobs that usually tell profiles apart: "<backend>[-<kv>kv]
// [-np<parallel>][-seqs<max_num_seqs>][-ctx<context_length>]
// [-len<max_model_len>]", with the KV dtype
// shortened (q8_0 → q8, auto → fp16 for vLLM), e.g. "llamacpp-q8kv",
// "vllm-fp8kv", "ollama-np4".
func (p *Profile) DefaultLabel() string {
	parts := []string{string(p.Backend)}
	if d := p.KVCacheDtype; d != nil {
		s := strings.TrimSuffix(strings.ToLower(*d), "_0")
		if s == "auto" {
			s = "fp16"
		}
		parts = append(parts, s+"kv")
	}
	if v := p.Parallel; v != nil {
		parts = append(parts, fmt.Sprintf("np%d", *v))
	}
	if v := p.MaxNumSeqs; v != nil {
		parts = append(parts, fmt.Sprintf("seqs%d", *v))
	}
	if v := p.ContextLength; v != nil {
		parts = append(parts, fmt.Sprintf("ctx%d", *v))
	}
	if v := p.MaxModelLen; v != nil {
		parts = append(parts, fmt.Sprintf("len%d", *v))
	}
	if v := p.TensorParallelSize; v != nil {
		parts = append(parts, fmt.Sprintf("tp%d", *v))
	}
	return strings.Join(parts, "-")
}

// Labels returns each profile's label (its own, else DefaultLabel), made
// unique by appending -2, -3, ... to repeats, in order: labels name the
// log files, so two runs must never share one.
func Labels(ps []*Profile) []string {
	used := map[string]bool{}
	out := make([]string, len(ps))
	for i, p := range ps {
		base := p.Label
		if base == "" {
			base = p.DefaultLabel()
		}
		l := base
		for n := 2; used[l]; n++ {
			l = fmt.Sprintf("%s-%d", base, n)
		}
		used[l] = true
		out[i] = l
	}
	return out
}
