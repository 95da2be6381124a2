package plan

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/modelspec"
)

// TestValidateNamesTheField: an input out of range is an *InputError
// naming the planner's field, never a command-line flag (the CLI and
// launch profiles name their own settings).
func TestValidateNamesTheField(t *testing.T) {
	m, err := modelspec.Preset("qwen2.5-7b")
	if err != nil {
		t.Fatal(err)
	}
	ok := Inputs{Model: m, Server: backend.VLLM, GPUGiB: 16}
	cases := []struct {
		name  string
		edit  func(*Inputs)
		field Field
	}{
		{"no GPU memory", func(in *Inputs) { in.GPUGiB = 0 }, FieldGPUGiB},
		{"utilization above 1", func(in *Inputs) { in.VLLM.Utilization = 1.5 }, FieldUtilization},
		{"negative weights", func(in *Inputs) { in.WeightsGiB = -1 }, FieldWeightsGiB},
		{"negative context", func(in *Inputs) { in.Context = -3 }, FieldContext},
		{"negative block size", func(in *Inputs) { in.VLLM.BlockSize = -16 }, FieldBlockSize},
		{"negative slots", func(in *Inputs) { in.Server, in.LlamaCpp.Parallel = backend.LlamaCpp, -1 }, FieldParallel},
		{"negative ubatch", func(in *Inputs) { in.LlamaCpp.UBatch = -1 }, FieldUBatch},
		{"server without a capacity model", func(in *Inputs) { in.Server = backend.TGI }, FieldServer},
		{"no server", func(in *Inputs) { in.Server = "" }, FieldServer},
		{"seed formula of llama.cpp", func(in *Inputs) { in.Server, in.CapacityModel = backend.LlamaCpp, SeedFormula }, FieldCapacityModel},
		{"unknown capacity model", func(in *Inputs) { in.CapacityModel = "exact" }, FieldCapacityModel},
		{"tensor parallel 0 after defaults is 1, -2 is not", func(in *Inputs) { in.TensorParallel = -2 }, FieldTensorParallel},
		{"pipeline parallel above the limit", func(in *Inputs) { in.PipelineParallel = MaxGPUs + 1 }, FieldPipelineParallel},
		{"more stages than layers", func(in *Inputs) { in.PipelineParallel = 29 }, FieldPipelineParallel},
		{"GPU list against TP × PP", func(in *Inputs) {
			in.GPUs, in.TensorParallel = []Device{{MemoryGiB: 24}, {MemoryGiB: 24}}, 4
		}, FieldGPUs},
		{"a GPU without memory", func(in *Inputs) { in.GPUs = []Device{{MemoryGiB: 24}, {MemoryGiB: math.NaN()}} }, FieldGPUs},
		{"tensor parallel on llama.cpp", func(in *Inputs) { in.Server, in.TensorParallel = backend.LlamaCpp, 2 }, FieldTensorParallel},
		{"negative n_gpu_layers", func(in *Inputs) { n := -1; in.Server, in.LlamaCpp.NGPULayers = backend.LlamaCpp, &n }, FieldNGPULayers},
		{"tensor split of the wrong length", func(in *Inputs) {
			in.Server, in.GPUs, in.LlamaCpp.TensorSplit = backend.LlamaCpp, []Device{{MemoryGiB: 24}, {MemoryGiB: 24}}, []float64{1}
		}, FieldTensorSplit},
		{"tensor split all zero", func(in *Inputs) { in.Server, in.LlamaCpp.TensorSplit = backend.LlamaCpp, []float64{0} }, FieldTensorSplit},
		{"tensor split NaN", func(in *Inputs) { in.Server, in.LlamaCpp.TensorSplit = backend.LlamaCpp, []float64{math.NaN()} }, FieldTensorSplit},
		{"RAM infinite", func(in *Inputs) { in.LlamaCpp.RAMGiB = math.Inf(1) }, FieldRAMGiB},
		{"no adapters", func(in *Inputs) { in.VLLM.LoRA = &LoRA{MaxLoRAs: 0, MaxRank: 16} }, FieldMaxLoRAs},
		{"rank too high", func(in *Inputs) { in.VLLM.LoRA = &LoRA{MaxLoRAs: 1, MaxRank: 4096} }, FieldMaxLoRARank},
		{"unknown LoRA module", func(in *Inputs) { in.VLLM.LoRA = &LoRA{MaxLoRAs: 1, MaxRank: 16, TargetModules: []string{"lm_head"}} }, FieldLoRATargets},
		{"negative images", func(in *Inputs) { n := -1; in.VLLM.ImagesPerPrompt = &n }, FieldImagesPerPrompt},
		{"mem_fraction_static above 1", func(in *Inputs) { in.Server, in.SGLang.MemFractionStatic = backend.SGLang, 1.2 }, FieldMemFractionStatic},
		{"max_total_tokens negative", func(in *Inputs) { in.Server, in.SGLang.MaxTotalTokens = backend.SGLang, -1 }, FieldMaxTotalTokens},
		{"chunked prefill -2", func(in *Inputs) { in.Server, in.SGLang.ChunkedPrefillSize = backend.SGLang, -2 }, FieldChunkedPrefill},
		{"cuda graph batch too large", func(in *Inputs) { in.Server, in.SGLang.CUDAGraphMaxBS = backend.SGLang, MaxCUDAGraphBS+1 }, FieldCUDAGraphMaxBS},
		{"page size negative", func(in *Inputs) { in.Server, in.SGLang.PageSize = backend.SGLang, -1 }, FieldPageSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			c.edit(&in)
			_, err := Plan(in)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != c.field {
				t.Fatalf("Plan() error %v, want an *InputError for %s", err, c.field)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a command-line flag", err)
			}
		})
	}
	if _, err := Plan(ok); err != nil {
		t.Errorf("valid inputs: %v", err)
	}
}

func TestParseCapacityModel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CapacityModel
		err  bool
	}{{"", ServerAccounting, false}, {"server", ServerAccounting, false}, {"Seed", SeedFormula, false}, {"vllm", "", true}} {
		got, err := ParseCapacityModel(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseCapacityModel(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// TestCapacityModelOfRecords: calibration records and corrections name
// the formula ("seed", or the server family whose accounting it
// follows), and a correction fitted for one formula never applies to the
// other on the same server.
func TestCapacityModelOfRecords(t *testing.T) {
	m, _ := modelspec.Preset("qwen2.5-7b")
	seed := Inputs{Model: m, Server: backend.VLLM, CapacityModel: SeedFormula, GPUGiB: 15.92, Quant: "awq", Context: 32768}
	res, err := Plan(seed)
	if err != nil {
		t.Fatal(err)
	}
	rec := calibrationRecord("m", "", &res.Inputs, &res.Predictions[0], 158048, "test")
	if rec.Backend != "seed" || res.Inputs.Backend != backend.VLLM || res.Inputs.CapacityModel != SeedFormula {
		t.Errorf("record backend %q, inputs %s/%s", rec.Backend, res.Inputs.Backend, res.Inputs.CapacityModel)
	}
	var f CalibrationFile
	f.Fit(rec, "")
	vllm := seed
	vllm.CapacityModel, vllm.Corrections = ServerAccounting, &f
	if res, _ := Plan(vllm); res.Predictions[0].Correction != nil {
		t.Error("the seed formula's correction applied to vLLM's accounting")
	}
	seed.Corrections = &f
	if res, _ := Plan(seed); res.Predictions[0].Correction == nil {
		t.Error("the seed formula's correction did not apply to it")
	}
}

// TestDefaultsStayInTheFamily: Defaults fills the planned family's own
// settings (its capacity model's defaults) and leaves every other
// family's settings as given, zero here.
func TestDefaultsStayInTheFamily(t *testing.T) {
	m, err := modelspec.Preset("qwen2.5-7b")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		server              backend.Kind
		vllm, sglang, llama bool
	}{
		{backend.VLLM, true, false, false},
		{backend.SGLang, false, true, false},
		{backend.LlamaCpp, false, false, true},
		{backend.Ollama, false, false, true},
	} {
		in := Inputs{Model: m, Server: c.server, GPUGiB: 24}
		in.Defaults()
		got := []bool{
			!reflect.DeepEqual(in.VLLM, VLLMSettings{}),
			!reflect.DeepEqual(in.SGLang, SGLangSettings{}),
			!reflect.DeepEqual(in.LlamaCpp, LlamaCppSettings{}),
		}
		if want := []bool{c.vllm, c.sglang, c.llama}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: settings filled (vLLM, SGLang, llama.cpp) %v, want %v", c.server, got, want)
		}
	}
}
