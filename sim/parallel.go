package sim

import (
	"fmt"
	"strings"
	"time"
)

// Tensor parallelism: vLLM and SGLang split every matrix of the model
// over TP GPUs (Megatron-style: column-parallel QKV and gate/up,
// row-parallel output and down projections, a vocabulary-parallel
// lm_head), so each rank reads 1/TP of the weights and does 1/TP of the
// arithmetic, caches its share of the KV heads, and the ranks join their
// partial results with two all-reduces of the hidden state per layer and
// one gather of the logits per step. The ranks run in lockstep and the
// collectives sit on the critical path (neither server overlaps them
// with the next layer's matrices), so a step takes one rank's roofline
// plus the collectives' time.

// MaxTensorParallel is the largest tensor-parallel size the engine
// simulates: one 8-GPU board.
const MaxTensorParallel = 8

// Link is how tensor-parallel ranks exchange their collectives.
type Link string

// Links.
const (
	// LinkNone: one GPU, no collectives.
	LinkNone Link = ""
	// LinkNVLink is NVLink, through NVSwitch on SXM boards or a bridge
	// between two PCIe boards: peer-to-peer, at the NVLink bandwidth.
	LinkNVLink Link = "nvlink"
	// LinkPCIe is PCIe with peer-to-peer access: the GPUs write into
	// each other's memory through the PCIe switch or root complex.
	LinkPCIe Link = "pcie"
	// LinkHost is PCIe without peer-to-peer access (GeForce boards, on
	// which NVIDIA's driver refuses it): NCCL stages every transfer
	// through a shared buffer in host memory, and vLLM's custom
	// all-reduce, which needs peer access, is off.
	LinkHost Link = "pcie-host"
)

// Links lists the links a --gpu-link flag takes, in help order.
var Links = []Link{LinkNVLink, LinkPCIe, LinkHost}

// ParseLink returns the link s names ("" is the board's default).
func ParseLink(s string) (Link, error) {
	l := Link(strings.ToLower(strings.TrimSpace(s)))
	if l == LinkNone {
		return LinkNone, nil
	}
	for _, k := range Links {
		if l == k {
			return l, nil
		}
	}
	return "", fmt.Errorf("%w: GPU link %q (want %s)", ErrBadInput, s, strings.Join(linkNames(), ", "))
}

// linkNames are the names of Links.
func linkNames() []string {
	names := make([]string, len(Links))
	for i, k := range Links {
		names[i] = string(k)
	}
	return names
}

// LinkChoices lists Links for messages: "nvlink, pcie or pcie-host".
func LinkChoices() string {
	n := linkNames()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Parallel is how a server splits the model over its GPUs.
type Parallel struct {
	// TensorParallel is vLLM's and SGLang's --tensor-parallel-size (0 or
	// 1: one GPU).
	TensorParallel int `json:"tensor_parallel_size,omitempty"`
	// Link is what the ranks' collectives travel over.
	Link Link `json:"link,omitempty"`
	// KVShare is the share of the model's KV cache one rank holds per
	// token: max(1, kv_heads / TP) / kv_heads (more than 1/TP when there
	// are fewer KV heads than ranks and heads are replicated; 1 for an
	// MLA latent, which every rank keeps whole).
	KVShare float64 `json:"kv_share,omitempty"`
	// Small is the all-reduce of messages under SmallMaxBytes (vLLM's
	// custom all-reduce where it runs: peer access, one node, 2 to 8
	// ranks, under 8 MiB), Large that of the others and of the logits'
	// gather (NCCL).
	Small         Collective `json:"small"`
	Large         Collective `json:"large"`
	SmallMaxBytes float64    `json:"small_max_bytes,omitempty"`
}

// Collective is the cost of one collective on a link: a fixed Latency
// (α: launch, the ranks' synchronisation, the first bytes) and a bus
// bandwidth (nccl-tests' busbw: an all-reduce of S bytes over t ranks
// moves 2(t−1)/t × S through each rank's link).
type Collective struct {
	Latency      time.Duration `json:"latency_ns"`
	BusBytesPerS float64       `json:"bus_bytes_per_s"`
}

// validate checks c's bounds.
func (c Collective) validate(name string) error {
	if c.Latency < 0 || c.Latency > time.Second || !(c.BusBytesPerS >= 1e6 && c.BusBytesPerS <= 1e14) {
		return fmt.Errorf("%w: %s collective: latency_ns %d must be in [0, 1 s] and bus_bytes_per_s %v in [1e6, 1e14]", ErrBadInput, name, int64(c.Latency), c.BusBytesPerS)
	}
	return nil
}

// size is the tensor-parallel size, at least 1.
func (p Parallel) size() int { return max(p.TensorParallel, 1) }

// validate checks p's bounds: a size in [1, MaxTensorParallel] and, past
// one GPU, a link with a latency and a bandwidth in range.
func (p Parallel) validate() error {
	t := p.TensorParallel
	if t < 0 || t > MaxTensorParallel {
		return fmt.Errorf("%w: tensor_parallel_size %d (want 1 to %d)", ErrBadInput, t, MaxTensorParallel)
	}
	if t <= 1 {
		return nil
	}
	if _, err := ParseLink(string(p.Link)); err != nil || p.Link == LinkNone {
		return fmt.Errorf("%w: tensor_parallel_size %d needs a link (%q)", ErrBadInput, t, p.Link)
	}
	if !(p.KVShare > 0 && p.KVShare <= 1) {
		return fmt.Errorf("%w: kv_share %v must be in (0, 1]", ErrBadInput, p.KVShare)
	}
	if err := p.Small.validate("small"); err != nil {
		return err
	}
	if err := p.Large.validate("large"); err != nil {
		return err
	}
	if !(p.SmallMaxBytes >= 0 && p.SmallMaxBytes <= 1<<40) {
		return fmt.Errorf("%w: small_max_bytes %v must be in [0, 2^40]", ErrBadInput, p.SmallMaxBytes)
	}
	return nil
}

// shard is the cost of one tensor-parallel rank's part of a forward pass
// of m over t ranks that each hold kvShare of the KV cache: every matrix
// (and so every FLOP and weight byte, the experts' included) split t
// ways, the KV cache by kvShare.
func (m ModelCost) shard(t int, kvShare float64) ModelCost {
	if t <= 1 {
		return m
	}
	f := 1 / float64(t)
	m.WeightBytesPerStep *= f
	m.FLOPsPerToken *= f
	m.HeadFLOPs *= f
	m.AttnFLOPsPerCtx *= f
	m.ImageFLOPs *= f
	m.ExpertBytes *= f
	m.ExpertColumnFLOPs *= f
	m.KVBytesPerToken *= kvShare
	return m
}

// commModel is the time of a step's collectives on t ranks.
type commModel struct {
	t            int
	small, large Collective
	smallMax     float64
	// allReduces is the all-reduces per forward pass (two per layer);
	// hiddenBytes the bytes each moves per token.
	allReduces  int
	hiddenBytes float64
	// logitBytes is one sampled sequence's logits, gathered once per step.
	logitBytes float64
}

// newCommModel is c's collectives, nil on one GPU.
func newCommModel(c *Config) *commModel {
	p := c.Parallel
	if p.size() <= 1 {
		return nil
	}
	return &commModel{t: p.size(), small: p.Small, large: p.Large, smallMax: p.SmallMaxBytes,
		allReduces: 2 * c.Model.Layers, hiddenBytes: c.Model.HiddenBytesPerToken, logitBytes: c.Model.LogitBytesPerSample}
}

// time is one collective of bytes over the link that moves share ×
// bytes through each rank's link.
func (k Collective) time(bytes, share float64) float64 {
	return k.Latency.Seconds() + share*bytes/k.BusBytesPerS
}

// step is the collectives' time in a step of tokens tokens (as padded
// for CUDA graphs) of which samples sample: 2 × layers all-reduces of
// the hidden state, each of S bytes taking α + 2(t−1)/t × S / busbw
// (the bytes per link of the ring and one-shot algorithms) on the small
// or large path by S, and the logits' gather α + (t−1)/t × S / busbw.
func (c *commModel) step(tokens, samples int) float64 {
	if c == nil || tokens <= 0 {
		return 0
	}
	t := float64(c.t)
	s := float64(tokens) * c.hiddenBytes
	k := c.large
	if s < c.smallMax {
		k = c.small
	}
	total := float64(c.allReduces) * k.time(s, 2*(t-1)/t)
	if samples > 0 {
		total += c.large.time(float64(samples)*c.logitBytes, (t-1)/t)
	}
	return total
}
