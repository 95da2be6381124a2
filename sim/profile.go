package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/servebench/servebench/backend"
)

// Choice is a server setting the document did not record and the fit
// chose.
type Choice struct {
	Setting string `json:"setting"`
	Value   int    `json:"value"`
	Why     string `json:"why"`
}

// ProfileVersion is the version of the sim-profile.json shape.
const ProfileVersion = 1

// Profile is the result of a fit, the sim-profile.json document: one
// entry per fitted run, each enough to rebuild its engine.
type Profile struct {
	Version int          `json:"sim_profile_version"`
	Runs    []RunProfile `json:"runs"`
	// Skipped are the runs the fit left out, and why.
	Skipped []SkippedRun `json:"skipped,omitempty"`
}

// RunProfile is one run's fit.
type RunProfile struct {
	Label   string       `json:"label"`
	Backend backend.Kind `json:"backend"`
	// Model is the model as the document named it; Cost what the engine
	// used (fitted when FreeModel).
	Model     string    `json:"model"`
	FreeModel bool      `json:"free_model"`
	Cost      ModelCost `json:"model_cost"`
	GPU       GPU       `json:"gpu"`
	Server    Server    `json:"server"`
	Params    Params    `json:"params"`
	// Fitted and KeptAtDefault name the parameters the fit moved and
	// those it left at their documented defaults.
	Fitted        []string `json:"fitted"`
	KeptAtDefault []string `json:"kept_at_default"`
	// Chosen are server settings the document did not record.
	Chosen []Choice `json:"settings_chosen,omitempty"`
	// FitLevels are the levels the fit aimed at; Residuals the fitted
	// figures' errors after the fit; TargetsMet whether all are within
	// the tolerance.
	FitLevels  []int      `json:"fit_levels"`
	Residuals  []Residual `json:"residuals"`
	TargetsMet bool       `json:"targets_met"`
	// LeaveOneOut are the leave-one-level-out predictions: each level
	// predicted by a fit on the run's other levels (FitOptions.LeaveOneOut).
	LeaveOneOut []Residual `json:"leave_one_level_out,omitempty"`
	Notes       []string   `json:"notes,omitempty"`
	// objective is the fit's final objective (see sigmaMeasured).
	objective float64
}

// Config rebuilds the engine configuration the fit found.
func (p *RunProfile) Config() Config {
	return Config{Backend: p.Backend, GPU: p.GPU, Model: p.Cost, Server: p.Server, Params: p.Params}
}

// Run returns the profile of the run labelled label.
func (p *Profile) Run(label string) (*RunProfile, bool) {
	for i := range p.Runs {
		if p.Runs[i].Label == label {
			return &p.Runs[i], true
		}
	}
	return nil, false
}

// Select picks the run of p a prediction applies: the run labelled
// label, or, with label "", the profile's only run. An unknown label or
// an ambiguous choice is an ErrBadInput naming the labels there are.
func (p *Profile) Select(label string) (*RunProfile, error) {
	if label == "" {
		if len(p.Runs) == 1 {
			return &p.Runs[0], nil
		}
		return nil, fmt.Errorf("%w: the sim profile has %d runs (%s): name one", ErrBadInput, len(p.Runs), p.labels())
	}
	if rp, ok := p.Run(label); ok {
		return rp, nil
	}
	return nil, fmt.Errorf("%w: the sim profile has no run %q (it has %s)", ErrBadInput, label, p.labels())
}

func (p *Profile) labels() string {
	ls := make([]string, len(p.Runs))
	for i := range p.Runs {
		ls[i] = p.Runs[i].Label
	}
	return strings.Join(ls, ", ")
}

// ReadProfile reads a sim-profile.json document and checks that every
// figure and setting of every run is within its bound; errors name the
// run and field. Whether a run has what its family needs to build an
// engine is its Check, once a caller has chosen it (and checked that it
// is of the family simulated: a llama.cpp fit has no vLLM settings).
func ReadProfile(r io.Reader) (*Profile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: sim profile: %v", ErrBadInput, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: sim profile: data after the profile's JSON object", ErrBadInput)
	}
	if p.Version != ProfileVersion {
		return nil, fmt.Errorf("%w: sim profile: sim_profile_version %d, want %d", ErrBadInput, p.Version, ProfileVersion)
	}
	if len(p.Runs) == 0 {
		return nil, fmt.Errorf("%w: sim profile: no runs", ErrBadInput)
	}
	for i := range p.Runs {
		c := p.Runs[i].Config()
		if err := c.checkBounds(); err != nil {
			return nil, fmt.Errorf("sim profile: runs[%d] (%s): %w", i, p.Runs[i].Label, err)
		}
	}
	return &p, nil
}

// WriteProfile writes p as indented JSON.
func WriteProfile(w io.Writer, p *Profile) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// Check reports whether the run's configuration builds an engine (the
// settings its family needs); errors wrap ErrBadInput and name the run.
func (p *RunProfile) Check() error {
	c := p.Config()
	if err := c.check(); err != nil {
		return fmt.Errorf("sim profile run %q: %w", p.Label, err)
	}
	return nil
}

// ApplyTo is Apply after checking that the fit is of c's server family
// (a llama.cpp fit says nothing about vLLM's scheduler costs) and that
// the result builds an engine; errors wrap ErrBadInput and name the run.
func (p *RunProfile) ApplyTo(c *Config) error {
	if p.Backend != c.Backend {
		return fmt.Errorf("%w: sim profile run %q was fitted on %s, the simulated server is %s", ErrBadInput, p.Label, p.Backend, c.Backend)
	}
	p.Apply(c)
	if err := c.check(); err != nil {
		return fmt.Errorf("sim profile run %q: %w", p.Label, err)
	}
	return nil
}

// Apply carries a fit over to another prediction's configuration c (another
// concurrency, workload or GPU): the fitted efficiencies and overheads, the
// settings the fit chose, and — for a fit without a model — the fitted
// model cost.
func (p *RunProfile) Apply(c *Config) {
	c.Params = p.Params
	if p.FreeModel {
		c.Model = p.Cost
	}
	for _, ch := range p.Chosen {
		switch ch.Setting {
		case slotsSetting.name:
			c.Server.Slots = ch.Value
		case budgetSetting.name:
			c.Server.MaxNumBatchedTokens = ch.Value
		}
	}
}

// Value returns the value of the fit parameter name (one of Fitted or
// KeptAtDefault) in the profile, in base units: seconds for the
// overheads ("s"), bytes ("B"), FLOPs ("FLOP"), or a fraction ("").
func (p *RunProfile) Value(name string) (v float64, unit string, ok bool) {
	c := p.Config()
	switch name {
	case "step_overhead":
		return c.Params.StepOverhead.Seconds(), "s", true
	}
	for _, q := range []param{pMemory, pCompute, pSeq, pLatency, pBytes, pFLOPs, pImage} {
		if q.name == name {
			switch q.name {
			case pSeq.name, pLatency.name:
				unit = "s"
			case pBytes.name:
				unit = "B"
			case pFLOPs.name, pImage.name:
				unit = "FLOP"
			}
			return q.get(&c), unit, true
		}
	}
	return 0, "", false
}
