package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/stats"
)

// plainInterval is how often progress prints a line when standard error
// is not a terminal.
const plainInterval = 5 * time.Second

// progress shows each level on standard error: requests done of the
// level's total, throughput, TTFT p50, errors and an ETA, as a live mpb bar
// on a terminal, plain periodic lines otherwise, nothing with --quiet. It
// summarizes with the same stats.Accumulator that the report uses, so the
// live figures and the report agree.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool

	mu      sync.Mutex
	acc     *stats.Accumulator
	view    *levelView
	snapAt  time.Time
	started time.Time // the level's start, for its ETA
	level   load.Level
	total   int
	lastOut time.Time

	p   *mpb.Progress
	bar *mpb.Bar
}

// newProgress shows progress on w; tty says whether w is a terminal
// (Deps.IsTerminal).
func newProgress(w io.Writer, quiet, tty bool) *progress {
	return &progress{w: w, quiet: quiet, tty: tty}
}

func (p *progress) levelStart(l load.Level, total int) {
	if p.quiet {
		return
	}
	view := &levelView{}
	started := time.Now()
	p.mu.Lock()
	p.acc, p.level, p.total, p.view = &stats.Accumulator{}, l, total, view
	p.snapAt, p.lastOut, p.started = time.Time{}, started, started
	p.mu.Unlock()
	if !p.tty {
		return
	}
	// mpb calls the decorator from its render goroutine: it must take no
	// lock that is held while calling into mpb, so it reads only the
	// level's own view.
	if p.p == nil {
		p.p = mpb.New(mpb.WithOutput(p.w), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithAutoRefresh())
	}
	bar := p.p.AddBar(int64(total), mpb.BarWidth(24),
		mpb.PrependDecorators(decor.Name(levelName(l)+" "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Any(func(st decor.Statistics) string {
			return figures(view.get()) + "  " + eta(time.Since(started), int(st.Current), int(st.Total))
		})),
	)
	p.mu.Lock()
	p.bar = bar
	p.mu.Unlock()
}

// levelView is the snapshot a level's live line shows.
type levelView struct {
	mu   sync.Mutex
	snap document.Level
}

func (v *levelView) set(l document.Level) {
	v.mu.Lock()
	v.snap = l
	v.mu.Unlock()
}

func (v *levelView) get() document.Level {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.snap
}

func (p *progress) add(r *record.Result) {
	if p.quiet || r.Warmup {
		return
	}
	p.mu.Lock()
	p.acc.Add(r)
	now := time.Now()
	if now.Sub(p.snapAt) >= 100*time.Millisecond {
		p.view.set(p.acc.Live())
		p.snapAt = now
	}
	plain := !p.tty && now.Sub(p.lastOut) >= plainInterval
	if plain {
		p.lastOut = now
		done := p.acc.Requests()
		fmt.Fprintf(p.w, "servebench: %s %d/%d %s  %s\n", levelName(p.level), done, p.total, figures(p.view.get()), eta(now.Sub(p.started), done, p.total))
	}
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Increment()
	}
}

func (p *progress) levelEnd() {
	if p.quiet {
		return
	}
	p.mu.Lock()
	snap := p.acc.Live()
	p.view.set(snap)
	bar, total := p.bar, p.total
	p.bar = nil
	p.mu.Unlock()
	if bar != nil {
		if snap.Requests < total {
			bar.Abort(false)
		} else {
			bar.SetTotal(-1, true)
		}
		bar.Wait()
		return
	}
	fmt.Fprintf(p.w, "servebench: %s done %d/%d %s\n", levelName(p.level), snap.Requests, total, figures(snap))
}

func (p *progress) close() {
	if p.p != nil {
		p.p.Wait()
	}
}

func levelName(l load.Level) string {
	if l.Rate > 0 {
		return fmt.Sprintf("rate=%g/s", l.Rate)
	}
	return fmt.Sprintf("c=%d", l.Concurrency)
}

// figures is the live line's numbers: throughput, TTFT p50, errors.
func figures(l document.Level) string {
	s := "tok/s -"
	if l.ThroughputTokS != nil {
		s = fmt.Sprintf("%.1f tok/s", *l.ThroughputTokS)
	}
	if l.TTFTP50Ms != nil {
		s += fmt.Sprintf("  TTFT p50 %.1f ms", *l.TTFTP50Ms)
	} else {
		s += "  TTFT p50 -"
	}
	return s + fmt.Sprintf("  errors %d", l.Errors)
}

// eta estimates the time a level has left from its pace so far:
// elapsed × (total − done) / done, to the second; "ETA -" before the first
// request ends.
func eta(elapsed time.Duration, done, total int) string {
	switch {
	case done <= 0 || total <= 0:
		return "ETA -"
	case done >= total:
		return "ETA 0s"
	}
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	return "ETA " + left.Round(time.Second).String()
}
