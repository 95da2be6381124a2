//go:build linux && cgo && nvml

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlSource reads GPU memory through NVML (build tag nvml). go-nvml dlopens
// libnvidia-ml.so.1 at Init, so a machine without the driver gets an error,
// not a crash, and the build needs no NVIDIA headers (go-nvml ships them).
type nvmlSource struct {
	dev   nvml.Device
	index int
	v2    bool // nvmlDeviceGetMemoryInfo_v2 exists (driver ≥ 510)
	once  sync.Once
}

// openNVML initialises NVML and selects device index.
func openNVML(index int) (gpuSource, error) {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: %s", nvmlError(ret))
	}
	dev, ret := nvml.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		nvml.Shutdown()
		return nil, fmt.Errorf("NVML: GPU %d: %s", index, nvmlError(ret))
	}
	s := &nvmlSource{dev: dev, index: index}
	// Calling a symbol the driver lacks would crash: look it up first.
	s.v2 = nvml.Extensions().LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	return s, nil
}

// nvmlError turns a Return into text without calling into a library that
// may not be loaded.
func nvmlError(ret nvml.Return) string {
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return "libnvidia-ml.so.1 not found"
	}
	return ret.Error()
}

func (s *nvmlSource) name() string { return "NVML" }

func (s *nvmlSource) close() { s.once.Do(func() { nvml.Shutdown() }) }

// read returns used and total memory. Used comes from the v2 call where
// the driver has it: it leaves out memory the driver reserves, as
// nvidia-smi's memory.used does.
func (s *nvmlSource) read(ctx context.Context) (GPUReading, error) {
	name, ret := s.dev.GetName()
	if ret != nvml.SUCCESS {
		return GPUReading{}, errors.New(nvmlError(ret))
	}
	const mib = 1 << 20
	if s.v2 {
		m, ret := s.dev.GetMemoryInfo_v2()
		if ret == nvml.SUCCESS {
			return s.power(GPUReading{Index: s.index, Name: name, UsedMiB: float64(m.Used) / mib, TotalMiB: float64(m.Total) / mib}), nil
		}
	}
	m, ret := s.dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return GPUReading{}, errors.New(nvmlError(ret))
	}
	return s.power(GPUReading{Index: s.index, Name: name, UsedMiB: float64(m.Used) / mib, TotalMiB: float64(m.Total) / mib}), nil
}

// power adds the board's power usage (milliwatts) and total energy
// counter (millijoules since the driver loaded, Volta and later) to r,
// where the device reports them.
func (s *nvmlSource) power(r GPUReading) GPUReading {
	if mw, ret := s.dev.GetPowerUsage(); ret == nvml.SUCCESS {
		w := float64(mw) / 1000
		r.PowerW = &w
	}
	if mj, ret := s.dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		j := float64(mj) / 1000
		r.EnergyJ = &j
	}
	return r
}

func (s *nvmlSource) stream(ctx context.Context, interval time.Duration, emit func(GPUReading)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r, err := s.read(ctx)
		if err != nil {
			return err
		}
		emit(r)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// processes lists compute processes of every device.
func (s *nvmlSource) processes(ctx context.Context) ([]ProcessMemory, error) {
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, errors.New(nvmlError(ret))
	}
	var out []ProcessMemory
	for i := 0; i < n; i++ {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, errors.New(nvmlError(ret))
		}
		ps, ret := dev.GetComputeRunningProcesses()
		if ret != nvml.SUCCESS {
			return nil, errors.New(nvmlError(ret))
		}
		for _, p := range ps {
			out = append(out, ProcessMemory{GPU: i, PID: int(p.Pid), UsedMiB: float64(p.UsedGpuMemory) / (1 << 20)})
		}
	}
	return out, nil
}
