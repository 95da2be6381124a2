package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// MixClass is one request class of a mix: a scenario (with its default
// lengths and images) and its share of the requests.
type MixClass struct {
	Scenario Scenario `json:"class"`
	// Weight is the class's share of the requests, 0–1 (the weights of a
	// Mix sum to 1).
	Weight float64 `json:"weight"`
}

// Mix is several request classes sent side by side in one level (run
// --mix), each request drawn from one class.
type Mix []MixClass

// ParseMix parses "text:0.7,image:0.2,long:0.1": scenarios with positive
// weights, relative (they are scaled to sum to 1), each scenario once, at
// least two.
func ParseMix(s string) (Mix, error) {
	var m Mix
	var sum float64
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("%q: want class:weight pairs, e.g. text:0.7,image:0.3", part)
		}
		sc, err := ParseScenario(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || !(v > 0) || v > 1e9 {
			return nil, fmt.Errorf("%q: weight %q, want a positive number (relative weights, up to 1e9)", part, w)
		}
		if slices.ContainsFunc(m, func(c MixClass) bool { return c.Scenario == sc }) {
			return nil, fmt.Errorf("class %s given twice", sc)
		}
		m = append(m, MixClass{Scenario: sc, Weight: v})
		sum += v
	}
	if len(m) < 2 {
		return nil, fmt.Errorf("%q: a mix needs at least two classes (one class is --scenario)", s)
	}
	for i := range m {
		m[i].Weight /= sum
	}
	return m, nil
}

// String is the mix as ParseMix reads it, weights to four significant
// digits.
func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, c := range m {
		parts[i] = string(c.Scenario) + ":" + strconv.FormatFloat(c.Weight, 'g', 4, 64)
	}
	return strings.Join(parts, ",")
}

// ClassOf is the class of request seq: a draw by the weights from a
// generator seeded with (seed, seq) alone, so a request's class does not
// depend on which others were drawn before it, and the same seed gives
// the same classes.
func (m Mix) ClassOf(seed int64, seq int) int {
	u := rand.New(rand.NewPCG(uint64(seed)^0x313c1a55, uint64(int64(seq)))).Float64()
	for i, c := range m {
		if u < c.Weight {
			return i
		}
		u -= c.Weight
	}
	return len(m) - 1
}

// MixSource prepares the requests of a mix: each request's class by
// ClassOf, and the request by that class's Builder (its scenario's
// lengths and images, calibrated on its own). Item.Class names the class.
type MixSource struct {
	mix      Mix
	builders []*Builder
	seed     int64
}

// NewMixSource returns the source of mix, builders[i] building class i;
// calibrate each Builder before Items.
func NewMixSource(mix Mix, builders []*Builder, seed int64) *MixSource {
	return &MixSource{mix: mix, builders: builders, seed: seed}
}

// Items prepares requests seq0 … seq0+n−1.
func (s *MixSource) Items(ctx context.Context, seq0, n int) ([]Item, error) {
	items := make([]Item, n)
	for i := range items {
		c := s.mix.ClassOf(s.seed, seq0+i)
		it, err := s.builders[c].item(ctx, seq0+i)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", s.mix[c].Scenario, err)
		}
		it.Class = string(s.mix[c].Scenario)
		items[i] = it
	}
	return items, nil
}
