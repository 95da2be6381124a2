package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/record"
)

// MetricsOff is the --metrics-url value that turns scraping off.
const MetricsOff = "none"

// Config configures the telemetry of one run.
type Config struct {
	// Kind is the server family; it picks the metric names.
	Kind backend.Kind
	// BaseURL is the server's base URL (a trailing /v1 is dropped); the
	// default metrics URL is BaseURL + /metrics.
	BaseURL string
	// MetricsURL overrides the metrics endpoint; MetricsOff turns
	// scraping off.
	MetricsURL string
	// ScrapeInterval is the period of scrapes and GPU samples during a
	// level (DefaultScrapeInterval when ≤ 0).
	ScrapeInterval time.Duration
	// GPU selects the GPU memory source; its Interval defaults to
	// ScrapeInterval.
	GPU GPUConfig
}

// RunInfo is what telemetry learned before the first level, for the run's
// description (record.Run): the GPU, the KV-cache settings and capacity the server exports,
// and warnings.
type RunInfo struct {
	// GPU is the device name; GPUGiB its memory in GiB (2^30 bytes), two
	// decimals as in examples/multi-backend-sweep.json.
	GPU    *string
	GPUGiB *float64
	// KVCache is from vLLM's cache_config_info; null fields elsewhere.
	KVCache record.KVCache
	// Capacity is the KV capacity in tokens the metrics give (vLLM
	// num_gpu_blocks × block_size, SGLang max_total_num_tokens); nil if
	// none.
	Capacity *record.Capacity
	// Warnings are findings as data: what cannot be observed, and why.
	Warnings []string
}

// Observer watches one run: Start before the first level, then Begin and
// End around each level, on goroutines of its own.
type Observer struct {
	scraper   *Scraper
	gpu       *GPUSampler
	serverPID int
	// attributionWarned is set once the run was told that the server's
	// processes were not found among the GPU's.
	attributionWarned bool
	level             *LevelScrape
	levelGPU          *LevelGPU
}

// Start opens the GPU sampler and scrapes the server once (no request is in
// flight yet), and returns the observer and what it learned. It never
// fails: whatever cannot be observed stays null with a warning.
func Start(ctx context.Context, cfg Config) (*Observer, RunInfo) {
	var info RunInfo
	if cfg.ScrapeInterval <= 0 {
		cfg.ScrapeInterval = DefaultScrapeInterval
	}
	if cfg.GPU.Interval <= 0 {
		cfg.GPU.Interval = cfg.ScrapeInterval
	}
	o := &Observer{serverPID: cfg.GPU.ServerPID}
	var warns []string
	o.gpu, warns = OpenGPU(ctx, cfg.GPU)
	info.Warnings = append(info.Warnings, warns...)
	if dev, ok := o.gpu.Device(); ok {
		name := dev.Name
		gib := round2(dev.TotalMiB / 1024)
		info.GPU, info.GPUGiB = &name, &gib
	}
	o.scraper = o.startMetrics(ctx, cfg, &info)
	return o, info
}

// root is the server's base URL without a trailing slash or /v1.
func root(base string) string {
	s := strings.TrimRight(base, "/")
	return strings.TrimRight(strings.TrimSuffix(s, "/v1"), "/")
}

// startMetrics picks and checks the scraper; nil when there is nothing to
// scrape.
func (o *Observer) startMetrics(ctx context.Context, cfg Config, info *RunInfo) *Scraper {
	if cfg.MetricsURL == MetricsOff {
		return nil
	}
	names, ok := backend.MetricsFor(cfg.Kind)
	if !ok && cfg.MetricsURL == "" {
		info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: %s exports no Prometheus metrics: peak_kv_cache_usage, preemptions and request peaks are null", cfg.Kind))
		return nil
	}
	if !ok {
		names, _ = backend.MetricsFor(backend.OpenAI) // an explicit URL: try every table
	}
	url := cfg.MetricsURL
	if url == "" {
		url = root(cfg.BaseURL) + "/metrics"
	}
	s := NewScraper(url, names, cfg.ScrapeInterval)
	smp, err := s.Scrape(ctx)
	var se *StatusError
	switch {
	case errors.As(err, &se) && se.absent():
		if cfg.Kind == backend.LlamaCpp {
			return o.slotsFallback(ctx, cfg, se, info)
		}
		info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: %v: server metrics (peak_kv_cache_usage, preemptions) are null", err))
		return nil
	case err != nil:
		info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: first scrape failed (%v); scraping each level anyway", err))
		if smp.empty() {
			return s
		}
	}
	if smp.KVUsage == nil && smp.Preemptions == nil && smp.Running == nil && smp.Waiting == nil && smp.Cache.empty() {
		info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: %s has none of the %s metrics servebench reads (e.g. %s): server metrics are null", url, cfg.Kind, strings.Join(firstNames(names), ", ")))
	}
	applyRunMetrics(info, smp, cfg.Kind)
	return s
}

// slotsFallback switches llama.cpp to /slots when /metrics is off.
func (o *Observer) slotsFallback(ctx context.Context, cfg Config, se *StatusError, info *RunInfo) *Scraper {
	s := NewSlotsScraper(root(cfg.BaseURL)+"/slots", cfg.ScrapeInterval)
	if _, err := s.Scrape(ctx); err != nil {
		info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: %v (start llama-server with --metrics) and /slots failed (%v): server metrics are null", se, err))
		return nil
	}
	info.Warnings = append(info.Warnings, fmt.Sprintf("metrics: %v (start llama-server with --metrics); busy slots come from /slots, KV usage is null", se))
	return s
}

func firstNames(n backend.MetricNames) []string {
	var out []string
	for _, l := range [][]string{n.KVUsage, n.Preemptions, n.Running} {
		if len(l) > 0 {
			out = append(out, l[0])
		}
	}
	return out
}

// applyRunMetrics copies the KV-cache settings and capacity of a scrape to
// the run.
func applyRunMetrics(info *RunInfo, s Sample, kind backend.Kind) {
	c := s.Cache
	info.KVCache = record.KVCache{Dtype: c.Dtype, Blocks: c.Blocks, BlockSize: c.BlockSize, GPUMemoryUtilization: c.GPUMemoryUtilization}
	for _, d := range s.Dropped {
		info.Warnings = append(info.Warnings, "metrics: "+d.String()+"; dropped")
	}
	tokens, haveTokens := c.Tokens()
	switch {
	case haveTokens:
		info.Capacity = &record.Capacity{Tokens: &tokens, Blocks: ptr.To(*c.Blocks),
			Source: "/metrics cache_config_info num_gpu_blocks × block_size"}
	case s.KVTokensMax != nil && *s.KVTokensMax > 0 && *s.KVTokensMax < math.MaxInt32:
		tokens := int(*s.KVTokensMax)
		info.Capacity = &record.Capacity{Tokens: &tokens, Source: "/metrics " + string(kind) + " max_total_num_tokens"}
	}
}

// Begin starts watching a level; call it just before the level's first
// counted request. It returns at once.
func (o *Observer) Begin(ctx context.Context) {
	if o.scraper != nil {
		o.level = o.scraper.Begin(ctx)
	}
	o.levelGPU = o.gpu.Begin(ctx)
}

// End stops watching the level and returns what was observed over it:
// PeakVRAMGiB, PeakKVCacheUsage, Preemptions, PeakRequestsRunning,
// PeakRequestsWaiting, RequestsWaitingRise and Warnings, as its records file's level_end line
// carries them; nil if nothing was observed.
func (o *Observer) End(ctx context.Context) *record.Observations {
	var out record.Observations
	if o.level != nil {
		m := o.level.End(ctx)
		o.level = nil
		out.PeakKVCacheUsage, out.Preemptions = m.PeakKVUsage, m.Preemptions
		out.PeakRequestsRunning, out.PeakRequestsWaiting = m.PeakRunning, m.PeakWaiting
		out.PrefixCacheHitRate = m.PrefixCacheHitRate
		out.RequestsWaitingRise = m.WaitingRise
		out.Warnings = append(out.Warnings, m.Warnings...)
	}
	if o.levelGPU != nil {
		g := o.levelGPU.End(ctx)
		o.levelGPU = nil
		out.PeakVRAMGiB = o.peakGiB(g, &out)
		out.Warnings = append(out.Warnings, g.Warnings...)
		e := g.Energy
		out.EnergyJ, out.MeanPowerW, out.PeakPowerW, out.EnergyMethod = e.Joules, e.MeanW, e.PeakW, e.Method
		if e.Note != "" {
			out.Warnings = append(out.Warnings, "energy: "+e.Note)
		}
	}
	if out.PeakVRAMGiB == nil && out.PeakKVCacheUsage == nil && out.Preemptions == nil &&
		out.PeakRequestsRunning == nil && out.PeakRequestsWaiting == nil && out.PrefixCacheHitRate == nil && out.EnergyJ == nil && len(out.Warnings) == 0 {
		return nil
	}
	return &out
}

// peakGiB is the level's peak VRAM: the server process tree's when a
// server PID was given and its processes were found on the GPU, else the
// whole device's.
func (o *Observer) peakGiB(g GPUSummary, out *record.Observations) *float64 {
	if o.serverPID > 0 {
		if g.PeakServerMiB != nil && *g.PeakServerMiB > 0 {
			return ptr.To(round2(*g.PeakServerMiB / 1024))
		}
		if !o.attributionWarned {
			o.attributionWarned = true
			out.Warnings = append(out.Warnings, fmt.Sprintf("gpu: no GPU memory found for server pid %d or its children (another PID namespace?): peak_vram_gib is the whole device's", o.serverPID))
		}
	}
	if g.PeakUsedMiB == nil {
		return nil
	}
	return ptr.To(round2(*g.PeakUsedMiB / 1024))
}

// GPUMemoryMiB reads the device memory in use now, in MiB (the batch
// method's gpu_memory_mib_after); nil without a GPU or on a failed read.
func (o *Observer) GPUMemoryMiB(ctx context.Context) *float64 {
	if o.gpu == nil {
		return nil
	}
	r, err := o.gpu.src.read(ctx)
	if err != nil {
		return nil
	}
	return ptr.To(r.UsedMiB)
}

// Close releases the GPU library and the scraper's idle connections; the
// observer is done.
func (o *Observer) Close() {
	o.gpu.Close()
	if o.scraper != nil {
		o.scraper.client.CloseIdleConnections()
	}
}

// round2 rounds to two decimals, as examples/multi-backend-sweep.json
// prints GiB.
func round2(v float64) float64 { return math.Round(v*100) / 100 }
