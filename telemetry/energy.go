package telemetry

import (
	"fmt"
	"time"

	"github.com/servebench/servebench/internal/ptr"
)

// Energy over one level, from the GPU's power readings: NVML's total
// energy counter where the source has it (the counter's rise from the
// level's first reading to its last), else the power samples (NVML's
// power usage, nvidia-smi's power.draw) integrated by the trapezoid rule
// over their times. Mean watts are joules over the readings' span; peak
// watts the largest power sample. A level whose readings span less than
// MinEnergyIntervals sampling intervals gets no figures ("too short for
// energy"): one interval's uncertainty at either end would be more than a
// tenth of it.

// MinEnergyIntervals is how many sampling intervals a level's readings
// must span for its energy to be reported.
const MinEnergyIntervals = 10

// Energy is what a level's power readings give; the figures are nil
// where they could not be measured, and Note says why.
type Energy struct {
	Joules, MeanW, PeakW *float64
	// Method is how the joules were measured: "NVML energy counter" or
	// "<source> power samples every <interval>".
	Method string
	// Note says why there are no figures ("" when there are).
	Note string
}

// energyAcc folds the power readings of one level.
type energyAcc struct {
	samples         int
	first, last     time.Time
	firstJ, lastJ   *float64
	prevW           *float64
	prevAt          time.Time
	integralJ       float64
	peakW           *float64
	powerSamples    int
	counterReadings int
}

// add folds reading r taken at at.
func (e *energyAcc) add(at time.Time, r GPUReading) {
	if r.PowerW == nil && r.EnergyJ == nil {
		return
	}
	if e.samples == 0 {
		e.first = at
	}
	e.samples++
	e.last = at
	if r.EnergyJ != nil {
		if e.firstJ == nil {
			e.firstJ = ptr.To(*r.EnergyJ)
		}
		e.lastJ = ptr.To(*r.EnergyJ)
		e.counterReadings++
	}
	if r.PowerW != nil {
		w := *r.PowerW
		if e.prevW != nil {
			e.integralJ += (w + *e.prevW) / 2 * at.Sub(e.prevAt).Seconds()
		}
		e.prevW, e.prevAt = ptr.To(w), at
		e.peakW = maxPtr(e.peakW, &w)
		e.powerSamples++
	}
}

// result is the level's Energy; interval is the sampling interval and
// source the reading's source name.
func (e *energyAcc) result(interval time.Duration, source string) Energy {
	if e.samples == 0 {
		return Energy{} // no power sensor: the figures stay null, without a note per level
	}
	span := e.last.Sub(e.first)
	out := Energy{Method: fmt.Sprintf("%s power samples every %v", source, interval)}
	useCounter := e.counterReadings >= 2 && *e.lastJ >= *e.firstJ
	if useCounter {
		out.Method = "NVML energy counter, read every " + interval.String()
	}
	if span < MinEnergyIntervals*interval {
		out.Note = fmt.Sprintf("too short for energy: %.2f s of readings, under %d× the %v sampling interval", span.Seconds(), MinEnergyIntervals, interval)
		return out
	}
	j := e.integralJ
	if useCounter {
		j = *e.lastJ - *e.firstJ
	} else if e.powerSamples < 2 {
		out.Note = "too short for energy: fewer than two power samples"
		return out
	}
	out.Joules, out.MeanW, out.PeakW = ptr.To(j), ptr.To(j/span.Seconds()), e.peakW
	return out
}
