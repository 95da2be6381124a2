package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/hardware"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/internal/jsonerr"
	"github.com/servebench/servebench/record"
)

// errorPct is the calibration error: (predicted − actual) / actual × 100,
// rounded to one decimal as the seed's calibration records are.
func errorPct(predicted, actual int) float64 {
	if actual == 0 {
		return math.NaN()
	}
	return math.Round(float64(predicted-actual)/float64(actual)*1000) / 10
}

// calibrationRecord builds a seed-shaped calibration record from a
// prediction and the capacity a real server reported.
func calibrationRecord(model, preset string, in *InputsOut, p *Prediction, actual int, source string) record.Calibration {
	pred := p.PredictedTokens
	if p.Correction != nil {
		pred = p.UncorrectedTokens
	}
	return record.Calibration{
		Model: model, Preset: preset, KVCacheDtype: p.KVCacheDtype, GPUGiB: in.GPUGiB,
		WeightsGiB: p.WeightsGiB, GPUMemoryUtilization: in.GPUMemoryUtilization,
		PredictedTokens: pred, ActualTokens: actual, ErrorPct: errorPct(pred, actual),
		Backend: formulaName(in.Backend, in.CapacityModel), Source: source,
	}
}

// Correction is a multiplicative correction of one (capacity model, GPU,
// KV dtype) capacity, learned by `calibrate --fit`: Factor = actual /
// predicted.
type Correction struct {
	// Backend names the capacity model as calibration records do: "seed",
	// or the server family whose accounting it follows ("vllm",
	// "llamacpp", "ollama"). The key keeps its name for the files written
	// before there were two inputs.
	Backend string  `json:"backend"`
	GPU     string  `json:"gpu"`
	KVDtype string  `json:"kv_cache_dtype"`
	Factor  float64 `json:"factor"`
	// PredictedTokens and ActualTokens are the pair it was fitted on.
	PredictedTokens int    `json:"predicted_tokens"`
	ActualTokens    int    `json:"actual_tokens"`
	Source          string `json:"source,omitempty"`
}

// CalibrationFile is the --calibration file: corrections plus the records
// they came from.
type CalibrationFile struct {
	Corrections []Correction         `json:"corrections"`
	Records     []record.Calibration `json:"calibration,omitempty"`
}

// correctionKey names the GPU by catalog name or, without one, by its
// memory, so that a correction fitted with --gpu-gib 15.92 applies again
// to --gpu-gib 15.92.
func correctionKey(gpu string, gib float64) string {
	if gpu != "" {
		return hardware.CanonicalKey(gpu)
	}
	return fmt.Sprintf("%.2fgib", gib)
}

// LoadCalibration reads the calibration file at path (at most
// filecap.Config, 16 MiB). A missing file is an error: `plan --calibration
// FILE` must not plan without the corrections it was asked to apply.
func LoadCalibration(path string) (*CalibrationFile, error) {
	b, err := filecap.ReadFile(path, filecap.Config, "a calibration file")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("calibration file %s: %v", path, err)
	}
	f, err := parseCalibration(b)
	if err != nil {
		return nil, fmt.Errorf("calibration file %s: %v", path, err)
	}
	return f, nil
}

// LoadOrNewCalibration is LoadCalibration, except that a missing file is
// an empty one: `calibrate --fit --calibration FILE` creates it.
func LoadOrNewCalibration(path string) (*CalibrationFile, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return &CalibrationFile{}, nil
	}
	return LoadCalibration(path)
}

// parseCalibration decodes and checks a calibration file's bytes.
func parseCalibration(b []byte) (*CalibrationFile, error) {
	var f CalibrationFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, jsonerr.Describe(err)
	}
	for i, c := range f.Corrections {
		if !(c.Factor > 0 && c.Factor < 100) {
			return nil, fmt.Errorf("corrections[%d].factor = %v is out of range", i, c.Factor)
		}
	}
	return &f, nil
}

// Save writes f to path (atomically: a temporary file then rename).
func (f *CalibrationFile) Save(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Fit stores (replacing any earlier one) the correction for this
// backend, GPU and KV dtype, and keeps the record.
func (f *CalibrationFile) Fit(rec record.Calibration, gpu string) Correction {
	c := Correction{
		Backend: rec.Backend, GPU: correctionKey(gpu, rec.GPUGiB), KVDtype: rec.KVCacheDtype,
		Factor:          float64(rec.ActualTokens) / float64(rec.PredictedTokens),
		PredictedTokens: rec.PredictedTokens, ActualTokens: rec.ActualTokens, Source: rec.Source,
	}
	out := f.Corrections[:0]
	for _, o := range f.Corrections {
		if !(o.Backend == c.Backend && o.GPU == c.GPU && o.KVDtype == c.KVDtype) {
			out = append(out, o)
		}
	}
	f.Corrections = append(out, c)
	sort.Slice(f.Corrections, func(i, j int) bool {
		a, b := f.Corrections[i], f.Corrections[j]
		return a.Backend+a.GPU+a.KVDtype < b.Backend+b.GPU+b.KVDtype
	})
	f.Records = append(f.Records, rec)
	return c
}

// apply multiplies the prediction's tokens by the matching correction, if
// any, keeping the uncorrected figure; blocks and concurrency follow.
func (f *CalibrationFile) apply(formula string, gpu string, gib float64, p *Prediction) {
	key := correctionKey(gpu, gib)
	for i := range f.Corrections {
		c := f.Corrections[i]
		if c.Backend != formula || c.GPU != key || !strings.EqualFold(c.KVDtype, p.KVCacheDtype) {
			continue
		}
		p.UncorrectedTokens = p.PredictedTokens
		p.Correction = &c
		tokens := int(math.Floor(float64(p.PredictedTokens) * c.Factor))
		if p.BlockSize > 0 && p.Blocks > 0 {
			p.Blocks = tokens / p.BlockSize
			tokens = p.Blocks * p.BlockSize
		}
		if p.PredictedTokens > 0 {
			p.KVGiB = round(p.KVGiB*float64(tokens)/float64(p.PredictedTokens), 3)
			p.MaxConcurrency = round(p.MaxConcurrency*float64(tokens)/float64(p.PredictedTokens), 2)
		}
		p.PredictedTokens = tokens
		return
	}
}

// actual is the capacity a real server reported, for compare.
type actual struct {
	// Tokens is the KV capacity in tokens (vLLM blocks × block size;
	// llama.cpp/Ollama cells); 0 when unknown.
	Tokens int
	// KVMiB is llama.cpp's logged KV buffer, TotalMiB Ollama's /api/ps
	// size in MiB; nil when not known.
	KVMiB, TotalMiB *float64
	// Source names where the figures came from (a log path, a URL).
	Source string
	// Terms are the memory terms a vLLM log states, for compare's
	// term-by-term table; the zero value when there is no log.
	Terms memoryTerms
}

// memoryTerms are the GiB a vLLM server's start-up log gives each part of
// its memory ("Model loading took", the profiling summary, "Estimated
// CUDA graph memory", "Available KV cache memory"); nil where the log is
// silent. GraphsCharged says whether the log states that the CUDA-graph
// estimate was subtracted from the KV cache (nil: not stated).
type memoryTerms struct {
	Weights, Activation, NonTorch, CUDAGraphs, AvailableKV *float64
	GraphsCharged                                          *bool
}

// TermComparison is one memory term, predicted and as the log states it
// (GiB); DiffGiB is predicted − log.
type TermComparison struct {
	Term         string  `json:"term"`
	PredictedGiB float64 `json:"predicted_gib"`
	LogGiB       float64 `json:"log_gib"`
	DiffGiB      float64 `json:"diff_gib"`
}

// Comparison is one prediction held against the real capacity.
type Comparison struct {
	Record record.Calibration `json:"record"`
	// The record's predicted_kv_mib/actual_kv_mib and PredictedTotalMiB/
	// ActualTotalMiB compare memory where the server reports it
	// (llama.cpp/Ollama); the *ErrorPct fields are (predicted − actual) /
	// actual × 100, one decimal.
	KVErrorPct        *float64 `json:"kv_error_pct,omitempty"`
	PredictedTotalMiB *float64 `json:"predicted_total_mib,omitempty"`
	ActualTotalMiB    *float64 `json:"actual_total_mib,omitempty"`
	TotalErrorPct     *float64 `json:"total_error_pct,omitempty"`
	// Terms holds every vLLM memory term both the prediction and the log
	// give, so that an error can be traced to the term that makes it.
	Terms []TermComparison `json:"memory_terms,omitempty"`
}

// compare holds prediction p of res against a. The record's error_pct is
// on tokens when a.Tokens is known. Otherwise actual_tokens stays 0
// (unknown) and error_pct is the KV-size error when both KV sizes are
// known, else the total-size error, and the record's source says which,
// so that a 0 never reads as "no error"; with neither it is an error.
func compare(res *Result, p *Prediction, a actual, preset string) (Comparison, error) {
	if a.Tokens <= 0 && a.KVMiB == nil && a.TotalMiB == nil {
		return Comparison{}, &NoCapacityError{a.Source, "the server reported no capacity figure"}
	}
	c := Comparison{Record: calibrationRecord(res.Model.Name, preset, &res.Inputs, p, a.Tokens, a.Source)}
	if a.KVMiB != nil && *a.KVMiB > 0 && p.KVMiB > 0 {
		pk, ak := p.KVMiB, *a.KVMiB
		c.Record.PredictedKVMiB, c.Record.ActualKVMiB = &pk, &ak
		e := math.Round((pk-ak)/ak*1000) / 10
		c.KVErrorPct = &e
	}
	if a.TotalMiB != nil && *a.TotalMiB > 0 {
		t := round(p.WeightsGiB*1024+p.KVMiB+p.ComputeBufferMiB, 2)
		if p.KVMiB == 0 {
			t = round((p.WeightsGiB+p.KVGiB+p.ActivationGiB+p.NonTorchGiB)*1024, 2)
		}
		c.PredictedTotalMiB, c.ActualTotalMiB = &t, a.TotalMiB
		e := math.Round((t-*a.TotalMiB) / *a.TotalMiB * 1000) / 10
		c.TotalErrorPct = &e
	}
	c.Terms = compareTerms(&res.Inputs, p, a.Terms)
	if a.Tokens <= 0 {
		c.Record.ActualTokens = 0
		note := func(s string) {
			c.Record.Source = strings.TrimPrefix(c.Record.Source+"; "+s, "; ")
		}
		switch {
		case c.KVErrorPct != nil:
			c.Record.ErrorPct = *c.KVErrorPct
			note("no token capacity: error_pct is on the KV size in MiB")
		case c.TotalErrorPct != nil:
			c.Record.ErrorPct = *c.TotalErrorPct
			note("no token capacity: error_pct is on the total size in MiB")
		default:
			return Comparison{}, &NoCapacityError{a.Source, fmt.Sprintf("the server reported no token capacity and no size the prediction has (predicted KV %.2f MiB)", p.KVMiB)}
		}
	}
	return c, nil
}

// compareTerms pairs the vLLM prediction's memory terms with the log's.
// The CUDA-graph term is the part of vLLM's graph estimate the model
// charges (the FlashInfer buffers); it is compared only when the log says
// the estimate was charged, or gives the estimate at all and does not say
// it was not.
func compareTerms(in *InputsOut, p *Prediction, t memoryTerms) []TermComparison {
	if in.Backend != backend.VLLM || in.CapacityModel == SeedFormula {
		return nil
	}
	var out []TermComparison
	add := func(name string, predicted float64, logged *float64) {
		if logged == nil {
			return
		}
		out = append(out, TermComparison{Term: name, PredictedGiB: round(predicted, 3), LogGiB: *logged,
			DiffGiB: round(predicted-*logged, 3)})
	}
	add("weights", p.WeightsGiB, t.Weights)
	add("activation peak", p.ActivationGiB, t.Activation)
	add("non-torch", p.NonTorchGiB, t.NonTorch)
	if t.GraphsCharged == nil || *t.GraphsCharged {
		add("CUDA graphs charged", p.AttentionBackendGiB, t.CUDAGraphs)
	}
	add("KV cache", p.KVGiB, t.AvailableKV)
	return out
}
