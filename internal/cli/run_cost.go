package cli

import (
	"flag"
	"math"
)

// `servebench run`'s cost flags: a price per hour (a rented GPU) or per
// kWh (your own) from which each level's dollars per million output
// tokens come (stats.Cost).

// costFlags are the raw values of the cost flags.
type costFlags struct {
	perHour, perKWh *float64
}

// defineCostFlags adds the cost flags to run's flags.
func defineCostFlags(fs *flag.FlagSet) costFlags {
	return costFlags{
		perHour: fs.Float64("price-per-hour", 0, "price of the server in `USD` per hour (a rented GPU): each level reports dollars per million output tokens from its wall time"),
		perKWh:  fs.Float64("price-per-kwh", 0, "price of electricity in `USD` per kWh (your own GPU): each level reports dollars per million output tokens from its measured GPU energy"),
	}
}

// costConfig reads the cost flags into cfg.
func (f *runFlags) costConfig(cfg *runConfig, set map[string]bool) error {
	cf := f.cost
	for _, p := range []struct {
		name string
		v    float64
	}{{"price-per-hour", *cf.perHour}, {"price-per-kwh", *cf.perKWh}} {
		if set[p.name] && !(p.v > 0 && p.v < 1e6) || math.IsNaN(p.v) {
			return configf("--%s %g: want a positive price in USD", p.name, p.v)
		}
	}
	if set["price-per-hour"] && set["price-per-kwh"] {
		return configf("--price-per-hour and --price-per-kwh are alternatives (a rented GPU, or your own): give one")
	}
	cfg.PricePerHour, cfg.PricePerKWh = *cf.perHour, *cf.perKWh
	return nil
}
