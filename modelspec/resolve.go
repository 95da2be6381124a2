package modelspec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Resolved is a model argument resolved to a spec.
type Resolved struct {
	Spec Spec
	// Format is the weight format the argument itself states ("awq",
	// "gptq", "fp8", "q4_k_m", "bf16"...; "" = none): a suffix of a name
	// that matched a preset ("Qwen2.5-14B-Instruct-AWQ"), or the
	// quantization_config.quant_method of a fetched config.json.
	Format string
	// From says how the argument resolved, for the plan's header.
	From Origin
}

// Origin is how a model argument resolved.
type Origin string

// Origins.
const (
	FromPreset     Origin = "preset"
	FromPresetName Origin = "preset matched by name"
	FromFile       Origin = "file"
	FromHub        Origin = "hub"
	FromURL        Origin = "GGUF header by URL"
)

// ErrUnknownModel is the error for an argument that is no preset, no file
// and no Hugging Face id that may be fetched.
var ErrUnknownModel = errors.New("unknown model")

// Options says where Resolve may look beyond the presets and local files.
type Options struct {
	// Offline refuses a hub fetch (so does HF_HUB_OFFLINE=1).
	Offline bool
	// Hub fetches config.json and safetensors headers; nil = a Hub at
	// $HF_ENDPOINT with $HF_TOKEN.
	Hub *Hub
}

// offline reports whether o or the environment forbid the network
// (HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE, as huggingface_hub reads
// them: 1, true, yes or on).
func (o Options) offline() bool {
	if o.Offline {
		return true
	}
	for _, k := range []string{"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"} {
		switch strings.ToLower(strings.TrimSpace(os.Getenv(k))) {
		case "1", "true", "yes", "on":
			return true
		}
	}
	return false
}

// hubID matches a Hugging Face repository id: owner/name, each of
// letters, digits, '-', '_' and '.'.
var hubID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// IsHubID reports whether arg is shaped as a Hugging Face repository id
// ("Qwen/Qwen2.5-14B-Instruct-AWQ") and is not a path on this machine.
func IsHubID(arg string) bool {
	if !hubID.MatchString(arg) || strings.HasSuffix(arg, ".json") || strings.HasSuffix(strings.ToLower(arg), ".gguf") {
		return false
	}
	_, err := os.Stat(arg)
	return err != nil
}

// Resolve turns a model argument into a spec, trying in turn:
//  1. a preset by its name ("qwen2.5-14b");
//  2. a file or folder on this machine: a GGUF file, a config.json or the
//     folder holding one;
//  3. a name that matches a preset once the organisation, case, and
//     suffixes such as -Instruct, -AWQ, -GPTQ-Int4, -FP8 or .gguf are
//     dropped, the format suffix read as the weight format
//     ("Qwen/Qwen2.5-14B-Instruct-AWQ" is qwen2.5-14b in AWQ): offline,
//     whatever the options;
//  4. any other Hugging Face id, fetched from the hub (its config.json
//     and its safetensors headers, for the exact weight bytes) unless
//     o or the environment say offline.
//
// An http(s) URL of a .gguf file is read by Range, its header only
// (FetchGGUF), between steps 2 and 3; offline, it resolves by its name
// (step 3) or is refused.
//
// Errors are one line naming the argument.
func Resolve(ctx context.Context, arg string, o Options) (Resolved, error) {
	if m, err := Preset(arg); err == nil {
		return Resolved{Spec: m, From: FromPreset}, nil
	}
	if _, err := os.Stat(arg); err == nil {
		m, err := Load(arg)
		return Resolved{Spec: m, From: FromFile}, err
	}
	if IsGGUFURL(arg) && !o.offline() {
		m, err := fetchGGUFCached(ctx, arg)
		return Resolved{Spec: m, From: FromURL}, err
	}
	if m, f, ok := MatchPreset(arg); ok {
		return Resolved{Spec: m, Format: f, From: FromPresetName}, nil
	}
	if IsHubID(arg) || IsGGUFURL(arg) {
		return fetchHub(ctx, arg, o)
	}
	if looksLikePath(arg) {
		return Resolved{}, fmt.Errorf("%w: %s: no such file, and its name matches no preset", ErrUnknownModel, arg)
	}
	_, err := Preset(arg)
	return Resolved{}, fmt.Errorf("%w %q: %s", ErrUnknownModel, arg, strings.TrimPrefix(err.Error(), fmt.Sprintf("unknown model preset %q; ", arg)))
}

// fetchHub reads a Hugging Face id no preset matches from the hub, or
// refuses it in one line when o or the environment say offline (a GGUF
// URL reaches here only then).
func fetchHub(ctx context.Context, arg string, o Options) (Resolved, error) {
	if o.offline() {
		return Resolved{}, fmt.Errorf("%w %q: no preset matches it, and fetching it from the hub is off (--offline or HF_HUB_OFFLINE); give a preset, a config.json or a .gguf file", ErrUnknownModel, arg)
	}
	h := o.Hub
	if h == nil {
		var err error
		if h, err = HubFromEnv(); err != nil {
			return Resolved{}, fmt.Errorf("%w %q: no preset matches it; %v", ErrUnknownModel, arg, err)
		}
	}
	m, f, err := h.Fetch(ctx, arg)
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{Spec: m, Format: f, From: FromHub}, nil
}

// looksLikePath reports whether arg names a file rather than a preset.
func looksLikePath(arg string) bool {
	return strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".json") || strings.EqualFold(filepath.Ext(arg), ".gguf")
}

// formatWords are weight-format names as they appear in model names and
// files, longest first (so "q4_k_m" is found before "q4_0" could be).
var formatWords = []string{"q4_k_m", "q5_k_m", "q8_0", "q4_0", "awq", "gptq", "fp8", "bf16", "fp16", "f16", "fp32"}

// dropWords are trailing name words that say nothing about the
// architecture: the tuning ("instruct", "chat", "it"), a format's
// details ("int4", "dynamic", "w4a16") and repository habits ("hf").
var dropWords = map[string]bool{
	"instruct": true, "chat": true, "it": true, "hf": true, "latest": true, "base": true,
	"int4": true, "int8": true, "w4a16": true, "w8a8": true, "dynamic": true, "marlin": true, "gemm": true,
}

// MatchPreset finds the preset a model name refers to and the weight
// format the name implies: "Qwen/Qwen2.5-7B-Instruct-AWQ" is qwen2.5-7b
// in AWQ, "/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf" qwen2.5-7b in Q4_K_M,
// "Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4" qwen2.5-14b in GPTQ, and an Ollama
// tag without a format ("qwen2.5:7b-instruct") the library's default
// Q4_K_M. It reads nothing but the name.
func MatchPreset(name string) (Spec, string, bool) {
	if m, err := Preset(name); err == nil {
		return m, "", true
	}
	s := strings.ToLower(path.Base(strings.ReplaceAll(name, `\`, "/")))
	s = strings.TrimSuffix(s, ".gguf")
	ollamaTag := strings.Contains(s, ":")
	s = strings.ReplaceAll(s, ":", "-")
	var q string
	for _, w := range formatWords {
		if i := strings.Index(s, w); i >= 0 {
			q = w
			s = strings.Trim(s[:i]+s[i+len(w):], "-_.")
			break
		}
	}
	if q == "f16" {
		q = "fp16"
	}
	if q == "" && ollamaTag {
		q = "q4_k_m"
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' })
	for len(words) > 0 && dropWords[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	// "Meta-Llama-3.1-8B-Instruct", the name of Meta's own GGUF and
	// older repositories, is llama-3.1-8b.
	if len(words) > 1 && words[0] == "meta" {
		words = words[1:]
	}
	// "qwen2.5-7b-7b" from "qwen2.5:7b-instruct" collapses.
	words = dedupeAdjacent(words)
	if m, err := Preset(strings.Join(words, "-")); err == nil {
		return m, q, true
	}
	return Spec{}, "", false
}

func dedupeAdjacent(w []string) []string {
	out := w[:0]
	for i, x := range w {
		if i == 0 || x != w[i-1] {
			out = append(out, x)
		}
	}
	return out
}
