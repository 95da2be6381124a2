package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
)

// TestReadProfile: a written profile reads back; malformed ones are
// errors naming what is wrong.
func TestReadProfile(t *testing.T) {
	c := testConfig(backend.LlamaCpp)
	p := &Profile{Version: ProfileVersion, Runs: []RunProfile{{Label: "x", Backend: c.Backend, Cost: c.Model, GPU: c.GPU, Server: c.Server, Params: c.Params,
		Chosen: []Choice{{Setting: "slots", Value: 8, Why: "test"}}}}}
	var buf bytes.Buffer
	if err := WriteProfile(&buf, p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := testConfig(backend.LlamaCpp)
	back.Runs[0].Apply(&got)
	if got.Server.Slots != 8 || got.Params != c.Params {
		t.Errorf("applied profile: %+v", got)
	}
	cases := []struct{ name, doc, want string }{
		{"not JSON", "{", "sim profile"},
		{"unknown field", `{"sim_profile_version":1,"runs":[],"extra":1}`, "extra"},
		{"wrong version", `{"sim_profile_version":2,"runs":[]}`, "sim_profile_version 2"},
		{"no runs", `{"sim_profile_version":1,"runs":[]}`, "no runs"},
		{"bad run", `{"sim_profile_version":1,"runs":[{"label":"r","backend":"vllm"}]}`, "runs[0] (r)"},
	}
	for _, tc := range cases {
		_, err := ReadProfile(strings.NewReader(tc.doc))
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrBadInput mentioning %q", tc.name, err, tc.want)
		}
	}
}

// FuzzReadProfile: no input makes ReadProfile panic, and whatever run
// it accepts and Check passes builds an engine.
func FuzzReadProfile(f *testing.F) {
	c := testConfig(backend.VLLM)
	var buf bytes.Buffer
	_ = WriteProfile(&buf, &Profile{Version: ProfileVersion, Runs: []RunProfile{{Label: "x", Backend: c.Backend, Cost: c.Model, GPU: c.GPU, Server: c.Server, Params: c.Params}}})
	f.Add(buf.Bytes())
	f.Add([]byte(`{"sim_profile_version":1,"runs":[{"backend":"ollama"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadProfile(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := range p.Runs {
			if p.Runs[i].Check() != nil {
				continue // refused once chosen, naming the run
			}
			if _, err := New(p.Runs[i].Config()); err != nil {
				t.Fatalf("accepted profile does not build an engine: %v", err)
			}
		}
	})
}

// TestReadProfileBounds: a profile whose efficiencies, costs, overheads
// or server settings leave their written bounds (where the step time
// overflowed into a fast GPU, or a server never answered) is refused
// naming the field; data after the profile is refused too.
func TestReadProfileBounds(t *testing.T) {
	valid := func(edit func(*RunProfile)) string {
		c := testConfig(backend.VLLM)
		rp := RunProfile{Label: "x", Backend: c.Backend, Cost: c.Model, GPU: c.GPU, Server: c.Server, Params: c.Params}
		edit(&rp)
		var buf bytes.Buffer
		if err := WriteProfile(&buf, &Profile{Version: ProfileVersion, Runs: []RunProfile{rp}}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if _, err := ReadProfile(strings.NewReader(valid(func(*RunProfile) {}))); err != nil {
		t.Fatalf("the valid profile: %v", err)
	}
	cases := []struct {
		name, doc, want string
	}{
		{"memory efficiency 1e-300", valid(func(r *RunProfile) { r.Params.MemoryEfficiency = 1e-300 }), "memory_efficiency 1e-300 must be in [0.001, 2]"},
		{"compute efficiency 0", valid(func(r *RunProfile) { r.Params.ComputeEfficiency = 0 }), "compute_efficiency 0"},
		{"weight bytes 1e29", valid(func(r *RunProfile) { r.Cost.WeightBytesPerStep = 1e29 }), "weight_bytes_per_step 1e+29 must be in [0, 1e+14]"},
		{"step overhead 9e18 ns", valid(func(r *RunProfile) { r.Params.StepOverhead = 9e18 }), "step_overhead_ns 9000000000000000000"},
		{"request latency 2 minutes", valid(func(r *RunProfile) { r.Params.RequestLatency = 2 * time.Minute }), "request_latency_ns"},
		{"kv blocks 2^62", valid(func(r *RunProfile) { r.Server.KVBlocks = 1 << 62 }), "server setting kv_blocks 4611686018427387904 out of range"},
		{"trailing data", valid(func(*RunProfile) {}) + "{}", "data after the profile"},
	}
	for _, tc := range cases {
		_, err := ReadProfile(strings.NewReader(tc.doc))
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "{") {
			t.Errorf("%s: err = %v, want ErrBadInput naming %q (no Go struct)", tc.name, err, tc.want)
		}
	}
}
