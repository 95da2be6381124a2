package plan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/tinymodel"
)

// breadthLogs is testdata/breadth-logs.json: published start-up figures of
// servers on several GPUs, of MoE, vision-language and LoRA models, of
// SGLang and of llama.cpp with partial offload (source on each record,
// see testdata/SOURCES.md).
type breadthLogs struct {
	VLLM []struct {
		Name, Source, VLLMVersion, Preset, GPU, Sampler string
		GPUs                                            int     `json:"gpus"`
		TP                                              int     `json:"tensor_parallel_size"`
		PP                                              int     `json:"pipeline_parallel_size"`
		Util                                            float64 `json:"gpu_memory_utilization"`
		MaxModelLen                                     int     `json:"max_model_len"`
		Batched                                         int     `json:"max_num_batched_tokens"`
		Seqs                                            int     `json:"max_num_seqs"`
		WeightsGiB                                      float64 `json:"weights_gib"`
		AvailableKVGiB                                  float64 `json:"available_kv_gib"`
		KVTokens                                        int     `json:"kv_tokens"`
		MaxConcurrency                                  float64 `json:"max_concurrency"`
		ImageItems                                      int     `json:"image_items"`
	} `json:"vllm"`
	LoRA []struct {
		Name, Record, Quant string
		MaxLoRAs            int     `json:"max_loras"`
		MaxRank             int     `json:"max_lora_rank"`
		LoggedWeightsGiB    float64 `json:"logged_weights_gib"`
	} `json:"vllm_lora"`
	SGLang []struct {
		Name, Source, Preset, GPU string
		TP                        int     `json:"tensor_parallel_size"`
		MFS                       float64 `json:"mem_fraction_static"`
		Context                   int     `json:"context_len"`
		FreeBefore                float64 `json:"free_before_weights_gib"`
		WeightsGiB                float64 `json:"weights_gib"`
		MaxTotalNumTokens         int     `json:"max_total_num_tokens"`
	} `json:"sglang"`
	LlamaCpp []struct {
		Name, Preset, Quant string
		NLayer              int `json:"n_layer"`
		EmbdKGQA            int `json:"n_embd_k_gqa"`
		NCtx                int `json:"n_ctx"`
		NGPULayers          int `json:"n_gpu_layers"`
		Devices             []struct {
			Name           string
			KVMiB          float64 `json:"kv_mib"`
			ModelBufferMiB float64 `json:"model_buffer_mib"`
		}
		HostKVMiB float64 `json:"host_kv_mib"`
	} `json:"llamacpp"`
}

func loadBreadthLogs(t *testing.T) *breadthLogs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "breadth-logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l breadthLogs
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.VLLM) == 0 || len(l.SGLang) == 0 || len(l.LlamaCpp) == 0 || len(l.LoRA) == 0 {
		t.Fatal("breadth-logs.json lacks records")
	}
	return &l
}

func pctErr(pred, actual float64) float64 { return (pred - actual) / actual * 100 }

// TestVLLMParallelRecords holds vLLM's capacity model against published
// start-ups with tensor parallelism, a hybrid KV-cache model (gpt-oss) and
// a vision-language model, with the inputs their logs state (per-GPU
// weights as logged), within ±5% on the KV tokens and the maximum
// concurrency; and, for information, the same with the weights estimated.
func TestVLLMParallelRecords(t *testing.T) {
	t.Logf("%-44s %10s %10s %7s %9s %9s", "record", "predicted", "actual", "error%", "conc", "log conc")
	for _, r := range loadBreadthLogs(t).VLLM {
		m, err := modelspec.Preset(r.Preset)
		if err != nil {
			t.Fatal(err)
		}
		g, err := hardware.Lookup(r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		ver, err := ParseVLLMVersion(r.VLLMVersion)
		if err != nil {
			t.Fatal(err)
		}
		in := Inputs{
			Model: m, Server: backend.VLLM, GPUName: g.Name, GPUGiB: g.MemoryGiB, WeightsGiB: r.WeightsGiB,
			KVDtypes: []KVDtype{KVAuto}, Context: r.MaxModelLen,
			TensorParallel: r.TP, PipelineParallel: r.PP,
			VLLM: VLLMSettings{Utilization: r.Util, MaxNumSeqs: r.Seqs, MaxNumBatchedTokens: r.Batched, Sampler: Sampler(r.Sampler), VLLMVersion: ver},
		}
		res, err := Plan(in)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		p := res.Predictions[0]
		e := pctErr(float64(p.PredictedTokens), float64(r.KVTokens))
		ec := pctErr(p.MaxConcurrency, r.MaxConcurrency)
		t.Logf("%-44s %10d %10d %+7.2f %9.2f %9.2f", r.Name, p.PredictedTokens, r.KVTokens, e, p.MaxConcurrency, r.MaxConcurrency)
		if math.Abs(e) > 5 || math.Abs(ec) > 5 {
			t.Errorf("%s: tokens %+.2f%%, concurrency %+.2f%%, beyond ±5%%", r.Name, e, ec)
		}
		if len(p.Devices) != r.GPUs || p.ImageItems != r.ImageItems {
			t.Errorf("%s: %d devices, %d image items; want %d, %d", r.Name, len(p.Devices), p.ImageItems, r.GPUs, r.ImageItems)
		}
		if d := p.Devices[0].KVGiB - r.AvailableKVGiB; math.Abs(d) > 0.05*r.AvailableKVGiB {
			t.Errorf("%s: KV %.2f GiB per GPU, log's available %.2f", r.Name, p.Devices[0].KVGiB, r.AvailableKVGiB)
		}
		// the same with the weights estimated from the model, for information
		in.WeightsGiB = 0
		in.Quant = DefaultQuant(&m)
		if m.Arch == "gpt_oss" {
			in.Quant = QuantMXFP4
		}
		est, err := Plan(in)
		if err != nil {
			t.Fatal(err)
		}
		ep := est.Predictions[0]
		t.Logf("%-44s %10d %10d %+7.2f   (weights estimated: %.2f GiB per GPU, log %.2f)", "  "+r.Name+", weights estimated", ep.PredictedTokens, r.KVTokens,
			pctErr(float64(ep.PredictedTokens), float64(r.KVTokens)), ep.WeightsGiB, r.WeightsGiB)
	}
}

// TestVLLMLoRARecords: the published LoRA start-ups (Unsloth's vLLM with
// enable_lora) predicted with the weights estimated from the model plus
// vLLM's stacked LoRA buffers, instead of the logged weights: KV tokens
// within ±5% and the weights with LoRA within ±5% of "Model loading took".
func TestVLLMLoRARecords(t *testing.T) {
	logs := loadCapacityLogs(t)
	for _, l := range loadBreadthLogs(t).LoRA {
		var found bool
		for _, r := range logs.VLLM {
			if r.Model != l.Record {
				continue
			}
			found = true
			m, _ := presetForLog(r.Model)
			ver, _ := ParseVLLMVersion(r.VLLMVersion)
			seqs := vllmDefaultMaxNumSeqs
			if r.MaxNumSeqs != nil {
				seqs = *r.MaxNumSeqs
			}
			in := Inputs{
				Model: m, Server: backend.VLLM, GPUGiB: *r.TotalGiB, Quant: Quant(l.Quant),
				KVDtypes: []KVDtype{KVAuto}, Context: r.MaxModelLen,
				VLLM: VLLMSettings{Utilization: r.Utilization, BlockSize: r.BlockSize, MaxNumSeqs: seqs, MaxNumBatchedTokens: r.MaxNumBatchedTokens, Sampler: SamplerPyTorch, VLLMVersion: ver, LoRA: &LoRA{MaxLoRAs: l.MaxLoRAs, MaxRank: l.MaxRank}},
			}
			res, err := Plan(in)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Predictions[0]
			e, ew := pctErr(float64(p.PredictedTokens), float64(r.actualTokens())), pctErr(p.WeightsGiB, l.LoggedWeightsGiB)
			t.Logf("%-36s tokens %d vs %d (%+.2f%%), weights %.3f GiB with %.3f GiB of LoRA vs logged %.2f (%+.2f%%)",
				l.Name, p.PredictedTokens, r.actualTokens(), e, p.WeightsGiB, p.LoRAGiB, l.LoggedWeightsGiB, ew)
			if math.Abs(e) > 5 || math.Abs(ew) > 5 || p.LoRAGiB <= 0 {
				t.Errorf("%s: tokens %+.2f%%, weights %+.2f%%, LoRA %.3f GiB", l.Name, e, ew, p.LoRAGiB)
			}
		}
		if !found {
			t.Errorf("%s: no record %q in kv-capacity-logs.json", l.Name, l.Record)
		}
	}
}

// TestLoRABytes: the stacked buffers of Llama-3.2-3B at rank 64, one
// adapter, counted by hand: per layer A = 64 × (3 × 3072 [q, k, v] +
// 3072 [o] + 2 × 3072 [gate, up] + 8192 [down]) and B = 64 × (3072 +
// 1024 + 1024 [q, k, v] + 3072 [o] + 2 × 8192 [gate, up] + 3072 [down]),
// 28 layers, 2 bytes; a target list keeps only those modules; TP=2
// splits B of q and A of o.
func TestLoRABytes(t *testing.T) {
	m, _ := modelspec.Preset("llama-3.2-3b")
	layers := make([]int, m.Layers)
	for i := range layers {
		layers[i] = i
	}
	want := int64(28 * 64 * (3*3072 + 3072 + 2*3072 + 8192 + 3072 + 1024 + 1024 + 3072 + 2*8192 + 3072) * 2)
	if got := loraBytes(&m, &LoRA{MaxLoRAs: 1, MaxRank: 64}, 1, layers, 2); got != want {
		t.Errorf("all modules: %d bytes, want %d", got, want)
	}
	qv := int64(28 * 64 * (3072 + 3072 + 3072 + 1024) * 2)
	if got := loraBytes(&m, &LoRA{MaxLoRAs: 1, MaxRank: 64, TargetModules: []string{"q_proj", "v_proj"}}, 1, layers, 2); got != qv {
		t.Errorf("q and v: %d bytes, want %d", got, qv)
	}
	if a, b := loraBytes(&m, &LoRA{MaxLoRAs: 4, MaxRank: 64}, 1, layers, 2), 4*want; a != b {
		t.Errorf("4 adapters: %d, want %d", a, b)
	}
	if tp2 := loraBytes(&m, &LoRA{MaxLoRAs: 1, MaxRank: 64}, 2, layers, 2); tp2 >= want || tp2 <= want/2 {
		t.Errorf("TP=2 rank: %d bytes, want between half and all of %d (A of column layers is whole)", tp2, want)
	}
	moe, _ := modelspec.Preset("qwen3-30b-a3b")
	if got := loraBytes(&moe, &LoRA{MaxLoRAs: 1, MaxRank: 8, TargetModules: []string{"gate_proj"}}, 1, []int{0}, 2); got != 0 {
		t.Errorf("an MoE layer's experts are not wrapped: %d bytes", got)
	}
}

// TestSGLangRecords: SGLang's profile_max_num_token against the published
// start-up: exactly from the free memory the log prints before and after
// loading the weights (to the rounding of its two-decimal GB), and within
// ±5% from the GPU's total memory with the planner's start-up overheads.
func TestSGLangRecords(t *testing.T) {
	for _, r := range loadBreadthLogs(t).SGLang {
		m, _ := modelspec.Preset(r.Preset)
		cell := float64(m.Layers*vllmPerLayerElems(&m, r.TP)) * 2
		exact := sglangTokens(sglangRest(r.FreeBefore, r.WeightsGiB, r.MFS), cell)
		if e := pctErr(float64(exact), float64(r.MaxTotalNumTokens)); math.Abs(e) > 0.1 {
			t.Errorf("%s: from the logged free memory %d tokens, log %d (%+.3f%%)", r.Name, exact, r.MaxTotalNumTokens, e)
		}
		g, _ := hardware.Lookup(r.GPU)
		res, err := Plan(Inputs{Model: m, Server: backend.SGLang, GPUName: g.Name, GPUGiB: g.MemoryGiB, WeightsGiB: r.WeightsGiB,
			KVDtypes: []KVDtype{KVAuto}, Context: r.Context, TensorParallel: r.TP, SGLang: SGLangSettings{MemFractionStatic: r.MFS}})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Predictions[0]
		e := pctErr(float64(p.PredictedTokens), float64(r.MaxTotalNumTokens))
		t.Logf("%-24s server arithmetic %d, planner %d, log %d: %+.2f%% (free before weights %.2f GiB predicted, %.2f logged)",
			r.Name, exact, p.PredictedTokens, r.MaxTotalNumTokens, e, p.RequestedGiB/r.MFS, r.FreeBefore)
		if math.Abs(e) > 5 || len(p.Devices) != r.TP {
			t.Errorf("%s: %+.2f%% beyond ±5%% (%d devices)", r.Name, e, len(p.Devices))
		}
		est, err := Plan(Inputs{Model: m, Server: backend.SGLang, GPUName: g.Name, GPUGiB: g.MemoryGiB, Quant: "bf16",
			KVDtypes: []KVDtype{KVAuto}, Context: r.Context, TensorParallel: r.TP, SGLang: SGLangSettings{MemFractionStatic: r.MFS}})
		if err != nil {
			t.Fatal(err)
		}
		ep := est.Predictions[0]
		t.Logf("%-24s weights estimated: %d tokens (%+.2f%%), weights %.2f GiB per GPU against %.2f logged (information only)",
			r.Name, ep.PredictedTokens, pctErr(float64(ep.PredictedTokens), float64(r.MaxTotalNumTokens)), ep.WeightsGiB, r.WeightsGiB)
	}
}

// TestSGLangDefaults: server_args.py's memory heuristics for an RTX 4090
// (24,197 MiB: chunked prefill 2048, CUDA-graph batch 24, reserved 512 +
// 3072 + 48 + 128 MiB → mem_fraction_static 0.845) and an 80 GiB GPU at
// TP=8 (chunked prefill 8192, batch 512, reserved 14,848 MiB → 0.819).
func TestSGLangDefaults(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	in := Inputs{Model: m, Server: backend.SGLang, GPUGiB: 23.63}
	in.Defaults()
	s := in.SGLang
	if s.ChunkedPrefillSize != 2048 || s.CUDAGraphMaxBS != 24 || s.MemFractionStatic != 0.845 || s.PageSize != 1 {
		t.Errorf("RTX 4090: %+v", s)
	}
	if bs := s.CUDAGraphBS; len(bs) != 7 || bs[0] != 1 || bs[len(bs)-1] != 24 {
		t.Errorf("graph batch sizes %v, want 1 2 4 8 12 16 24", bs)
	}
	in = Inputs{Model: m, Server: backend.SGLang, GPUGiB: 80, TensorParallel: 8}
	in.Defaults()
	// reserved 512 + 12288 + 1024 + 1024 = 14848 MiB (above the 10 GiB floor)
	if s := in.SGLang; s.ChunkedPrefillSize != 8192 || s.CUDAGraphMaxBS != 512 || s.MemFractionStatic != 0.819 {
		t.Errorf("H100 TP=8: %+v", s)
	}
}

// TestLlamaCppOffloadRecords: llama.cpp's layer placement against
// published partial-offload and two-GPU start-ups: the KV buffer on each
// device exactly (to 0.01 MiB), and the offloaded weights within ±5%
// (estimated from the model's shape and the format).
func TestLlamaCppOffloadRecords(t *testing.T) {
	for _, r := range loadBreadthLogs(t).LlamaCpp {
		m := modelspec.Spec{Name: r.Name, Arch: "llama", Layers: r.NLayer, Heads: r.EmbdKGQA / 128, KVHeads: r.EmbdKGQA / 128, HeadDim: 128,
			Hidden: 8192, Intermediate: 22528, Vocab: 256000}
		var q Quant
		if r.Preset != "" {
			m, _ = modelspec.Preset(r.Preset)
			q = Quant(r.Quant)
		}
		ngl := r.NGPULayers
		in := Inputs{Model: m, Server: backend.LlamaCpp, GPUGiB: 80, Context: r.NCtx, KVDtypes: []KVDtype{KVFP16}, Quant: q, LlamaCpp: LlamaCppSettings{Parallel: 1, NGPULayers: &ngl}}
		if len(r.Devices) > 1 {
			in.GPUs = []Device{{Name: "RTX 4070 Ti", MemoryGiB: 12}, {Name: "RTX 3090 Ti", MemoryGiB: 24}}
			in.LlamaCpp.TensorSplit = []float64{12, 29}
		}
		if q == "" {
			in.WeightsGiB = 1
		}
		res, err := Plan(in)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Predictions[0]
		for i, d := range r.Devices {
			got := p.Devices[i].KVMiB
			weights := ""
			if d.ModelBufferMiB > 0 {
				weights = fmt.Sprintf(", weights %.2f MiB (log %.2f)", p.Devices[i].WeightsGiB*1024, d.ModelBufferMiB)
			}
			t.Logf("%s: %s KV %.2f MiB (log %.2f), %d layers%s", r.Name, d.Name, got, d.KVMiB, p.Devices[i].Layers, weights)
			if math.Abs(got-d.KVMiB) > 0.01 {
				t.Errorf("%s %s: KV %.3f MiB, log %.2f", r.Name, d.Name, got, d.KVMiB)
			}
			if d.ModelBufferMiB > 0 && math.Abs(pctErr(p.Devices[i].WeightsGiB*1024, d.ModelBufferMiB)) > 5 {
				t.Errorf("%s %s: weights %.2f MiB, log %.2f", r.Name, d.Name, p.Devices[i].WeightsGiB*1024, d.ModelBufferMiB)
			}
		}
		host := 0.0
		if p.Host != nil {
			host = p.Host.KVMiB
		}
		if math.Abs(host-r.HostKVMiB) > 0.01 {
			t.Errorf("%s: CPU KV %.2f MiB, log %.2f", r.Name, host, r.HostKVMiB)
		}
	}
}

// TestLlamaLayerDevices: llama.cpp's assignment of layers (the output
// layer last) for -ngl and --tensor-split, as load_tensors computes it.
func TestLlamaLayerDevices(t *testing.T) {
	count := func(where []int) map[int]int {
		c := map[int]int{}
		for _, d := range where {
			c[d]++
		}
		return c
	}
	for _, c := range []struct {
		name        string
		layers, ngl int
		split       []float64
		want        map[int]int
		outputOnGPU bool
	}{
		{"all on one GPU", 32, 33, []float64{1}, map[int]int{0: 33}, true},
		{"-ngl 32 keeps the output on the CPU", 32, 32, []float64{1}, map[int]int{0: 32, -1: 1}, false},
		{"-ngl 10 offloads the last 10", 32, 10, []float64{1}, map[int]int{0: 10, -1: 23}, false},
		{"-ngl 0 is CPU only", 32, 0, []float64{1}, map[int]int{-1: 33}, false},
		{"-ngl 999 is all", 32, 999, []float64{1}, map[int]int{0: 33}, true},
		{"even split of 41", 40, 41, []float64{1, 1}, map[int]int{0: 21, 1: 20}, true},
		{"12,29", 40, 41, []float64{12, 29}, map[int]int{0: 12, 1: 29}, true},
		{"a zero share gets nothing", 40, 41, []float64{1, 0, 1}, map[int]int{0: 21, 2: 20}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			where := llamaLayerDevices(c.layers, c.ngl, c.split)
			got := count(where)
			if fmt.Sprint(got) != fmt.Sprint(c.want) || (where[c.layers] >= 0) != c.outputOnGPU {
				t.Errorf("placement %v (output on %d), want %v", got, where[c.layers], c.want)
			}
		})
	}
}

// TestOllamaEstimateTestbed holds the port of Ollama v0.6.5's memory
// estimate (llm/memory.go, fs/ggml/ggml.go GraphSize) against the
// "offload" line the testbed's Ollama logged for the tiny model
// (testdata/ollama-0.6.5-testbed-offload.log): every memory figure, as
// Ollama formats it (format.HumanBytes2), from the same GGUF file.
func TestOllamaEstimateTestbed(t *testing.T) {
	line := ""
	f, err := os.Open(filepath.Join("testdata", "ollama-0.6.5-testbed-offload.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "msg=offload") {
			line = sc.Text()
		}
	}
	logged := map[string]string{}
	for _, kv := range regexp.MustCompile(`(\S+)="([^"]*)"`).FindAllStringSubmatch(line, -1) {
		logged[kv[1]] = kv[2]
	}
	if len(logged) < 10 {
		t.Fatalf("offload line not found or not parsed: %q", line)
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, tinymodel.DefaultSpec()); err != nil {
		t.Fatal(err)
	}
	m, err := modelspec.ReadGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	layerW, outW, _ := llamaLayerWeights(&m, "", m.WeightsBytes)
	// library=cpu: the "GPU" is the system's free memory, no minimum
	freeGiB := 22.3
	free := []int64{int64(freeGiB * GiB)}
	e := ollamaEstimate(&m, layerW, outW, 2048*4, 4, KVFP16, free, 0, -1)
	for _, c := range []struct {
		key string
		got int64
	}{
		{"memory.required.kv", e.KVBytes},
		{"memory.graph.full", e.GraphFullBytes},
		{"memory.graph.partial", e.GraphPartialBytes},
		{"memory.weights.repeating", e.WeightsRepeatingBytes},
		{"memory.weights.nonrepeating", e.WeightsNonRepeatingBytes},
		{"memory.weights.total", e.WeightsRepeatingBytes + e.WeightsNonRepeatingBytes},
		{"memory.required.full", e.RequiredFullBytes},
	} {
		if got := humanBytes2(c.got); got != logged[c.key] {
			t.Errorf("%s: %s (%d bytes), Ollama logged %s", c.key, got, c.got, logged[c.key])
		} else {
			t.Logf("%s = %s, as logged", c.key, got)
		}
	}
	if e.ModelLayers != 3 || !e.FullyLoaded {
		t.Errorf("layers.model %d, fully loaded %v", e.ModelLayers, e.FullyLoaded)
	}
}

// humanBytes2 formats bytes as Ollama's format.HumanBytes2 does.
func humanBytes2(b int64) string {
	switch {
	case b >= GiB:
		return fmt.Sprintf("%.1f GiB", float64(b)/GiB)
	case b >= MiB:
		return fmt.Sprintf("%.1f MiB", float64(b)/MiB)
	case b >= 1024:
		return fmt.Sprintf("%.1f KiB", float64(b)/1024)
	}
	return fmt.Sprintf("%d B", b)
}

// TestOllamaOffloadDecision: Ollama's estimate on GPUs: a model that
// fits one GPU whole goes there with 4 slots; one that does not fit
// whole with 4 but does with 1 gets 1; one too big for the GPU is split
// between GPU and CPU with 1 slot; with two GPUs the layers are dealt
// between them and the split passed on.
func TestOllamaOffloadDecision(t *testing.T) {
	m, _ := modelspec.Preset("llama-3.1-8b")
	plan := func(gpus []Device, ctx int) *Prediction {
		t.Helper()
		res, err := Plan(Inputs{Model: m, Server: backend.Ollama, GPUs: gpus, Quant: "q4_k_m", Context: ctx, KVDtypes: []KVDtype{KVFP16}})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Predictions[0]
	}
	p := plan([]Device{{Name: "RTX 4090", MemoryGiB: 24}}, 8192)
	if p.Ollama.Parallel != 4 || !p.Ollama.FullyLoaded || p.GPULayers != 33 || p.Host != nil {
		t.Errorf("8k on 24 GiB: parallel %d, loaded %v, %d layers, host %+v", p.Ollama.Parallel, p.Ollama.FullyLoaded, p.GPULayers, p.Host)
	}
	p = plan([]Device{{Name: "RTX 3060", MemoryGiB: 12}}, 32768)
	if p.Ollama.Parallel != 1 || p.Ollama.Ctx != 32768 {
		t.Errorf("32k on 12 GiB: parallel %d ctx %d, want 1 (4 × 32k does not fit)", p.Ollama.Parallel, p.Ollama.Ctx)
	}
	p = plan([]Device{{Name: "small", MemoryGiB: 4}}, 8192)
	if p.Ollama.Parallel != 1 || p.Ollama.FullyLoaded || p.Host == nil || p.Host.Layers == 0 || p.GPULayers != p.Ollama.Layers {
		t.Errorf("on 4 GiB: parallel %d, loaded %v, GPU layers %d of estimate %d, host %+v", p.Ollama.Parallel, p.Ollama.FullyLoaded, p.GPULayers, p.Ollama.Layers, p.Host)
	}
	p = plan([]Device{{Name: "a", MemoryGiB: 4}, {Name: "b", MemoryGiB: 4}}, 8192)
	if len(p.Ollama.TensorSplit) != 2 || p.Ollama.TensorSplit[0] == 0 || p.Ollama.TensorSplit[1] == 0 || len(p.Devices) != 2 {
		t.Errorf("two 4 GiB GPUs: split %v, devices %d", p.Ollama.TensorSplit, len(p.Devices))
	}
	if p.Devices[0].Layers+p.Devices[1].Layers+boolInt(p.Host != nil && p.Host.Output)+hostLayers(p.Host) != m.Layers+1-0 &&
		p.Devices[0].Layers+p.Devices[1].Layers+hostLayers(p.Host) != m.Layers {
		t.Errorf("layers placed %d + %d + host %d, model %d", p.Devices[0].Layers, p.Devices[1].Layers, hostLayers(p.Host), m.Layers)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hostLayers(h *HostShare) int {
	if h == nil {
		return 0
	}
	return h.Layers
}

// TestHybridKVLayout: vLLM's KV-cache groups for models that mix
// attention types (kv_cache_utils.py): gpt-oss's 12 sliding + 12 full
// make two groups of 12; Gemma 3 27B's 52 sliding + 10 full make groups
// of 10 (6 sliding, 1 full); Llama 4 Scout's 36 chunked + 12 full make
// groups of 12 (3 chunked, 1 full); a pipeline stage holds at most its
// share of a group. Blocks per sequence follow each group's window.
func TestHybridKVLayout(t *testing.T) {
	for _, c := range []struct {
		preset             string
		groups, size       int
		maxLen, perSeq     int
		stageFirst, stageN int
		stageSize          int
	}{
		{"gpt-oss-20b", 2, 12, 16384, 1024 + (2048+127+15)/16 + 1, 0, 12, 6},
		{"gemma-3-27b", 7, 10, 32768, 2048 + 6*((1023+2048+15)/16+1), 31, 31, 5},
		{"llama-4-scout", 4, 12, 32768, 2048 + 3*((8192+2048+15)/16), 24, 24, 6},
		{"qwen2.5-7b", 1, 28, 32768, 2048, 0, 14, 14},
	} {
		m, _ := modelspec.Preset(c.preset)
		l := vllmKVLayout(&m, true)
		if len(l.groups) != c.groups || l.groupSize(0, m.Layers) != c.size {
			t.Errorf("%s: %d groups of %d, want %d of %d", c.preset, len(l.groups), l.groupSize(0, m.Layers), c.groups, c.size)
		}
		if got := l.blocksPerSequence(&m, c.maxLen, 2048, 16); got != c.perSeq {
			t.Errorf("%s: %d blocks per sequence of %d, want %d", c.preset, got, c.maxLen, c.perSeq)
		}
		if got := l.groupSize(c.stageFirst, c.stageN); got != c.stageSize {
			t.Errorf("%s: layers %d..%d hold %d of a group, want %d", c.preset, c.stageFirst, c.stageFirst+c.stageN-1, got, c.stageSize)
		}
		if off := vllmKVLayout(&m, false); len(off.groups) != 1 || off.groupSize(0, m.Layers) != m.Layers {
			t.Errorf("%s without the hybrid manager: %d groups", c.preset, len(off.groups))
		}
	}
}

// TestPPPartition: vLLM's get_pp_indices spreads the remainder over the
// stages before the last.
func TestPPPartition(t *testing.T) {
	for _, c := range []struct {
		layers, pp int
		want       string
	}{{32, 2, "[16 16]"}, {61, 4, "[15 15 16 15]"}, {62, 4, "[15 16 16 15]"}, {28, 1, "[28]"}, {5, 4, "[1 1 2 1]"}} {
		if got := fmt.Sprint(ppPartition(c.layers, c.pp)); got != c.want {
			t.Errorf("%d layers over %d stages: %s, want %s", c.layers, c.pp, got, c.want)
		}
	}
}

// TestTensorParallelShapes: KV heads per rank (replicated when fewer KV
// heads than ranks), DeepSeek's MLA latent kept whole on every rank, and
// weights per rank that add up to the whole model plus what is
// replicated.
func TestTensorParallelShapes(t *testing.T) {
	for _, c := range []struct {
		kv, tp, want int
		mla          bool
	}{{8, 1, 8, false}, {8, 2, 4, false}, {8, 8, 1, false}, {4, 8, 1, false}, {2, 4, 1, false}, {128, 8, 1, true}} {
		if got := KVHeadsPerRank(c.kv, c.tp, c.mla); got != c.want {
			t.Errorf("%d KV heads over %d ranks (MLA %v): %d, want %d", c.kv, c.tp, c.mla, got, c.want)
		}
	}
	ds, _ := modelspec.Preset("deepseek-v3")
	for _, tp := range []int{1, 8} {
		res, err := Plan(Inputs{Model: ds, Server: backend.VLLM, GPUGiB: 141, Quant: "fp8", TensorParallel: tp, PipelineParallel: 1, KVDtypes: []KVDtype{KVAuto}, Context: 8192})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Predictions[0].BytesPerToken, float64(61*(512+64)*2); got != want {
			t.Errorf("DeepSeek-V3 TP=%d: %.0f bytes per token per GPU, want the whole latent %.0f", tp, got, want)
		}
	}
	m, _ := modelspec.Preset("llama-3.1-70b")
	whole := WeightsBytes(&m, "bf16")
	var sum float64
	for r := 0; r < 4; r++ {
		sum += rankShare(&m, "bf16", 4, 0, m.Layers, true, true)
	}
	if sum < 1 || sum > 1.01 {
		t.Errorf("4 ranks hold %.4f of the model, want just above 1 (norms and router replicated)", sum)
	}
	q, _ := modelspec.Preset("qwen2.5-3b") // 2 KV heads: over 4 ranks each keeps one
	if s := 4 * rankShare(&q, "bf16", 4, 0, q.Layers, true, true); s <= 1.01 {
		t.Errorf("qwen2.5-3b TP=4 replicates k and v: ranks hold %.3f of the model", s)
	}
	if whole <= 0 {
		t.Fatal("no weights")
	}
}

// TestVisionProfile: the largest image vLLM profiles with and how many of
// them: Qwen2.5-VL's max_pixels give 16,384 tokens of 65,536 patches,
// one per profiling batch under the default budget; Gemma 3's fixed 256
// tokens fill a 2,048-token budget with 8; --limit-mm-per-prompt 0 turns
// the encoder off, and the encoder's peak grows with the images.
func TestVisionProfile(t *testing.T) {
	vl, _ := modelspec.Preset("qwen2.5-vl-7b")
	if vl.Vision.Patches() != 65536 || vl.Vision.Tokens() != 16384 {
		t.Errorf("Qwen2.5-VL: %d patches, %d tokens", vl.Vision.Patches(), vl.Vision.Tokens())
	}
	if items, tokens := vllmImageItems(vl.Vision, 2048, 256, nil); items != 1 || tokens != 16384 {
		t.Errorf("Qwen2.5-VL items %d of %d tokens", items, tokens)
	}
	g, _ := modelspec.Preset("gemma-3-27b")
	if items, _ := vllmImageItems(g.Vision, 2048, 256, nil); items != 8 {
		t.Errorf("Gemma 3: %d images per profiling batch, want 8", items)
	}
	two := 2
	if items, _ := vllmImageItems(g.Vision, 2048, 1, &two); items != 2 {
		t.Errorf("Gemma 3 with a limit of 2 images and 1 sequence: %d", items)
	}
	zero := 0
	res, err := Plan(Inputs{Model: vl, Server: backend.VLLM, GPUGiB: 24, Quant: "bf16", KVDtypes: []KVDtype{KVAuto}, Context: 8192, VLLM: VLLMSettings{ImagesPerPrompt: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Predictions[0]; p.VisionGiB != 0 || p.ImageItems != 0 {
		t.Errorf("images off: vision %.3f GiB, %d items", p.VisionGiB, p.ImageItems)
	}
	one := visionEncoderBytes(vl.Vision, 1, 1)
	if visionEncoderBytes(vl.Vision, 2, 1) != 2*one || visionEncoderBytes(vl.Vision, 1, 2) >= one {
		t.Error("the encoder's peak grows with the images and shrinks with tensor parallelism")
	}
}

// TestLlamaCppChunkedKV: llama.cpp gives Llama 4's chunked layers the
// iSWA cache's smaller size, like sliding-window layers: 12 global layers
// of 32,768 cells and 36 chunked ones of pad(8192 + 512) = 8,704, 4,096
// bytes per cell per layer at f16.
func TestLlamaCppChunkedKV(t *testing.T) {
	m, _ := modelspec.Preset("llama-4-scout")
	kv, err := llamaKVSize(&m, 32768, 1, 512, KVFP16, KVFP16)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(12*32768+36*8704) * 4096; kv.KBytes+kv.VBytes != want || kv.SWACells != 8704 {
		t.Errorf("KV %d bytes over %d/%d cells, want %d over 32768/8704", kv.KBytes+kv.VBytes, kv.Cells, kv.SWACells, want)
	}
}
