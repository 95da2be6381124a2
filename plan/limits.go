package plan

import (
	"math"
	"strconv"
	"strings"
)

// Limit is the written range of a numeric planner input: every value must
// be finite and within [Min, Max]; ZeroMeansDefault allows 0 as well, for
// "the server family's default". The limits are far above any real
// machine or server setting and low enough that no product of them
// overflows the planner's 64-bit arithmetic; `plan --help` lists them.
type Limit struct {
	Field            Field
	Min, Max         float64
	ZeroMeansDefault bool
}

// The limits of Inputs' numeric fields.
var (
	LimitGPUGiB              = Limit{FieldGPUGiB, 0.001, 100_000, false}
	LimitUtilization         = Limit{FieldUtilization, 0.001, 1, true}
	LimitWeightsGiB          = Limit{FieldWeightsGiB, 0.001, 100_000, true}
	LimitContext             = Limit{FieldContext, 1, 16 << 20, true}
	LimitBlockSize           = Limit{FieldBlockSize, 1, 65_536, true}
	LimitMaxNumSeqs          = Limit{FieldMaxNumSeqs, 1, 65_536, true}
	LimitMaxNumBatchedTokens = Limit{FieldMaxNumBatchedTokens, 1, 16 << 20, true}
	LimitParallel            = Limit{FieldParallel, 1, 4_096, true}
	LimitUBatch              = Limit{FieldUBatch, 1, 16 << 20, true}
)

// MaxVersionPart bounds each number of a vLLM version (ParseVLLMVersion).
const MaxVersionPart = 9_999

// Check returns nil when v is within l, else an *InputError naming the
// field and the range.
func (l Limit) Check(v float64) error {
	if v == 0 && l.ZeroMeansDefault {
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < l.Min || v > l.Max {
		return &InputError{l.Field, formatValue(v), "is out of range: want " + l.Range()}
	}
	return nil
}

// CheckInt is Check for an integer input.
func (l Limit) CheckInt(v int) error { return l.Check(float64(v)) }

// Range says the limit in words: "1 to 16,777,216, or 0 for the
// default".
func (l Limit) Range() string {
	s := groupThousands(l.Min) + " to " + groupThousands(l.Max)
	if l.ZeroMeansDefault {
		s += ", or 0 for the default"
	}
	return s
}

// formatValue writes v so that one line shows it: whole numbers below
// 1e21 in full, other values in the shortest form (1e+308, NaN).
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// groupThousands writes v with comma thousands separators when it is a
// whole number (16,777,216), else in its shortest form (0.001).
func groupThousands(v float64) string {
	if v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// limitCheck is one numeric input and its Limit; signCheck one integer
// input that must not be negative (0 is its default).
type (
	limitCheck struct {
		l Limit
		v float64
	}
	signCheck struct {
		field Field
		v     int
	}
)

// checkLimits checks numeric inputs against their limits, in order: the
// first out of range is the error.
func checkLimits(cs ...limitCheck) error {
	for _, c := range cs {
		if err := c.l.Check(c.v); err != nil {
			return err
		}
	}
	return nil
}

// checkNonNegative checks that integer inputs are not negative, in
// order: the first below 0 is the error.
func checkNonNegative(cs ...signCheck) error {
	for _, c := range cs {
		if c.v < 0 {
			return &InputError{c.field, c.v, "must be >= 0"}
		}
	}
	return nil
}
