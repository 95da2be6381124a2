package report

import "github.com/servebench/servebench/document"

// energyField is a level's energy or cost figure as the machine formats
// (csv, gobench) write it: its CSV column, its Go benchmark unit and
// whether a higher value is better.
type energyField struct {
	name, unit string
	higher     bool
	get        func(l *document.Level) *float64
}

// energyFields are the energy and cost figures of a level, in the order
// the machine formats write them (the tables show them as level columns,
// layout.go).
var energyFields = []energyField{
	{"energy_j", "energy-J", false, func(l *document.Level) *float64 { return l.EnergyJ }},
	{"joules_per_output_token", "J/out-tok", false, func(l *document.Level) *float64 { return l.JoulesPerOutputToken }},
	{"mean_power_w", "mean-W", false, func(l *document.Level) *float64 { return l.MeanPowerW }},
	{"peak_power_w", "peak-W", false, func(l *document.Level) *float64 { return l.PeakPowerW }},
	{"tok_s_per_watt", "tok/s/W", true, func(l *document.Level) *float64 { return l.TokSPerWatt }},
	{"cost_usd_per_mtok", "USD/Mtok", false, func(l *document.Level) *float64 { return l.CostUSDPerMTok }},
}

// setHasEnergy reports whether some level of s has an energy or cost
// figure: sets without any keep their gobench units as before.
func setHasEnergy(s *Set) bool {
	for _, r := range s.Runs {
		for _, p := range r.Points {
			for _, f := range energyFields {
				if p.Level != nil && f.get(p.Level) != nil {
					return true
				}
			}
		}
	}
	return false
}
