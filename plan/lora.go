package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/modelspec"
)

// LoRA is vLLM's --enable-lora configuration.
type LoRA struct {
	// MaxLoRAs is --max-loras: adapters in one batch, each with its own
	// slot in the stacked weights.
	MaxLoRAs int `json:"max_loras"`
	// MaxRank is --max-lora-rank: every slot is this rank wide.
	MaxRank int `json:"max_lora_rank"`
	// TargetModules restricts the wrapped projections (q_proj, k_proj,
	// v_proj, o_proj, gate_proj, up_proj, down_proj); empty = all of them,
	// vLLM's default.
	TargetModules []string `json:"target_modules,omitempty"`
}

// LoRAModules are the projections vLLM wraps with LoRA layers, in the
// names adapters use.
var LoRAModules = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// vLLM's defaults for --enable-lora without --max-loras / --max-lora-rank
// (vllm/config/lora.py: max_loras 1, max_lora_rank 16).
const (
	LoRADefaultMaxLoRAs = 1
	LoRADefaultMaxRank  = 16
)

// loraRanks are the --max-lora-rank values vLLM accepts
// (vllm/config/lora.py, possible_max_ranks).
var loraRanks = []int{1, 8, 16, 32, 64, 128, 256, 320, 512}

// warnings says what vLLM would refuse or change in l.
func (l *LoRA) warnings() []string {
	if l == nil || slices.Contains(loraRanks, l.MaxRank) {
		return nil
	}
	return []string{fmt.Sprintf("vLLM accepts --max-lora-rank of %v only; %d is planned as given", loraRanks, l.MaxRank)}
}

// ParseLoRATargets reads a comma-separated --lora-target-modules list.
func ParseLoRATargets(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(LoRAModules, f) {
			return nil, fmt.Errorf("unknown LoRA target module %q (want some of %s)", f, strings.Join(LoRAModules, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// targets reports whether module is wrapped.
func (l *LoRA) targets(module string) bool {
	return len(l.TargetModules) == 0 || slices.Contains(l.TargetModules, module)
}

// loraBytes is the GPU memory of vLLM's stacked LoRA weights on one
// tensor-parallel rank (vllm/lora/layers: each wrapped linear layer
// allocates lora_a_stacked [max_loras, 1, max_rank, input] and
// lora_b_stacked [max_loras, 1, output, max_rank] per slice, in the
// model's dtype, when the model is built, so "Model loading took"
// includes them). Column-parallel layers (q/k/v, gate/up) keep A whole
// and split B's output over the ranks; row-parallel ones (o, down) split
// A's input and keep B whole. Routed experts are not wrapped (vLLM's MoE
// LoRA is a separate feature), so an MoE layer's MLP adds nothing.
// During profiling vLLM activates max_loras dummy adapters of rank 8
// (LORA_WARMUP_RANK) in these same buffers: no further memory.
func loraBytes(m *modelspec.Spec, l *LoRA, tp int, layers []int, dtypeBytes float64) int64 {
	if l == nil {
		return 0
	}
	tp = max(tp, 1)
	h, qd := float64(m.Hidden), float64(m.Heads*m.HeadDim)
	kvd := float64(KVHeadsPerRank(m.KVHeads, tp, false) * m.HeadDim)
	if tp == 1 {
		kvd = float64(m.KVHeads * m.HeadDim)
	}
	r, n := float64(l.MaxRank), float64(l.MaxLoRAs)
	column := func(module string, in, outPerRank float64) float64 {
		if !l.targets(module) {
			return 0
		}
		return n * r * (in + outPerRank)
	}
	row := func(module string, inPerRank, out float64) float64 {
		if !l.targets(module) {
			return 0
		}
		return n * r * (inPerRank + out)
	}
	var elems float64
	for _, i := range layers {
		elems += column("q_proj", h, qd/float64(tp)) + column("k_proj", h, kvd) + column("v_proj", h, kvd) + row("o_proj", qd/float64(tp), h)
		if !m.IsMoELayer(i) {
			inter := float64(m.Intermediate) / float64(tp)
			elems += column("gate_proj", h, inter) + column("up_proj", h, inter) + row("down_proj", inter, h)
		}
	}
	return int64(elems * dtypeBytes)
}

// validate checks a LoRA configuration; the error is an *InputError.
func (l *LoRA) validate() error {
	if l == nil {
		return nil
	}
	if l.MaxLoRAs < 1 || l.MaxLoRAs > 1024 {
		return &InputError{FieldMaxLoRAs, l.MaxLoRAs, "must be in 1..1024"}
	}
	if l.MaxRank < 1 || l.MaxRank > 512 {
		return &InputError{FieldMaxLoRARank, l.MaxRank, "must be in 1..512"}
	}
	for _, t := range l.TargetModules {
		if !slices.Contains(LoRAModules, t) {
			return &InputError{FieldLoRATargets, t, "is not a module vLLM wraps (" + strings.Join(LoRAModules, ", ") + ")"}
		}
	}
	return nil
}
