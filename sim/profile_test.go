package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestReadProfile: a written profile reads back; malformed ones are
// errors naming what is wrong.
func TestReadProfile(t *testing.T) {
	c := testConfig(LlamaCpp)
	p := &Profile{Version: ProfileVersion, Runs: []RunProfile{{Label: "x", Backend: c.Family, Cost: c.Model, GPU: c.GPU, Server: c.Server, Params: c.Params,
		Chosen: []Choice{{Setting: "slots", Value: 8, Why: "test"}}}}}
	var buf bytes.Buffer
	if err := WriteProfile(&buf, p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := testConfig(LlamaCpp)
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

// FuzzReadProfile: no input makes ReadProfile panic, and whatever it
// accepts builds an engine.
func FuzzReadProfile(f *testing.F) {
	c := testConfig(VLLM)
	var buf bytes.Buffer
	_ = WriteProfile(&buf, &Profile{Version: ProfileVersion, Runs: []RunProfile{{Label: "x", Backend: c.Family, Cost: c.Model, GPU: c.GPU, Server: c.Server, Params: c.Params}}})
	f.Add(buf.Bytes())
	f.Add([]byte(`{"sim_profile_version":1,"runs":[{"backend":"ollama"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadProfile(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := range p.Runs {
			if _, err := New(p.Runs[i].Config()); err != nil {
				t.Fatalf("accepted profile does not build an engine: %v", err)
			}
		}
	})
}
