package modelspec_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/gguf"
	"github.com/servebench/servebench/modelspec"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/tinymodel"
)

// The fuzz tests of the spec builders hold what they accept to the
// planner: a spec that parses is valid and every capacity model runs on
// it.

// capacityModels are the planner's capacity models: each server
// family's own accounting, and the seed formula (of vLLM).
var capacityModels = []struct {
	server backend.Kind
	model  plan.CapacityModel
}{
	{backend.VLLM, plan.SeedFormula}, {backend.VLLM, plan.ServerAccounting},
	{backend.LlamaCpp, plan.ServerAccounting}, {backend.Ollama, plan.ServerAccounting},
}

// FuzzParseHFConfig: any bytes parse without panic, and what parses is a
// valid spec the planners can run on.
func FuzzParseHFConfig(f *testing.F) {
	for _, n := range []string{"qwen2.5-7b-instruct.config.json", "gemma-3-27b-it.config.json", "deepseek-v3.config.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"text_config":{"text_config":{}}}`))
	f.Add([]byte(`{"num_hidden_layers":9999,"num_attention_heads":1,"hidden_size":1,"vocab_size":1,"sliding_window":1,"layer_types":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := modelspec.ParseHFConfig(b)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed spec invalid: %v", err)
		}
		for _, c := range capacityModels {
			if _, err := plan.Plan(plan.Inputs{Model: m, Server: c.server, CapacityModel: c.model, GPUGiB: 24, WeightsGiB: 1}); err != nil {
				t.Fatalf("%s %s: %v", c.server, c.model, err)
			}
		}
	})
}

// FuzzGGUFSpec: whatever bytes package gguf accepts, the spec built from
// them is valid or an error naming the missing key, never a panic.
func FuzzGGUFSpec(f *testing.F) {
	path := filepath.Join(f.TempDir(), "tiny.gguf")
	if err := tinymodel.WriteFile(path, tinymodel.DefaultSpec()); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := gguf.Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		if m, err := modelspec.FromGGUF(info, "fuzz"); err == nil {
			if err := m.Validate(); err != nil {
				t.Fatalf("FromGGUF returned an invalid model: %v", err)
			}
		}
	})
}
