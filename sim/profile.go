package sim

import (
	"encoding/json"
	"fmt"
	"io"
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
}

// RunProfile is one run's fit.
type RunProfile struct {
	Label   string `json:"label"`
	Backend Family `json:"backend"`
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
	Notes      []string   `json:"notes,omitempty"`
	// objective is the fit's final objective (see sigmaMeasured).
	objective float64
}

// Config rebuilds the engine configuration the fit found.
func (p *RunProfile) Config() Config {
	return Config{Family: p.Backend, GPU: p.GPU, Model: p.Cost, Server: p.Server, Params: p.Params}
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

// ReadProfile reads a sim-profile.json document and checks that every
// run's configuration can build an engine; errors name the run and field.
func ReadProfile(r io.Reader) (*Profile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: sim profile: %v", ErrBadInput, err)
	}
	if p.Version != ProfileVersion {
		return nil, fmt.Errorf("%w: sim profile: sim_profile_version %d, want %d", ErrBadInput, p.Version, ProfileVersion)
	}
	if len(p.Runs) == 0 {
		return nil, fmt.Errorf("%w: sim profile: no runs", ErrBadInput)
	}
	for i := range p.Runs {
		c := p.Runs[i].Config()
		if err := c.check(); err != nil {
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
