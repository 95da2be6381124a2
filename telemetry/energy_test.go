package telemetry

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/ptr"
)

// nvmlStandIn is a gpuSource in NVML's place: each reading's power is
// 300 W and the energy counter rises by 300 J per second of the
// stand-in's own clock, as a GPU at a steady 300 W reports it.
type nvmlStandIn struct {
	t0 time.Time
}

func (s *nvmlStandIn) name() string { return "NVML" }
func (s *nvmlStandIn) close()       {}
func (s *nvmlStandIn) processes(context.Context) ([]ProcessMemory, error) {
	return nil, nil
}
func (s *nvmlStandIn) read(context.Context) (GPUReading, error) {
	j := 1e6 + 300*time.Since(s.t0).Seconds()
	return GPUReading{Name: "stand-in", UsedMiB: 1, TotalMiB: 2, PowerW: ptr.To(300.0), EnergyJ: &j}, nil
}
func (s *nvmlStandIn) stream(ctx context.Context, interval time.Duration, emit func(GPUReading)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r, _ := s.read(ctx)
		emit(r)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// TestEnergyFromNVMLStandIn samples the stand-in over a level of 30
// intervals: the counter's rise gives 300 W × the level's span, and a
// level of two intervals is too short.
func TestEnergyFromNVMLStandIn(t *testing.T) {
	const interval = 10 * time.Millisecond
	g := &GPUSampler{src: &nvmlStandIn{t0: time.Now()}, interval: interval}
	l := g.Begin(context.Background())
	time.Sleep(30 * interval)
	e := l.End(context.Background()).Energy
	if e.Joules == nil || e.MeanW == nil || math.Abs(*e.MeanW-300) > 1 || *e.PeakW != 300 || !strings.Contains(e.Method, "NVML energy counter") {
		t.Fatalf("energy %+v: want 300 W mean from the counter", e)
	}
	short := g.Begin(context.Background())
	time.Sleep(2 * interval)
	if e := short.End(context.Background()).Energy; e.Joules != nil || !strings.HasPrefix(e.Note, "too short for energy") {
		t.Errorf("short level: %+v; want too short for energy", e)
	}
}

// TestEnergyFromRecordedSMI integrates power.draw samples as nvidia-smi
// prints them (the recorded H100 capture's 631.95 W, then readings of
// the same form) by the trapezoid rule, one second apart.
func TestEnergyFromRecordedSMI(t *testing.T) {
	first, err := ParseQueryGPU(readTestdata(t, "nvidia-smi-query-gpu-h100.csv"))
	if err != nil || first[0].PowerW == nil || *first[0].PowerW != 631.95 {
		t.Fatalf("capture: %+v, %v", first, err)
	}
	more, err := ParseQueryGPU(strings.Repeat("0, NVIDIA H100 80GB HBM3, 19818, 81559, 600.00\n", 10) + "0, NVIDIA H100 80GB HBM3, 19818, 81559, [N/A]\n")
	if err != nil {
		t.Fatal(err)
	}
	var acc energyAcc
	t0 := time.Unix(0, 0)
	for i, r := range append(first, more...) {
		acc.add(t0.Add(time.Duration(i)*time.Second), r)
	}
	e := acc.result(time.Second, "nvidia-smi")
	// Ten gaps of 1 s among eleven power samples (the [N/A] line has
	// none and is left out): (631.95+600)/2 + 9×600 = 6015.975 J over
	// 10 s of readings.
	if e.Joules == nil || math.Abs(*e.Joules-6015.975) > 1e-9 || *e.PeakW != 631.95 || math.Abs(*e.MeanW-601.5975) > 1e-9 {
		t.Fatalf("energy %+v", e)
	}
	if e.Method != "nvidia-smi power samples every 1s" {
		t.Errorf("method %q", e.Method)
	}
	var none energyAcc
	none.add(t0, more[10])
	if e := none.result(time.Second, "nvidia-smi"); e.Joules != nil || e.Note != "" || e.Method != "" {
		t.Errorf("no power readings: %+v", e)
	}
}
