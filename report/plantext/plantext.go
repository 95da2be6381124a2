// Package plantext writes the planner's results as text: the plan's table
// of KV dtypes side by side with its one-line verdict (servebench plan),
// and a prediction held against a real server's capacity (servebench
// calibrate).
package plantext

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/plan"
)

// serverTitle is how text output names each server family.
var serverTitle = map[backend.Kind]string{backend.VLLM: "vLLM", backend.SGLang: "SGLang", backend.LlamaCpp: "llama.cpp", backend.Ollama: "Ollama"}

// modelTitle names the capacity model of a plan: the seed planner, or
// the server family whose accounting it follows.
func modelTitle(in *plan.InputsOut) string {
	if in.CapacityModel == plan.SeedFormula {
		return "the seed planner"
	}
	return serverTitle[in.Backend]
}

// cellsSized reports whether the plan is llama.cpp's or Ollama's, whose
// KV cache is sized in cells by the context rather than by free memory.
func cellsSized(in *plan.InputsOut) bool {
	return in.Backend == backend.LlamaCpp || in.Backend == backend.Ollama
}

// gpuTitle names the GPU (or GPUs) for text output.
func gpuTitle(r *plan.Result) string {
	if len(r.Inputs.GPUs) > 1 {
		return plan.DevicesTitle(r.Inputs.GPUs)
	}
	if r.Inputs.GPU != "" {
		return strings.TrimPrefix(strings.TrimPrefix(r.Inputs.GPU, "NVIDIA "), "GeForce ")
	}
	return fmt.Sprintf("a %.2f GiB GPU", r.Inputs.GPUGiB)
}

// gpuMemory is the GPU memory for the title: "23.63 GiB", "23.63 GiB
// each", or each GPU's when they differ.
func gpuMemory(in *plan.InputsOut) string {
	if len(in.GPUs) <= 1 {
		return fmt.Sprintf("%.2f GiB", in.GPUGiB)
	}
	mem := make([]string, len(in.GPUs))
	same := true
	for i, g := range in.GPUs {
		mem[i] = fmt.Sprintf("%.2f", g.MemoryGiB)
		same = same && g.MemoryGiB == in.GPUs[0].MemoryGiB
	}
	if same {
		return mem[0] + " GiB each"
	}
	return strings.Join(mem, " + ") + " GiB"
}

// gpus is "1 GPU" or "n GPUs".
func gpus(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// verdict is the one line a person can act on: what fits, in blocks,
// tokens and sequences of the context, for each dtype; or what does not
// fit and by how much.
func verdict(r *plan.Result) string {
	head := fmt.Sprintf("%s on %s with %s: ", r.Model.Name, gpuTitle(r), modelTitle(&r.Inputs))
	if len(r.Predictions) == 0 {
		return head + "no prediction"
	}
	if short, all := commonShortfall(r); all && !cellsSized(&r.Inputs) {
		p := r.Predictions[0]
		return head + fmt.Sprintf("does not fit: weights %.2f GiB plus overheads exceed the %.2f GiB it may use by %.2f GiB; use a smaller quantization (--quant), a larger GPU or more GPUs", p.WeightsGiB, p.RequestedGiB, short)
	}
	var parts []string
	for i, p := range r.Predictions {
		if !p.Fits {
			if cellsSized(&r.Inputs) {
				parts = append(parts, fmt.Sprintf("does not fit with %s KV: short by %.2f GiB (at most %s cells fit)", p.KVCacheDtype, p.ShortfallGiB, thousands(p.FitTokens)))
			} else {
				parts = append(parts, fmt.Sprintf("does not fit with %s KV: weights and overheads exceed the memory by %.2f GiB", p.KVCacheDtype, p.ShortfallGiB))
			}
			continue
		}
		switch {
		case cellsSized(&r.Inputs):
			s := fmt.Sprintf("%s KV %.2f MiB for %s cells = %s of %s", p.KVCacheDtype, p.KVMiB, thousands(p.Cells), plural(p.MaxConcurrency, "slot"), shortTokens(p.Context))
			if i == 0 {
				s += fmt.Sprintf(", fits (up to %s cells)", thousands(p.FitTokens))
			}
			parts = append(parts, s)
		case i == 0:
			s := fmt.Sprintf("%s tokens = %s sequences of %s with %s KV", shortTokens(p.PredictedTokens), trim1(p.MaxConcurrency), shortTokens(p.Context), p.KVCacheDtype)
			if p.Blocks > 0 && r.Inputs.Backend != backend.SGLang {
				s = fmt.Sprintf("%s blocks = ", thousands(p.Blocks)) + s
			}
			parts = append(parts, s)
		default:
			parts = append(parts, fmt.Sprintf("%s with %s", trim1(p.MaxConcurrency), p.KVCacheDtype))
		}
	}
	return head + strings.Join(parts, "; ")
}

// commonShortfall reports whether no dtype fits and by how much the
// first misses (the weights do not depend on the KV dtype).
func commonShortfall(r *plan.Result) (float64, bool) {
	for _, p := range r.Predictions {
		if p.Fits {
			return 0, false
		}
	}
	return r.Predictions[0].ShortfallGiB, true
}

// WriteText writes the plan as a table, dtypes side by side, then the
// verdict and warnings.
func WriteText(out io.Writer, r *plan.Result) error {
	w := &errWriter{w: out}
	in := r.Inputs
	writeTitle(w, r)
	t := predTable{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight), r: r}
	t.row("KV dtype", func(p *plan.Prediction) string { return p.KVCacheDtype })
	t.row("bytes/token", func(p *plan.Prediction) string { return thousands(int(p.BytesPerToken + 0.5)) })
	switch {
	case cellsSized(&in):
		t.cellRows()
	case in.Backend == backend.SGLang:
		t.sglangRows()
	default:
		t.blockRows()
	}
	corrected := t.calibrationRows()
	if err := t.tw.Flush(); err != nil {
		return err
	}
	if err := writeDevices(w, r); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, verdict(r))
	if corrected {
		fmt.Fprintln(w, "(corrected by calibration: see the factor row)")
	}
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	return w.err
}

// writeTitle writes the plan's first lines: the model, GPU and settings,
// then the weights (per GPU when split) and an MoE's parameters.
func writeTitle(w io.Writer, r *plan.Result) {
	in := r.Inputs
	fmt.Fprintf(w, "%s on %s (%s) with %s", r.Model.Name, gpuTitle(r), gpuMemory(&in), modelTitle(&in))
	if in.VLLMVersion != "" {
		fmt.Fprintf(w, " %s", in.VLLMVersion)
		if in.EnforceEager {
			fmt.Fprint(w, " --enforce-eager")
		}
	}
	if in.GPUMemoryUtilization > 0 {
		fmt.Fprintf(w, ", gpu_memory_utilization %.2f", in.GPUMemoryUtilization)
	}
	if in.TensorParallel > 1 || in.PipelineParallel > 1 {
		fmt.Fprintf(w, ", tensor parallel %d × pipeline parallel %d", max(in.TensorParallel, 1), max(in.PipelineParallel, 1))
	}
	fmt.Fprintln(w)
	if len(r.Predictions) == 0 {
		return
	}
	perGPU := ""
	if !cellsSized(&in) && len(r.Predictions[0].Devices) > 1 {
		perGPU = " per GPU"
	}
	fmt.Fprintf(w, "weights %.3f GiB%s (%s)", r.Predictions[0].WeightsGiB, perGPU, in.WeightsSource)
	if r.Model.IsMoE() {
		fmt.Fprintf(w, "; %.1fB parameters, %.1fB active per token", float64(r.TotalParams)/1e9, float64(r.ActiveParams)/1e9)
	}
	fmt.Fprint(w, "\n\n")
}

// predTable is the plan's table: one row per figure, one column per
// prediction (KV dtype).
type predTable struct {
	tw *tabwriter.Writer
	r  *plan.Result
}

// row writes a row: the label, then f of each prediction.
func (t predTable) row(label string, f func(p *plan.Prediction) string) {
	fmt.Fprint(t.tw, label+"\t")
	for i := range t.r.Predictions {
		fmt.Fprint(t.tw, f(&t.r.Predictions[i])+"\t")
	}
	fmt.Fprintln(t.tw)
}

// some tells whether f holds for any prediction.
func (t predTable) some(f func(p *plan.Prediction) bool) bool {
	for i := range t.r.Predictions {
		if f(&t.r.Predictions[i]) {
			return true
		}
	}
	return false
}

// rowIf writes the row when when holds for some prediction.
func (t predTable) rowIf(when func(p *plan.Prediction) bool, label string, f func(p *plan.Prediction) string) {
	if t.some(when) {
		t.row(label, f)
	}
}

// cellRows are the rows of a server sized in cells (llama.cpp, Ollama):
// cells, KV and compute buffer, the layers on GPUs when not all are,
// and the cells and slots that fit.
func (t predTable) cellRows() {
	t.row("cells", func(p *plan.Prediction) string { return thousands(p.Cells) })
	t.row("KV MiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.2f", p.KVMiB) })
	t.row("compute buffer MiB (est.)", func(p *plan.Prediction) string { return fmt.Sprintf("%.0f", p.ComputeBufferMiB) })
	t.rowIf(func(p *plan.Prediction) bool {
		return p.ModelLayers > 0 && p.GPULayers != p.ModelLayers || len(p.Devices) > 1
	},
		"layers on GPUs", func(p *plan.Prediction) string { return fmt.Sprintf("%d/%d", p.GPULayers, p.ModelLayers) })
	t.row("max cells that fit", func(p *plan.Prediction) string { return thousands(p.FitTokens) })
	t.row(fmt.Sprintf("slots of %s", thousands(t.r.Predictions[0].Context)), func(p *plan.Prediction) string { return trim1(p.MaxConcurrency) })
}

// sglangRows are SGLang's rows: its static memory fraction, the pool
// and KV cache, its token pool and the sequences it holds.
func (t predTable) sglangRows() {
	in := &t.r.Inputs
	t.row("mem_fraction_static", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.SGLang.MemFractionStatic) })
	t.row("weights + KV pool GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.RequestedGiB) })
	t.row("KV cache GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.KVGiB) })
	t.row("max_total_num_tokens", func(p *plan.Prediction) string { return thousands(p.PredictedTokens) })
	t.row(fmt.Sprintf("sequences of %s", thousands(in.Context)), func(p *plan.Prediction) string { return fmt.Sprintf("%.2f", p.MaxConcurrency) })
}

// blockRows are the rows of a server sized in KV blocks (vLLM, TGI):
// what the memory profile takes (or the seed formula's overhead), then
// the KV cache, blocks, tokens and sequences.
func (t predTable) blockRows() {
	in := &t.r.Inputs
	if in.CapacityModel != plan.SeedFormula {
		t.profileRows()
	} else {
		t.row("overhead GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.2f", p.OverheadGiB) })
	}
	t.row("KV cache GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.KVGiB) })
	t.row(fmt.Sprintf("blocks of %d", in.BlockSize), func(p *plan.Prediction) string { return thousands(p.Blocks) })
	t.row("tokens", func(p *plan.Prediction) string { return thousands(p.PredictedTokens) })
	t.row(fmt.Sprintf("sequences of %s", thousands(in.Context)), func(p *plan.Prediction) string { return fmt.Sprintf("%.2f", p.MaxConcurrency) })
}

// profileRows are what vLLM's memory profile takes besides the weights:
// the activation peak and non-torch memory, then the attention backend's
// buffers, vision encoder, LoRA weights and hybrid KV groups where some
// prediction has them.
func (t predTable) profileRows() {
	t.row("activation peak GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.ActivationGiB) })
	t.row("non-torch GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.2f", p.NonTorchGiB) })
	t.rowIf(func(p *plan.Prediction) bool { return p.AttentionBackendGiB > 0 },
		"FlashInfer buffers GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.AttentionBackendGiB) })
	t.rowIf(func(p *plan.Prediction) bool { return p.VisionGiB > 0 }, "vision encoder peak GiB", func(p *plan.Prediction) string {
		return fmt.Sprintf("%.3f (%d×%s)", p.VisionGiB, p.ImageItems, shortTokens(p.ImageTokens))
	})
	t.rowIf(func(p *plan.Prediction) bool { return p.LoRAGiB > 0 },
		"LoRA weights GiB", func(p *plan.Prediction) string { return fmt.Sprintf("%.3f", p.LoRAGiB) })
	t.rowIf(func(p *plan.Prediction) bool { return p.KVGroups > 0 },
		"KV groups (hybrid)", func(p *plan.Prediction) string { return fmt.Sprint(p.KVGroups) })
}

// calibrationRows writes the calibration factor and the uncorrected
// tokens when some prediction was corrected, and says whether one was.
func (t predTable) calibrationRows() bool {
	if !t.some(func(p *plan.Prediction) bool { return p.Correction != nil }) {
		return false
	}
	t.row("calibration factor", func(p *plan.Prediction) string {
		if p.Correction == nil {
			return "-"
		}
		return fmt.Sprintf("×%.4f", p.Correction.Factor)
	})
	t.row("uncorrected tokens", func(p *plan.Prediction) string {
		if p.Correction == nil {
			return "-"
		}
		return thousands(p.UncorrectedTokens)
	})
	return true
}

// writeDevices writes, for a plan on several GPUs or with layers on the
// CPU, where the first KV dtype's memory goes: one row per GPU (per
// worker for vLLM and SGLang) and one for the CPU; and Ollama's own
// estimate behind its offload decision.
func writeDevices(w io.Writer, r *plan.Result) error {
	if len(r.Predictions) == 0 {
		return nil
	}
	p := r.Predictions[0]
	if o := p.Ollama; o != nil {
		fmt.Fprintf(w, "\nOllama v0.6.5's estimate (%s KV, OLLAMA_NUM_PARALLEL %d, ctx %s): offload %d/%d layers, KV %.2f GiB, graph %.2f GiB full / %.2f partial, required %.2f GiB (%.2f on GPUs)\n",
			p.KVCacheDtype, o.Parallel, thousands(o.Ctx), o.Layers, o.ModelLayers, float64(o.KVBytes)/plan.GiB, float64(o.GraphFullBytes)/plan.GiB,
			float64(o.GraphPartialBytes)/plan.GiB, float64(o.RequiredFullBytes)/plan.GiB, float64(o.RequiredPartialBytes)/plan.GiB)
	}
	if len(p.Devices) <= 1 && p.Host == nil {
		return nil
	}
	fmt.Fprintf(w, "\nwhere the memory goes (%s KV):\n", p.KVCacheDtype)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cells := cellsSized(&r.Inputs)
	if cells {
		fmt.Fprintln(tw, "device\tGPU\tlayers\tweights GiB\tKV MiB\tcompute MiB\tfree GiB\t")
	} else {
		fmt.Fprintln(tw, "rank\tGPU\tstage\tlayers\tKV heads\tweights GiB\tKV GiB\tactivation GiB\t")
	}
	for _, d := range p.Devices {
		name := plan.DevicesTitle([]plan.Device{d.Device})
		if cells {
			fmt.Fprintf(tw, "GPU %d\t%s\t%d\t%.3f\t%.2f\t%.0f\t%.2f\t\n", d.Rank, name, d.Layers, d.WeightsGiB, d.KVMiB, d.ComputeBufferMiB, d.FreeGiB)
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t\n", d.Rank, name, d.Stage, d.Layers, d.KVHeads, d.WeightsGiB, d.KVGiB, d.ActivationGiB)
		}
	}
	if h := p.Host; h != nil {
		ram := "-"
		if h.RAMGiB > 0 {
			ram = fmt.Sprintf("%.2f", h.RAMGiB-h.WeightsGiB-h.KVGiB)
		}
		out := ""
		if h.Output {
			out = " + output"
		}
		fmt.Fprintf(tw, "CPU\tsystem memory\t%d%s\t%.3f\t%.2f\t-\t%s\t\n", h.Layers, out, h.WeightsGiB, h.KVMiB, ram)
	}
	return tw.Flush()
}

// WriteRecommendation writes plan --users' answer: the configurations that
// hold the users, best first, with their headroom and the simulator's
// predicted throughput (a dash until the simulator fills the hook), or,
// when none does, the nearest and what each lacks.
func WriteRecommendation(out io.Writer, rec *plan.Recommendation) error {
	w := &errWriter{w: out}
	gpu := plan.DevicesTitle([]plan.Device{rec.GPU})
	fmt.Fprintf(w, "what to run: %s for %s on up to %d × %s (%.2f GiB each); %d configurations tried\n\n",
		rec.Model, usersWords(rec), rec.MaxGPUs, gpu, rec.GPU.MemoryGiB, rec.Tried)
	list := rec.Fits
	if len(list) == 0 {
		list = rec.Nearest
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tbackend\tweights\tKV\tGPUs\tsequences\theadroom\tweights GiB/GPU\tpredicted tok/s\tTTFT p50\tTPOT p50\tSLO\tpredicted users\tuser headroom\t")
	for i, c := range list {
		if i == 12 {
			break
		}
		tok, ttft, tpot, verdict := predictedCells(&c)
		rank := fmt.Sprint(i + 1)
		if !c.Holds {
			rank = "-"
		}
		users, headroom := usersCells(&c)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f\t%+.0f%%\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", rank, serverTitle[c.Backend], c.Quant, c.KVDtype, c.GPUs, c.Sequences, c.HeadroomPct, c.WeightsGiBPerGPU, tok, ttft, tpot, verdict, users, headroom)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(rec.Fits) == 0 {
		fmt.Fprintf(w, "none holds %d sequences of %s on up to %d × %s; the nearest:\n", rec.Users, thousands(rec.Context), rec.MaxGPUs, gpu)
		for _, c := range rec.Nearest {
			fmt.Fprintf(w, "- %s, %s weights, %s KV, %s: %s\n", serverTitle[c.Backend], c.Quant, c.KVDtype, gpus(c.GPUs), c.Missing)
		}
		fmt.Fprintln(w, "fewer users, a shorter context, more or larger GPUs, or a smaller weight format would close the gap")
		return w.err
	}
	b := rec.Fits[0]
	fmt.Fprintf(w, "best: %s with %s weights and %s KV on %d × %s: %.1f sequences of %s (%d needed, %+.0f%% headroom)\n",
		serverTitle[b.Backend], b.Quant, b.KVDtype, b.GPUs, gpu, b.Sequences, shortTokens(rec.Context), rec.Users, b.HeadroomPct)
	if b.SLOVerdict != "" {
		fmt.Fprintf(w, "its %d simulated users: %s\n", rec.Users, b.SLOVerdict)
	}
	if users, headroom := usersCells(&b); b.PredictedUsers != nil {
		fmt.Fprintf(w, "its predicted capacity: %s users (%s headroom)\n", users, headroom)
	}
	fmt.Fprintln(w, rankingWords(rec))
	if rec.QuantAsked != "" {
		fmt.Fprintf(w, "llama.cpp and Ollama load GGUF files: for %s weights they are shown in the GGUF format they would load (%s)\n",
			rec.QuantAsked, plan.FormatFor(backend.LlamaCpp, rec.QuantAsked))
	}
	writePredictionNotes(w, rec, list[:min(len(list), 12)])
	return w.err
}

// writePredictionNotes writes where the predictions of the listed
// configurations come from, whether conversations overflow the context,
// and each configuration's notes: why one was not simulated or has no
// predicted users, and the simulated turns that failed.
func writePredictionNotes(w io.Writer, rec *plan.Recommendation, list []plan.Candidate) {
	if rec.PerformanceSource != "" {
		fmt.Fprintf(w, "predicted tok/s, TTFT p50, TPOT p50 and SLO are %s\n", rec.PerformanceSource)
	}
	if rec.Overflows {
		fmt.Fprintf(w, "conversations overflow: the p95 conversation holds %s tokens, more than the %s a sequence (vLLM, SGLang) or a slot (llama.cpp, Ollama) holds: the turns past it are refused; a --context of at least %s holds it\n",
			thousands(rec.SequenceTokens), thousands(rec.Context), thousands(rec.SequenceTokens))
	}
	if rec.CapacitySource != "" {
		fmt.Fprintf(w, "predicted users and user headroom (predicted users − %d) are %s\n", rec.Users, rec.CapacitySource)
	}
	var notes []string
	for _, c := range list {
		if c.ThroughputNote != "" && !slices.Contains(notes, c.ThroughputNote) {
			notes = append(notes, c.ThroughputNote)
		}
		if n := "no predicted users: " + c.CapacityNote; c.CapacityNote != "" && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	for _, n := range notes {
		if !strings.HasPrefix(n, "no predicted users: ") {
			n = "not simulated: " + n
		}
		fmt.Fprintf(w, "—: %s\n", n)
	}
	for i, c := range list {
		if c.ErrorNote != "" {
			fmt.Fprintf(w, "rank %d, %s %s %s KV: %s\n", i+1, serverTitle[c.Backend], c.Quant, c.KVDtype, c.ErrorNote)
		}
	}
}

// usersCells are a configuration's predicted users with their interval
// and its headroom in users as the table shows them: "1,120 (1,120–1,279)"
// and "+1,100"; "≥ 320" and "≥ +300" where every number the search tried
// held; "—" where none was predicted.
func usersCells(c *plan.Candidate) (users, headroom string) {
	if c.PredictedUsers == nil || c.HeadroomUsers == nil {
		return "—", "—"
	}
	n, h := int(*c.PredictedUsers), int(*c.HeadroomUsers)
	headroom = thousands(h)
	if h >= 0 {
		headroom = "+" + headroom
	}
	lo, hi := c.PredictedUsersLow, c.PredictedUsersHigh
	switch {
	case hi == nil:
		return "≥ " + thousands(n), "≥ " + headroom
	case lo == nil:
		return fmt.Sprintf("%s (≤ %s)", thousands(n), thousands(int(*hi))), headroom
	}
	return fmt.Sprintf("%s (%s–%s)", thousands(n), thousands(int(*lo)), thousands(int(*hi))), headroom
}

// usersWords is what a recommendation is for: "16 users × 32,768
// tokens", or for people "20 users, each holding up to 1,958 tokens (p95
// of a conversation) of a 4,096-token context".
func usersWords(rec *plan.Recommendation) string {
	if rec.Overflows {
		return fmt.Sprintf("%d users, each holding up to the whole %s-token context (a conversation's p95, %s tokens, outgrows it),",
			rec.Users, thousands(rec.Context), thousands(rec.SequenceTokens))
	}
	if rec.SequenceTokens > 0 {
		return fmt.Sprintf("%d users, each holding up to %s tokens (p95 of a conversation) of a %s-token context,",
			rec.Users, thousands(min(rec.SequenceTokens, rec.Context)), thousands(rec.Context))
	}
	return fmt.Sprintf("%d users × %s tokens", rec.Users, thousands(rec.Context))
}

// predictedCells are a configuration's predicted throughput, TTFT p50,
// TPOT p50 and SLO verdict as the table shows them ("—" where none).
func predictedCells(c *plan.Candidate) (tok, ttft, tpot, verdict string) {
	tok, ttft, tpot, verdict = "—", "—", "—", "—"
	if c.PredictedTokS != nil {
		tok = fmt.Sprintf("%.0f", *c.PredictedTokS)
	}
	if c.PredictedTTFTP50Ms != nil {
		ttft = fmtMs(*c.PredictedTTFTP50Ms)
	}
	if c.PredictedTPOTP50Ms != nil {
		tpot = fmtMs(*c.PredictedTPOTP50Ms)
	}
	if c.HoldsSLO != nil {
		verdict = map[bool]string{true: "holds", false: "breaks"}[*c.HoldsSLO]
	}
	return tok, ttft, tpot, verdict
}

// rankingWords says how the configurations are ranked.
func rankingWords(rec *plan.Recommendation) string {
	const rest = "weight precision (16-bit, 8-bit, 4-bit), then KV cache precision (lossless, 8-bit, 4-bit), then fewer GPUs, then headroom"
	if rec.SLO != "" {
		return fmt.Sprintf("ranked by holding the %d users within %s as simulated, then %s in predicted users (KV headroom where none is predicted)", rec.Users, rec.SLO, rest)
	}
	return "ranked by " + rest
}

// fmtMs prints milliseconds as ms below a second, else as seconds.
func fmtMs(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// WriteComparison writes what servebench calibrate found: prediction,
// actual and error (in tokens, KV MiB and total MiB, as far as the server
// reported them), vLLM's memory terms side by side, the notes and the
// plan's warnings, then the correction stored in file, if one was fitted.
func WriteComparison(out io.Writer, res *plan.Result, c plan.Comparison, notes []string, fitted *plan.Correction, file string) error {
	w := &strings.Builder{}
	r, p := c.Record, res.Predictions[0]
	fmt.Fprintf(w, "%s with %s on %.2f GiB, KV %s\n", res.Model.Name, r.Backend, r.GPUGiB, r.KVCacheDtype)
	if r.ActualTokens > 0 {
		fmt.Fprintf(w, "predicted %s tokens, actual %s tokens (%s): error %+.1f%%\n", thousands(r.PredictedTokens), thousands(r.ActualTokens), r.Source, r.ErrorPct)
	}
	if r.ActualKVMiB != nil && c.KVErrorPct != nil {
		fmt.Fprintf(w, "predicted KV %.2f MiB, actual %.2f MiB: error %+.1f%%\n", *r.PredictedKVMiB, *r.ActualKVMiB, *c.KVErrorPct)
	}
	if c.ActualTotalMiB != nil {
		fmt.Fprintf(w, "predicted total %.1f MiB (weights %.2f GiB + KV + compute buffer %.1f MiB), server size %.1f MiB: error %+.1f%%\n",
			*c.PredictedTotalMiB, p.WeightsGiB, p.ComputeBufferMiB, *c.ActualTotalMiB, *c.TotalErrorPct)
	}
	if len(c.Terms) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "memory term\tpredicted GiB\tlog GiB\tpredicted − log\t")
		for _, t := range c.Terms {
			fmt.Fprintf(tw, "%s\t%.3f\t%.2f\t%+.2f\t\n", t.Term, t.PredictedGiB, t.LogGiB, t.DiffGiB)
		}
		tw.Flush()
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	if fitted != nil {
		fmt.Fprintf(w, "stored correction ×%.4f for (%s, %s, %s) in %s\n", fitted.Factor, fitted.Backend, fitted.GPU, fitted.KVDtype, file)
	}
	_, err := io.WriteString(out, w.String())
	return err
}

// errWriter keeps the first write error so that WriteText can report it
// once instead of checking every Fprint.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// thousands formats n with commas (158,048), as plan's and calibrate's
// text output print token counts.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// shortTokens writes 158048 as "158k" and 32768 as "32k".
func shortTokens(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1024 && n%1024 == 0:
		return fmt.Sprintf("%dk", n>>10)
	case n >= 10000:
		return fmt.Sprintf("%.0fk", float64(n)/1000)
	}
	return thousands(n)
}

// trim1 formats x with one decimal.
func trim1(x float64) string { return fmt.Sprintf("%.1f", x) }

// plural is "1 slot" or "2.0 slots".
func plural(x float64, unit string) string {
	if x == 1 {
		return "1 " + unit
	}
	return trim1(x) + " " + unit + "s"
}
