package simserve

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
)

// ErrBadOptions is wrapped by every error about Options (a usage error for
// the CLI); errors about the simulated server itself (unknown GPU or model,
// a model that does not fit) wrap package sim's errors instead.
var ErrBadOptions = errors.New("invalid sim serve options")

// ParseKind returns the server family named s, whose HTTP surface a
// Server speaks.
func ParseKind(s string) (backend.Kind, error) {
	for _, p := range Kinds {
		if string(p) == strings.ToLower(s) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: --as %q (want one of %s)", ErrBadOptions, s, backend.Join(Kinds))
}

// Engine is the engine's scheduler a server of family p runs unless the
// Spec names another (personality.engine): its own for vLLM, SGLang,
// llama.cpp and Ollama; vLLM's for TGI and for a generic OpenAI endpoint.
func Engine(p backend.Kind) backend.Kind {
	if pe, ok := personalities[p]; ok {
		return pe.engine
	}
	return backend.VLLM
}

// Options configure a simulated server.
type Options struct {
	// As is the personality.
	As backend.Kind
	// Spec is the simulated server: GPU, model, quantization, KV dtype,
	// server settings. An empty Spec.Backend means Engine(As).
	Spec sim.Spec
	// ServedModelName is the model name the server answers to and lists
	// (vLLM's --served-model-name, Ollama's tag, llama.cpp's alias);
	// "" = Spec.Model as given.
	ServedModelName string
	// Seed seeds the output text and the fault draws: the same seed and
	// the same requests in the same order give the same outputs.
	Seed uint64
	// Faults are the injected failures.
	Faults Faults
	// NoMetrics turns /metrics off, as llama-server without --metrics
	// (501) or a server behind a proxy that hides it (404).
	NoMetrics bool
	// Fit, when set, is a run of a sim-profile.json ('servebench sim
	// fit') applied to the engine: its fitted efficiencies and overheads,
	// the settings it chose and, for a fit without a model, its model cost
	// (sim.RunProfile.Apply). It must be of the engine's family.
	Fit *sim.RunProfile
}

// Faults are failures injected into generation requests (chat,
// completions, Ollama's chat and generate, TGI's generate_stream). The
// four exclusive faults share one draw per request: with probabilities
// TooManyRequests, ServerError, CutStream and Stall (their sum at most 1)
// a request gets that fault, otherwise none. SlowFirstToken is drawn
// apart and may come on top.
type Faults struct {
	// TooManyRequests is the fraction answered 429 (with Retry-After)
	// before anything is generated.
	TooManyRequests float64
	// ServerError is the fraction answered 500 before anything is
	// generated.
	ServerError float64
	// CutStream is the fraction whose connection is dropped after
	// CutAfter tokens were sent (no end marker).
	CutStream float64
	// CutAfter is the tokens sent before a cut (0: the cut comes right
	// after the response headers).
	CutAfter int
	// Stall is the fraction whose stream stops after StallAfter tokens
	// and stays open, silent, until the client gives up.
	Stall float64
	// StallAfter is the tokens sent before a stall.
	StallAfter int
	// SlowFirstToken is the fraction held FirstTokenDelay before they
	// reach the scheduler (a cold cache, a slow tokenizer): their first
	// token comes that much later, without occupying the GPU.
	SlowFirstToken float64
	// FirstTokenDelay is the hold of a slow first token.
	FirstTokenDelay time.Duration
}

// validate checks the fractions and counts.
func (f Faults) validate() error {
	fracs := []struct {
		flag string
		v    float64
	}{{"--fault-429", f.TooManyRequests}, {"--fault-5xx", f.ServerError}, {"--fault-cut", f.CutStream},
		{"--fault-stall", f.Stall}, {"--fault-slow-first-token", f.SlowFirstToken}}
	for _, x := range fracs {
		if !(x.v >= 0 && x.v <= 1) || math.IsNaN(x.v) {
			return fmt.Errorf("%w: %s %v must be a fraction in [0, 1]", ErrBadOptions, x.flag, x.v)
		}
	}
	if sum := f.TooManyRequests + f.ServerError + f.CutStream + f.Stall; sum > 1+1e-9 {
		return fmt.Errorf("%w: --fault-429, --fault-5xx, --fault-cut and --fault-stall add up to %.3g, more than 1", ErrBadOptions, sum)
	}
	if f.CutAfter < 0 || f.StallAfter < 0 {
		return fmt.Errorf("%w: --fault-cut-after %d and --fault-stall-after %d must be >= 0", ErrBadOptions, f.CutAfter, f.StallAfter)
	}
	if f.FirstTokenDelay < 0 || (f.SlowFirstToken > 0 && f.FirstTokenDelay == 0) {
		return fmt.Errorf("%w: --fault-first-token-delay %v must be > 0 when --fault-slow-first-token is set", ErrBadOptions, f.FirstTokenDelay)
	}
	return nil
}
