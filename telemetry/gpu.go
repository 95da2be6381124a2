package telemetry

import (
	"context"
	"fmt"
	"github.com/servebench/servebench/internal/ptr"
	"strings"
	"sync"
	"time"
)

// GPUMode selects how GPU memory is read (--gpu).
type GPUMode string

// GPU modes. Auto tries NVML, then nvidia-smi, then gives up with a warning.
const (
	GPUAuto      GPUMode = "auto"
	GPUNVML      GPUMode = "nvml"
	GPUNvidiaSMI GPUMode = "nvidia-smi"
	GPUNone      GPUMode = "none"
)

// GPUModes lists every GPUMode in the order help texts show them.
var GPUModes = []GPUMode{GPUAuto, GPUNVML, GPUNvidiaSMI, GPUNone}

// ParseGPUMode returns the GPUMode named s, or an error listing the valid
// names.
func ParseGPUMode(s string) (GPUMode, error) {
	for _, m := range GPUModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown GPU mode %q (want one of %v)", s, GPUModes)
}

// GPUConfig configures GPU memory sampling.
type GPUConfig struct {
	Mode GPUMode
	// Index is the device to watch (nvidia-smi / NVML index).
	Index int
	// Interval is the sampling period during a level.
	Interval time.Duration
	// ServerPID, when > 0, is the server's process: the used memory of its
	// process tree is summed as well.
	ServerPID int
}

// gpuSource is one way to read GPU memory (NVML or nvidia-smi).
type gpuSource interface {
	// name is "NVML" or "nvidia-smi", for warnings.
	name() string
	// read returns one reading of the selected device.
	read(ctx context.Context) (GPUReading, error)
	// stream calls emit with a reading of the selected device about every
	// interval until ctx is done.
	stream(ctx context.Context, interval time.Duration, emit func(GPUReading)) error
	// processes lists compute processes on all devices.
	processes(ctx context.Context) ([]ProcessMemory, error)
	close()
}

// GPUSampler samples one device's memory during levels.
type GPUSampler struct {
	src       gpuSource
	dev       GPUReading
	interval  time.Duration
	serverPID int
}

// OpenGPU finds a way to read GPU memory as cfg asks. It never fails: with
// no GPU, no NVML and no nvidia-smi it returns nil and one warning, and
// with Mode GPUNone it returns nil and no warning. A nil *GPUSampler is
// valid and observes nothing.
func OpenGPU(ctx context.Context, cfg GPUConfig) (*GPUSampler, []string) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultScrapeInterval
	}
	var tries []func() (gpuSource, error)
	switch cfg.Mode {
	case GPUNone:
		return nil, nil
	case GPUNVML:
		tries = append(tries, func() (gpuSource, error) { return openNVML(cfg.Index) })
	case GPUNvidiaSMI:
		tries = append(tries, func() (gpuSource, error) { return openSMI(cfg.Index) })
	default:
		tries = append(tries,
			func() (gpuSource, error) { return openNVML(cfg.Index) },
			func() (gpuSource, error) { return openSMI(cfg.Index) })
	}
	var errs []string
	for _, open := range tries {
		src, err := open()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		dev, err := src.read(ctx)
		if err != nil {
			src.close()
			errs = append(errs, src.name()+": "+err.Error())
			continue
		}
		return &GPUSampler{src: src, dev: dev, interval: cfg.Interval, serverPID: cfg.ServerPID}, nil
	}
	return nil, []string{fmt.Sprintf("gpu: no GPU memory readings (%s): gpu, gpu_gib and GPU memory fields are null", strings.Join(errs, "; "))}
}

// Device returns the watched device's index, name and total memory as read
// when it was opened; ok is false for a nil sampler.
func (g *GPUSampler) Device() (dev GPUReading, ok bool) {
	if g == nil {
		return GPUReading{}, false
	}
	return g.dev, true
}

// Source names the way memory is read ("NVML", "nvidia-smi"), "" for nil.
func (g *GPUSampler) Source() string {
	if g == nil {
		return ""
	}
	return g.src.name()
}

// Close releases NVML; a nil sampler is fine.
func (g *GPUSampler) Close() {
	if g != nil {
		g.src.close()
	}
}

// GPUSummary is what the GPU did during one level. Nil fields were not
// observed.
type GPUSummary struct {
	// PeakUsedMiB is the largest device memory in use among the level's
	// samples, the one after it included.
	PeakUsedMiB *float64
	// AfterMiB is device memory in use read when the level ended.
	AfterMiB *float64
	// PeakServerMiB is the largest sum of GPU memory held by the server's
	// process tree (only with a server PID).
	PeakServerMiB *float64
	// Energy is the level's energy and power (energy.go).
	Energy Energy
	// Samples counts device readings.
	Samples int
	// Warnings are findings as data.
	Warnings []string
}

// LevelGPU is the sampling of one level, from Begin to End.
type LevelGPU struct {
	g      *GPUSampler
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	sum    GPUSummary
	energy energyAcc
	errs   map[string]error
	once   sync.Once
}

// Begin starts sampling on its own goroutines (a child process for
// nvidia-smi); it returns at once. A nil sampler returns a LevelGPU whose
// End reports nothing.
func (g *GPUSampler) Begin(ctx context.Context) *LevelGPU {
	l := &LevelGPU{g: g, errs: map[string]error{}}
	if g == nil {
		l.cancel = func() {}
		return l
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		err := g.src.stream(ctx, g.interval, l.device)
		if err != nil && ctx.Err() == nil {
			l.fail("stream", err)
		}
	}()
	if g.serverPID > 0 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			every := max(g.interval, time.Second) // one nvidia-smi call per tick
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				l.server(ctx)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	return l
}

// device folds one device reading.
func (l *LevelGPU) device(r GPUReading) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sum.Samples++
	l.sum.PeakUsedMiB = maxPtr(l.sum.PeakUsedMiB, &r.UsedMiB)
	l.energy.add(time.Now(), r)
}

// server reads the server process tree's GPU memory once.
func (l *LevelGPU) server(ctx context.Context) {
	tree, err := processTree(procRoot, l.g.serverPID)
	if err != nil {
		l.fail("tree", err)
		return
	}
	procs, err := l.g.src.processes(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.fail("processes", err)
		}
		return
	}
	var total float64
	for _, p := range procs {
		if tree[p.PID] {
			total += p.UsedMiB
		}
	}
	l.mu.Lock()
	l.sum.PeakServerMiB = maxPtr(l.sum.PeakServerMiB, &total)
	l.mu.Unlock()
}

// fail keeps the first error of each kind for one warning.
func (l *LevelGPU) fail(kind string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.errs[kind]; !seen {
		l.errs[kind] = err
		l.sum.Warnings = append(l.sum.Warnings, fmt.Sprintf("gpu: %s: %v", l.g.src.name(), err))
	}
}

// End stops sampling, reads the device once more (the "after" reading) and
// returns the level's summary. Further calls return the same summary.
func (l *LevelGPU) End(ctx context.Context) GPUSummary {
	l.once.Do(func() {
		l.cancel()
		l.wg.Wait()
		if l.g == nil {
			return
		}
		r, err := l.g.src.read(ctx)
		if err != nil {
			l.fail("read", err)
		} else {
			l.device(r)
			l.sum.AfterMiB = ptr.To(r.UsedMiB)
		}
		if l.g.serverPID > 0 {
			l.server(ctx)
		}
		l.mu.Lock()
		l.sum.Energy = l.energy.result(l.g.interval, l.g.src.name())
		l.mu.Unlock()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sum
}
