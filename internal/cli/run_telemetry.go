package cli

import (
	"context"
	"flag"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/telemetry"
)

// `servebench run` telemetry: once per run, probe the server's identity
// (backend.Probe) into run.server and run.runtime, find the GPU and read
// the server's KV-cache settings (telemetry.Start); around each level,
// scrape /metrics and sample GPU memory on goroutines of their own
// (telemetry.Observer), merging peak_vram_gib, peak_kv_cache_usage,
// preemptions and request peaks into the level.

// telemetrySettings are run's telemetry flags, validated.
type telemetrySettings struct {
	MetricsURL     string
	ScrapeInterval time.Duration
	GPU            telemetry.GPUMode
	GPUIndex       int
	// ServerPID is --server-pid; 0 means the launched server's, if any.
	ServerPID int
}

// minScrapeInterval keeps --scrape-interval from turning telemetry into
// load.
const minScrapeInterval = 10 * time.Millisecond

// telemetryFlags are the raw values of run's telemetry flags.
type telemetryFlags struct {
	metricsURL, gpu     *string
	interval            *time.Duration
	gpuIndex, serverPID *int
}

// defineTelemetryFlags adds the telemetry flags to run's flags.
func defineTelemetryFlags(fs *flag.FlagSet) telemetryFlags {
	return telemetryFlags{
		metricsURL: fs.String("metrics-url", "", "Prometheus `URL` of the server's metrics (default <url>/metrics; \"none\": do not scrape)"),
		interval:   fs.Duration("scrape-interval", telemetry.DefaultScrapeInterval, "period of /metrics scrapes and GPU memory samples during a level"),
		gpu:        fs.String("gpu", string(telemetry.GPUAuto), "GPU memory source: auto (NVML, else nvidia-smi), nvml, nvidia-smi, none; with --backend sim: the GPU to simulate, from the catalog (e.g. \"RTX 4090\")"),
		gpuIndex:   fs.Int("gpu-index", 0, "index of the GPU to watch (as nvidia-smi numbers them)"),
		serverPID:  fs.Int("server-pid", 0, "server `PID`: peak_vram_gib counts the GPU memory of its process tree (default: the launched server's; none: the whole device)"),
	}
}

// telemetryConfig reads the telemetry flags into cfg.Telemetry.
func (f *runFlags) telemetryConfig(cfg *runConfig, _ map[string]bool) error {
	if cfg.Sim != nil {
		return nil // nothing to watch: the engine reports its own (simrun's Observer)
	}
	tf := f.telemetry
	t := telemetrySettings{MetricsURL: *tf.metricsURL, ScrapeInterval: *tf.interval, GPUIndex: *tf.gpuIndex, ServerPID: *tf.serverPID}
	mode, err := telemetry.ParseGPUMode(*tf.gpu)
	if err != nil {
		return configf("--gpu: %v", err)
	}
	t.GPU = mode
	if err := t.Validate(); err != nil {
		return err
	}
	cfg.Telemetry = t
	return nil
}

// Validate checks the scrape period, the GPU index, the server's PID and
// the metrics URL.
func (t telemetrySettings) Validate() error {
	switch {
	case t.ScrapeInterval < minScrapeInterval:
		return configf("--scrape-interval %v: must be at least %v", t.ScrapeInterval, minScrapeInterval)
	case t.GPUIndex < 0:
		return configf("--gpu-index %d: must not be negative", t.GPUIndex)
	case t.ServerPID < 0:
		return configf("--server-pid %d: must not be negative", t.ServerPID)
	}
	if t.MetricsURL != "" && t.MetricsURL != telemetry.MetricsOff {
		if err := checkURL(t.MetricsURL); err != nil {
			return configf("--metrics-url: %v", err)
		}
	}
	return nil
}

// startTelemetry probes the server, starts the run's telemetry and fills
// the run's server, runtime (where the launched server's log did not name
// it), gpu, gpu_gib, kv_cache, capacity (where the log gave none) and
// warnings. serverPID is the process whose GPU memory counts (0: the whole
// device's). Close the observer when the run ends.
func startTelemetry(ctx context.Context, cfg runConfig, serverPID int, run *record.Run) telemetryLevels {
	id := backend.Probe(ctx, backend.Config{Kind: cfg.Backend, BaseURL: cfg.URL, Model: cfg.Model, APIKey: cfg.APIKey, Headers: cfg.Headers})
	if run.Server == nil {
		run.Server = &id.Server
	}
	run.Server.Discovered = cfg.Discovered
	if run.Runtime == nil {
		run.Runtime = id.Runtime
	}
	run.Warnings = append(run.Warnings, id.Warnings...)

	t := cfg.Telemetry
	o, info := telemetry.Start(ctx, telemetry.Config{
		Kind: cfg.Backend, BaseURL: cfg.URL, MetricsURL: t.MetricsURL, ScrapeInterval: t.ScrapeInterval,
		GPU: telemetry.GPUConfig{Mode: t.GPU, Index: t.GPUIndex, Interval: t.ScrapeInterval, ServerPID: serverPID},
	})
	run.GPU, run.GPUGiB = info.GPU, info.GPUGiB
	mergeKVCache(&run.KVCache, info.KVCache)
	if run.Capacity == nil {
		run.Capacity = info.Capacity
	}
	run.Warnings = append(run.Warnings, info.Warnings...)
	return telemetryLevels{o}
}

// mergeKVCache fills the null fields of dst from src.
func mergeKVCache(dst *record.KVCache, src record.KVCache) {
	if dst.Dtype == nil {
		dst.Dtype = src.Dtype
	}
	if dst.Blocks == nil {
		dst.Blocks = src.Blocks
	}
	if dst.BlockSize == nil {
		dst.BlockSize = src.BlockSize
	}
	if dst.GPUMemoryUtilization == nil {
		dst.GPUMemoryUtilization = src.GPUMemoryUtilization
	}
}

// telemetryLevels adapts a telemetry.Observer to load's observer
// interfaces.
type telemetryLevels struct{ o *telemetry.Observer }

// LevelStart starts scraping and sampling; it returns at once.
func (t telemetryLevels) LevelStart(ctx context.Context, _ load.Level) { t.o.Begin(ctx) }

// LevelEnd stops them and returns the level's telemetry fields.
func (t telemetryLevels) LevelEnd(ctx context.Context, _ load.Level) *record.Observations {
	return t.o.End(ctx)
}

// Close releases the GPU library (NVML) when the run ends.
func (t telemetryLevels) Close() { t.o.Close() }

// RepeatEnd reads the GPU memory after one batch (gpu_memory_mib_after).
func (t telemetryLevels) RepeatEnd(ctx context.Context, _ load.Level, _ int) *float64 {
	return t.o.GPUMemoryMiB(ctx)
}
