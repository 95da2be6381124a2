package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
)

// Request is "what should I run?": a model, the GPUs a person has, and
// how many users of how long a context it must serve at once.
type Request struct {
	// Model is the model to serve.
	Model modelspec.Spec
	// GPU is one GPU of the kind available, MaxGPUs how many of them
	// (counts of 1, 2, 4, 8 … up to MaxGPUs are tried; 0 = 8).
	GPU     Device
	MaxGPUs int
	// Context is the tokens per sequence (the server's max_model_len)
	// and Users the sequences that must fit at once.
	Context, Users int
	// SequenceTokens, when set, says the users are people (plan --users)
	// and is the KV-cache tokens one conversation holds at once (the p95
	// of a profile's): vLLM and SGLang, whose paged caches hold what
	// sequences use, hold PredictedTokens / SequenceTokens conversations,
	// not PredictedTokens / Context; llama.cpp and Ollama reserve each
	// slot's context, and get as many slots as fit. People read and type
	// between turns, holding no sequence then, so a configuration with
	// fewer sequences than people still holds them (negative headroom)
	// when its weights and at least one sequence fit: the simulated SLO
	// verdict (ThroughputFunc) decides. 0 = Context, every user a
	// sequence in flight.
	SequenceTokens int
	// Backends, Quants and KVDtypes narrow the search (empty = all the
	// server families, the formats each reads, and their KV dtypes).
	Backends []backend.Kind
	Quants   []Quant
	KVDtypes []KVDtype
	// VLLMVersion is the vLLM release whose accounting to follow.
	VLLMVersion VLLMVersion
	// Throughput, when set, predicts each fitting configuration's
	// throughput (see ThroughputFunc).
	Throughput ThroughputFunc
	// Capacity, when set, predicts how many users each configuration
	// that holds the users within the SLO serves (see UsersFunc).
	Capacity UsersFunc
}

// UsersFunc predicts how many users of the request's kind a
// configuration serves within the SLO its ThroughputFunc judges by: the
// answer of a users search (package find, as `servebench capacity
// --backend sim` runs it) started at users and bounded above, so that
// plan stays fast. Recommend calls it for every configuration whose
// users hold the SLO as predicted and ranks configurations that tie on
// the earlier keys by the headroom it gives (Candidate.HeadroomUsers);
// an error is kept as a note, never fatal.
type UsersFunc func(c *Candidate, users int) (UsersCapacity, error)

// UsersCapacity is a configuration's predicted capacity in users.
type UsersCapacity struct {
	// Users is the largest number of users found within the SLO, every
	// smaller number tried holding too.
	Users float64
	// Low and High bound the largest number that holds (the search's
	// interval); High is nil when every number up to the search's
	// highest held, Low nil when no number held confidently.
	Low, High *float64
	// Source says how the capacity was predicted, for
	// Recommendation.CapacitySource.
	Source string
}

// ThroughputFunc predicts how a configuration serves users concurrent
// sequences: aggregate output tokens per second and the latencies a user
// sees. It is the serving simulator's job (package sim:
// the CLI wires in the people of run --backend sim --users, judged against
// the default SLO; sim.RecommendPerformance is a closed loop). Recommend calls it for
// every configuration that holds the users and stores the result in
// Candidate.PredictedTokS, PredictedTTFTP50Ms and PredictedTPOTP50Ms; an
// error is kept as a note, never fatal. A nil ThroughputFunc leaves them
// nil.
type ThroughputFunc func(c *Candidate, users int) (Performance, error)

// Performance is a configuration's predicted throughput and latency.
type Performance struct {
	// TokPerS is the aggregate output tokens per second.
	TokPerS float64
	// TTFTP50Ms and TPOTP50Ms are the median time to first token and
	// time per output token, in milliseconds.
	TTFTP50Ms, TPOTP50Ms float64
	// Source says where the figures come from ("simulated: ..."), for
	// Recommendation.PerformanceSource.
	Source string
	// HoldsSLO is whether the users were served within SLO as predicted
	// (nil: not judged); Verdict says so in words, naming the figure that
	// decided ("holds: ttft_p95 310 ms ≤ 1000 ms, …", "breaks: ttft_p95
	// 1.7 s > 1 s"); SLO is the SLO judged against.
	HoldsSLO *bool
	Verdict  string
	SLO      string
	// ErrorNote says how many of the simulated turns failed and why
	// ("3 of 72 counted turns failed: HTTP 400: the request exceeds the
	// available context size"), "" when none did: the SLO bounds
	// latencies, so failed turns do not move the verdict, and the note
	// keeps them from being counted silently.
	ErrorNote string
}

// Candidate is one configuration Recommend tried.
type Candidate struct {
	// Backend, Quant, KVDtype and GPUs are the configuration.
	Backend backend.Kind `json:"backend"`
	Quant   Quant        `json:"quant"`
	KVDtype KVDtype      `json:"kv_cache_dtype"`
	GPUs    int          `json:"gpus"`
	// BitsPerWeight is the weight format's precision (bits per linear
	// weight), the first ranking key.
	BitsPerWeight float64 `json:"bits_per_weight"`
	// Holds is whether Users sequences of Context tokens fit at once;
	// Sequences is how many do, HeadroomPct how many more than Users.
	Holds       bool    `json:"holds"`
	Sequences   float64 `json:"sequences"`
	HeadroomPct float64 `json:"headroom_pct"`
	// WeightsGiBPerGPU is the weights on the fullest GPU.
	WeightsGiBPerGPU float64 `json:"weights_gib_per_gpu"`
	// Missing says what the configuration lacks when it does not hold
	// the users ("" when it does).
	Missing string `json:"missing,omitempty"`
	// PredictedTokS is the simulator's predicted throughput for Users
	// sequences (nil until a ThroughputFunc fills it);
	// ThroughputNote says why it is missing when the hook failed.
	PredictedTokS  *float64 `json:"predicted_tok_s"`
	ThroughputNote string   `json:"throughput_note,omitempty"`
	// PredictedTTFTP50Ms and PredictedTPOTP50Ms are the simulator's
	// median latencies at Users sequences (nil with PredictedTokS).
	PredictedTTFTP50Ms *float64 `json:"predicted_ttft_p50_ms"`
	PredictedTPOTP50Ms *float64 `json:"predicted_tpot_p50_ms"`
	// HoldsSLO is whether the simulated users were served within the
	// SLO (nil: not judged, as on several GPUs); SLOVerdict says why.
	HoldsSLO   *bool  `json:"holds_slo,omitempty"`
	SLOVerdict string `json:"slo_verdict,omitempty"`
	// ErrorNote says how many simulated turns failed and why ("" when
	// none did; see Performance.ErrorNote).
	ErrorNote string `json:"error_note,omitempty"`
	// PredictedUsers is the simulated capacity in users of a
	// configuration that holds the users within the SLO (a UsersFunc's
	// answer), PredictedUsersLow and PredictedUsersHigh its interval
	// (High nil: every number up to the search's highest held), and
	// HeadroomUsers the headroom in users, PredictedUsers − Users, the
	// last ranking key. Nil where no capacity was predicted;
	// CapacityNote says why the search failed.
	PredictedUsers     *float64 `json:"predicted_users,omitempty"`
	PredictedUsersLow  *float64 `json:"predicted_users_low,omitempty"`
	PredictedUsersHigh *float64 `json:"predicted_users_high,omitempty"`
	HeadroomUsers      *float64 `json:"headroom_users,omitempty"`
	CapacityNote       string   `json:"capacity_note,omitempty"`
	// Inputs are the planner inputs of the configuration, for the
	// simulator and for `servebench plan` to show it in full.
	Inputs Inputs `json:"-"`
	// closeness orders the configurations that do not hold the users:
	// the share of the users they hold, or, when not one sequence fits,
	// minus the memory missing per GPU over a GPU's memory.
	closeness float64
}

// Recommendation is Recommend's answer: the configurations that hold the
// users, best first, and the nearest that do not.
type Recommendation struct {
	Model   string `json:"model"`
	GPU     Device `json:"gpu"`
	MaxGPUs int    `json:"max_gpus"`
	Context int    `json:"context"`
	Users   int    `json:"users"`
	// SequenceTokens is the request's (0: Context); Overflows says it is
	// more than Context, the most tokens a sequence (vLLM's and SGLang's
	// max_model_len) or a slot (llama.cpp's -c over its slots, Ollama's
	// num_ctx) holds: the longer conversations outgrow it, and their
	// turns past it are refused.
	SequenceTokens int         `json:"sequence_tokens,omitempty"`
	Overflows      bool        `json:"conversations_overflow,omitempty"`
	Tried          int         `json:"configurations_tried"`
	Fits           []Candidate `json:"fits"`
	// Nearest are the configurations closest to holding the users when
	// none does (or, when some do, none).
	Nearest []Candidate `json:"nearest,omitempty"`
	// QuantAsked is the weight format the request named, when a family
	// was tried in another (FormatFor); "" otherwise.
	QuantAsked Quant `json:"quant_asked,omitempty"`
	// PerformanceSource says where the predicted throughput and latency
	// come from ("" when no ThroughputFunc was given).
	PerformanceSource string `json:"performance_source,omitempty"`
	// SLO is the SLO the configurations' users were judged against (""
	// when none was).
	SLO string `json:"slo,omitempty"`
	// CapacitySource says how the predicted users were found ("" when
	// no UsersFunc was given or none answered).
	CapacitySource string `json:"capacity_source,omitempty"`
}

// recommendFormats are the weight formats tried per family: the Hugging
// Face formats vLLM and SGLang read, the GGUF formats llama.cpp and
// Ollama read. gpt-oss ships in MXFP4 only.
func recommendFormats(m *modelspec.Spec, k backend.Kind) []Quant {
	if m.Arch == "gpt_oss" {
		return []Quant{QuantMXFP4}
	}
	if k.Describe().Weights == backend.GGUF {
		return []Quant{"fp16", "q8_0", "q4_k_m"}
	}
	return []Quant{DefaultQuant(m), "fp8", "awq"}
}

// ggufEquivalent is the GGUF format llama.cpp and Ollama load in place of
// a Hugging Face checkpoint's format: neither loads AWQ, GPTQ or FP8
// weights, and a person asking for those means "4-bit" or "8-bit".
var ggufEquivalent = map[Quant]Quant{
	"awq": "q4_k_m", "gptq": "q4_k_m",
	"fp8": "q8_0", "int8": "q8_0",
	"bf16": "fp16", "fp32": "fp16",
}

// FormatFor is the weight format family k loads for the format q a person
// asked for: for llama.cpp and Ollama a Hugging Face format becomes its
// GGUF equivalent (awq → q4_k_m, fp8 → q8_0, bf16 → fp16); other
// families and formats are kept.
func FormatFor(k backend.Kind, q Quant) Quant {
	if k.Describe().Weights == backend.GGUF {
		if g, ok := ggufEquivalent[q]; ok {
			return g
		}
	}
	return q
}

// precisionClass ranks a weight format by its class of precision: 0 for
// 16 bits or more, 1 for 8-bit formats, 2 for 4-bit ones; within a class
// the KV cache and the GPU count decide, not a fraction of a bit.
func precisionClass(bitsPerWeight float64) int {
	switch {
	case bitsPerWeight >= 16:
		return 0
	case bitsPerWeight >= 8:
		return 1
	}
	return 2
}

// sloRank orders configurations by their predicted SLO verdict: those
// that hold it, then those not judged, then those that break it.
func sloRank(holds *bool) int {
	switch {
	case holds == nil:
		return 1
	case *holds:
		return 0
	}
	return 2
}

// kvLoss ranks a KV dtype by what it loses: 0 lossless (16 or 32 bits),
// 1 eight-bit (fp8, q8_0), 2 four-bit (q4_0).
func kvLoss(d KVDtype) int {
	switch d {
	case KVFP8, KVQ8_0:
		return 1
	case KVQ4_0:
		return 2
	}
	return 0
}

// recommendKV are the KV dtypes tried per family (llama.cpp and Ollama
// with flash attention, which their quantized caches need).
func recommendKV(k backend.Kind) []KVDtype {
	if m, ok := capacityModels[k]; ok {
		return m.kvDtypes()
	}
	return hfKV
}

// formats are the weight formats to try for family k: its own list, or
// those the request names as k loads them (FormatFor), noting in rec a
// format shown in another.
func (r *Request) formats(k backend.Kind, rec *Recommendation) []Quant {
	if len(r.Quants) == 0 {
		return recommendFormats(&r.Model, k)
	}
	var out []Quant
	for _, asked := range r.Quants {
		q := FormatFor(k, asked)
		if q != asked {
			rec.QuantAsked = asked
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// gpuCounts is 1, 2, 4, 8 … up to n.
func gpuCounts(n int) []int {
	var out []int
	for c := 1; c <= n; c *= 2 {
		out = append(out, c)
	}
	return out
}

// Recommend tries every configuration (server family × weight format ×
// KV dtype × GPU count) for r and ranks those that hold r.Users sequences
// of r.Context tokens: the higher class of weight precision first
// (16-bit, 8-bit, 4-bit: precisionClass), then the less lossy KV cache
// (lossless, then 8-bit, then 4-bit), then fewer GPUs, then more
// headroom (rankFits). A format asked for in r.Quants is tried as each family loads
// it (FormatFor). vLLM and SGLang run tensor parallel over the GPUs
// (counts that divide the attention heads); llama.cpp and Ollama split
// layers and must hold every layer on the GPUs (partial offload is for
// `plan --n-gpu-layers`, not for serving users). When none holds, Nearest
// gives the closest with what each lacks.
func Recommend(r Request) (*Recommendation, error) {
	if r.MaxGPUs == 0 {
		r.MaxGPUs = 8
	}
	switch {
	case r.Users < 1 || r.Users > 1<<20:
		return nil, &InputError{FieldUsers, r.Users, "must be in 1..1048576"}
	case r.Context < 1:
		return nil, &InputError{FieldContext, r.Context, "must be > 0"}
	case r.SequenceTokens < 0:
		return nil, &InputError{FieldContext, r.SequenceTokens, "sequence tokens must be >= 0"}
	case r.MaxGPUs < 1 || r.MaxGPUs > MaxGPUs:
		return nil, &InputError{FieldGPUs, r.MaxGPUs, fmt.Sprintf("must be in 1..%d", MaxGPUs)}
	case !(r.GPU.MemoryGiB > 0):
		return nil, &InputError{FieldGPUGiB, r.GPU.MemoryGiB, "must be > 0"}
	}
	if err := r.Model.Validate(); err != nil {
		return nil, err
	}
	backends := r.Backends
	if len(backends) == 0 {
		backends = Servers
	}
	rec := &Recommendation{Model: r.Model.Name, GPU: r.GPU, MaxGPUs: r.MaxGPUs, Context: r.Context, Users: r.Users, SequenceTokens: r.SequenceTokens,
		Overflows: r.SequenceTokens > r.Context}
	var misses []Candidate
	for _, k := range backends {
		quants := r.formats(k, rec)
		kvs := recommendKV(k)
		if len(r.KVDtypes) > 0 {
			kvs = r.KVDtypes
		}
		for _, q := range quants {
			for _, d := range kvs {
				for _, n := range gpuCounts(r.MaxGPUs) {
					c, ok := r.try(k, q, d, n)
					if !ok {
						continue
					}
					rec.Tried++
					if c.Holds {
						rec.Fits = append(rec.Fits, c)
					} else {
						misses = append(misses, c)
					}
				}
			}
		}
	}
	r.predict(rec)
	slices.SortStableFunc(rec.Fits, rankFits)
	if len(rec.Fits) == 0 {
		slices.SortStableFunc(misses, func(a, b Candidate) int {
			return cmp.Or(cmp.Compare(b.closeness, a.closeness), cmp.Compare(a.GPUs, b.GPUs), cmp.Compare(b.BitsPerWeight, a.BitsPerWeight))
		})
		rec.Nearest = misses[:min(len(misses), 5)]
	}
	return rec, nil
}

// rankFits orders the configurations that hold the users: those that
// hold them within the SLO as predicted first (sloRank), then the higher
// class of weight precision, then the less lossy KV cache, then fewer
// GPUs, then more headroom (compareHeadroom).
func rankFits(a, b Candidate) int {
	return cmp.Or(cmp.Compare(sloRank(a.HoldsSLO), sloRank(b.HoldsSLO)),
		cmp.Compare(precisionClass(a.BitsPerWeight), precisionClass(b.BitsPerWeight)), cmp.Compare(kvLoss(a.KVDtype), kvLoss(b.KVDtype)),
		cmp.Compare(a.GPUs, b.GPUs), compareHeadroom(&a, &b))
}

// compareHeadroom orders by headroom: more predicted users first (then
// more KV headroom among equals), a configuration with a predicted
// capacity before one without, and, where neither has one, more KV
// headroom (sequences that fit over the users). Keeping the predicted
// ones apart keeps the order transitive.
func compareHeadroom(a, b *Candidate) int {
	switch {
	case a.HeadroomUsers != nil && b.HeadroomUsers != nil:
		return cmp.Or(cmp.Compare(*b.HeadroomUsers, *a.HeadroomUsers), cmp.Compare(b.HeadroomPct, a.HeadroomPct))
	case a.HeadroomUsers != nil:
		return -1
	case b.HeadroomUsers != nil:
		return 1
	}
	return cmp.Compare(b.HeadroomPct, a.HeadroomPct)
}

// predict fills each fitting configuration's predicted throughput,
// latency and SLO verdict from r.Throughput (a failure kept as its note),
// and, for those that hold the users within the SLO, their capacity in
// users from r.Capacity.
func (r *Request) predict(rec *Recommendation) {
	if r.Throughput == nil {
		return
	}
	for i := range rec.Fits {
		c := &rec.Fits[i]
		v, err := r.Throughput(c, r.Users)
		if err != nil {
			c.ThroughputNote = err.Error()
			continue
		}
		c.PredictedTokS, c.PredictedTTFTP50Ms, c.PredictedTPOTP50Ms = &v.TokPerS, &v.TTFTP50Ms, &v.TPOTP50Ms
		c.HoldsSLO, c.SLOVerdict, c.ErrorNote = v.HoldsSLO, v.Verdict, v.ErrorNote
		if rec.PerformanceSource == "" {
			rec.PerformanceSource, rec.SLO = v.Source, v.SLO
		}
		if r.Capacity != nil && v.HoldsSLO != nil && *v.HoldsSLO {
			r.capacity(c, rec)
		}
	}
}

// capacity fills c's predicted users, their interval and the headroom
// in users from r.Capacity (a failure kept as its note), and rec's
// CapacitySource from the first answer.
func (r *Request) capacity(c *Candidate, rec *Recommendation) {
	u, err := r.Capacity(c, r.Users)
	if err != nil {
		c.CapacityNote = err.Error()
		return
	}
	if rec.CapacitySource == "" {
		rec.CapacitySource = u.Source
	}
	headroom := u.Users - float64(r.Users)
	c.PredictedUsers, c.PredictedUsersLow, c.PredictedUsersHigh, c.HeadroomUsers = &u.Users, u.Low, u.High, &headroom
}

// try plans one configuration; ok is false for one that cannot be set up
// (tensor parallel that does not divide the heads, a format the family
// does not read).
func (r *Request) try(k backend.Kind, q Quant, d KVDtype, n int) (Candidate, bool) {
	c := Candidate{Backend: k, Quant: q, KVDtype: d, GPUs: n, BitsPerWeight: round(linearBytes[q]*8, 2)}
	if _, ok := linearBytes[q]; !ok {
		return c, false
	}
	in, ok := r.inputs(k, q, d, n)
	if !ok {
		return c, false
	}
	res, err := Plan(in)
	if err != nil {
		return c, false
	}
	p := res.Predictions[0]
	for _, dv := range p.Devices {
		c.WeightsGiBPerGPU = max(c.WeightsGiBPerGPU, dv.WeightsGiB)
	}
	c.Inputs, p, c.Sequences = r.sequences(k, in, p)
	c.Missing = r.missing(k, &p, &c.Sequences)
	c.Holds = c.Missing == ""
	c.HeadroomPct = round((c.Sequences/float64(r.Users)-1)*100, 1)
	c.closeness = c.Sequences / float64(r.Users)
	if c.Sequences <= 0 {
		missing := p.ShortfallGiB
		if p.Host != nil {
			missing = max(missing, (p.Host.WeightsGiB+p.Host.KVGiB)/float64(n))
		}
		c.closeness = -max(missing, 0.01) / r.GPU.MemoryGiB
	}
	return c, true
}

// inputs are the planner inputs of family k with weights q, KV dtype d
// on n GPUs; ok is false for tensor parallel that does not divide the
// heads.
func (r *Request) inputs(k backend.Kind, q Quant, d KVDtype, n int) (Inputs, bool) {
	m := r.Model
	gpus := make([]Device, n)
	for i := range gpus {
		gpus[i] = r.GPU
	}
	in := Inputs{Model: m, Server: k, GPUs: gpus, Quant: q, KVDtypes: []KVDtype{d}, Context: r.Context, VLLM: VLLMSettings{VLLMVersion: r.VLLMVersion}}
	switch k {
	case backend.VLLM, backend.SGLang:
		if m.Heads%n != 0 || (m.KVHeads%n != 0 && n%m.KVHeads != 0) {
			return in, false
		}
		in.TensorParallel = n
		if k == backend.VLLM {
			seqs, _ := vllmDefaults(r.GPU.Name, r.GPU.MemoryGiB)
			in.VLLM.MaxNumSeqs = max(seqs, r.Users)
		}
	case backend.LlamaCpp:
		// -c is the total over the slots: each slot gets the context a
		// vLLM sequence gets, so a person's p95 conversation fits a slot
		// whenever it fits the context (Recommendation.Overflows says
		// when it does not), not llama.cpp's default of -c over 4 slots
		in.Context, in.LlamaCpp.Parallel, in.LlamaCpp.FlashAttention = r.Context*r.Users, r.Users, true
	case backend.Ollama:
		in.LlamaCpp.Parallel, in.LlamaCpp.FlashAttention = r.Users, true
	}
	return in, true
}

// sequences is how many sequences configuration in holds at once (its
// prediction p): a paged cache's KV tokens over what one user holds; for
// llama.cpp and Ollama the slots of the context that fit, and, for people
// (SequenceTokens set) when not every user's slot fits, the server with
// as many slots as fit (the others wait for a free slot between their
// turns) and its prediction.
func (r *Request) sequences(k backend.Kind, in Inputs, p Prediction) (Inputs, Prediction, float64) {
	seqs := p.MaxConcurrency
	if held := min(r.SequenceTokens, r.Context); r.paged(k) && p.PredictedTokens > 0 {
		seqs = round(float64(p.PredictedTokens)/float64(held), 2)
	}
	if k != backend.LlamaCpp && k != backend.Ollama {
		return in, p, seqs
	}
	// the KV cache is sized by the context: how many sequences the GPUs'
	// memory left after weights and buffers would hold
	seqs = round(float64(p.FitTokens)/float64(r.Context), 2)
	slots := int(seqs)
	if r.SequenceTokens == 0 || p.Fits || slots < 1 || slots >= r.Users || p.Host != nil && p.Host.Layers > 0 {
		return in, p, seqs
	}
	in.LlamaCpp.Parallel = slots
	if k == backend.LlamaCpp {
		in.Context = r.Context * slots
	}
	if res, err := Plan(in); err == nil && res.Predictions[0].Fits {
		return in, res.Predictions[0], seqs
	}
	return in, p, seqs
}

// missing says what a configuration of family k with prediction p and
// *seqs sequences lacks to hold the users ("" when it holds them),
// zeroing *seqs where none can run.
func (r *Request) missing(k backend.Kind, p *Prediction, seqs *float64) string {
	maxCtx := r.Model.MaxContext
	switch {
	case (k == backend.VLLM || k == backend.SGLang) && maxCtx > 0 && r.Context > maxCtx:
		*seqs = 0
		return fmt.Sprintf("a context of %d is above the model's %d (max_position_embeddings)", r.Context, maxCtx)
	case p.Host != nil && p.Host.Layers > 0:
		*seqs = 0
		return fmt.Sprintf("only %d of %d layers fit the GPUs", p.GPULayers, p.ModelLayers)
	case !p.Fits && (k == backend.LlamaCpp || k == backend.Ollama):
		return fmt.Sprintf("holds %.1f of %d sequences: %.2f GiB short on the fullest GPU", *seqs, r.Users, p.ShortfallGiB)
	case !p.Fits:
		*seqs = 0
		return fmt.Sprintf("the weights and buffers exceed each GPU by %.2f GiB", p.ShortfallGiB)
	case *seqs < 1 || *seqs < float64(r.Users) && r.SequenceTokens == 0:
		return missingKV(p, *seqs, r.Users)
	}
	return ""
}

// paged says whether family k pages its KV cache (vLLM, SGLang), so that
// for people (SequenceTokens set) a conversation holds only its own
// tokens, not a whole context.
func (r *Request) paged(k backend.Kind) bool {
	return r.SequenceTokens > 0 && (k == backend.VLLM || k == backend.SGLang)
}

// missingKV says how much more KV memory per GPU would hold users
// sequences when a configuration holds held.
func missingKV(p *Prediction, held float64, users int) string {
	if held <= 0 {
		return fmt.Sprintf("not one sequence of the context fits its %.2f GiB of KV cache per GPU", p.KVGiB)
	}
	return fmt.Sprintf("holds %.1f of %d sequences: %.2f GiB more KV cache per GPU would hold them", held, users, p.KVGiB*(float64(users)/held-1))
}
