package cli

import "flag"

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

// prices reads the cost flags into cfg.outputConfig and checks them
// (validatePrices), early, as the other outputs do not depend on them.
func (f *runFlags) prices(cfg *runConfig, set map[string]bool) error {
	if err := f.cost.prices(&cfg.outputConfig, set); err != nil {
		return err
	}
	return cfg.validatePrices()
}

// prices reads the cost flags into c. A price given as 0 would read as
// none, so it is refused here; Validate (validatePrices) checks the rest.
func (cf costFlags) prices(c *outputConfig, set map[string]bool) error {
	c.PricePerHour, c.PricePerKWh = *cf.perHour, *cf.perKWh
	for _, p := range []struct {
		name string
		v    float64
	}{{"price-per-hour", c.PricePerHour}, {"price-per-kwh", c.PricePerKWh}} {
		if set[p.name] && p.v == 0 {
			return badPrice(p.name, p.v)
		}
	}
	return nil
}

// validatePrices checks that each price is a positive amount (0: none)
// and that at most one is given.
func (c outputConfig) validatePrices() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"price-per-hour", c.PricePerHour}, {"price-per-kwh", c.PricePerKWh}} {
		if p.v != 0 && !(p.v > 0 && p.v < 1e6) { // NaN too
			return badPrice(p.name, p.v)
		}
	}
	if c.PricePerHour > 0 && c.PricePerKWh > 0 {
		return configf("--price-per-hour and --price-per-kwh are alternatives (a rented GPU, or your own): give one")
	}
	return nil
}

// badPrice is the usage error for a price flag's value.
func badPrice(name string, v float64) error {
	return configf("--%s %g: want a positive price in USD", name, v)
}
