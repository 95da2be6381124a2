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

	// The whole run's plan (plan): its levels and counted requests, 0
	// where unknown (find chooses its levels as it goes). index is the
	// level under way, 1-based; doneBefore the requests of the levels
	// before it; runStarted the first level's start, for the run's ETA.
	levels, requests int
	// method is the sweep's load method, for the level's name ("users 5"
	// where the load is people, not "c=5").
	method     load.Method
	index      int
	doneBefore int
	runStarted time.Time

	p   *mpb.Progress
	bar *mpb.Bar
}

// newProgress shows progress on w; tty says whether w is a terminal
// (Deps.IsTerminal).
func newProgress(w io.Writer, quiet, tty bool) *progress {
	return &progress{w: w, quiet: quiet, tty: tty}
}

// plan tells progress the whole run's levels and counted requests, so
// that each line says "level 2 of 4" and its ETA covers the run, not only
// the level; without it (find, whose levels are chosen as it goes) the
// lines number the levels and estimate the level alone.
func (p *progress) plan(levels, requests int) {
	p.mu.Lock()
	p.levels, p.requests = levels, requests
	p.mu.Unlock()
}

// loads tells progress the sweep's load method, so that a users level is
// named "users N".
func (p *progress) loads(m load.Method) {
	p.mu.Lock()
	p.method = m
	p.mu.Unlock()
}

func (p *progress) levelStart(l load.Level, total int) {
	if p.quiet {
		return
	}
	view := &levelView{}
	started := time.Now()
	p.mu.Lock()
	if p.acc != nil {
		p.doneBefore += p.acc.Requests()
	}
	p.index++
	if p.index == 1 {
		p.runStarted = started
	}
	p.acc, p.level, p.total, p.view = &stats.Accumulator{}, l, total, view
	p.snapAt, p.lastOut, p.started = time.Time{}, started, started
	name, plan := p.name(), p.etaPlan()
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
		mpb.PrependDecorators(decor.Name(name+" "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Any(func(st decor.Statistics) string {
			return figures(view.get()) + "  " + plan.eta(time.Now(), started, int(st.Current), int(st.Total))
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
		fmt.Fprintf(p.w, "servebench: %s %d/%d %s  %s\n", p.name(), done, p.total, figures(p.view.get()), p.etaPlan().eta(now, p.started, done, p.total))
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
	name := p.name()
	if bar != nil {
		if snap.Requests >= total {
			bar.SetTotal(-1, true)
			bar.Wait()
			return
		}
		// Stopped short (Ctrl-C, a saturation stop): the live line is
		// dropped and mpb shut down before a plain line replaces it, so
		// the terminal's echoed ^C and a half-redrawn bar cannot mix into
		// it ("c=c=1 51/200"); "\r\x1b[K" clears what the echo left.
		bar.Abort(true)
		bar.Wait()
		p.p.Wait()
		p.p = nil
		fmt.Fprintf(p.w, "\r\x1b[Kservebench: %s stopped %d/%d %s\n", name, snap.Requests, total, figures(snap))
		return
	}
	fmt.Fprintf(p.w, "servebench: %s done %d/%d %s\n", name, snap.Requests, total, figures(snap))
}

// name is the level's name with its place in the run: "level 2 of 4
// c=4", or "level 2 c=4" where the run's levels are not known ahead.
// p.mu is held.
func (p *progress) name() string {
	if p.levels > 0 && p.index <= p.levels {
		return fmt.Sprintf("level %d of %d %s", p.index, p.levels, levelName(p.level, p.method))
	}
	return fmt.Sprintf("level %d %s", p.index, levelName(p.level, p.method))
}

// etaPlan is what the ETA of the level under way needs of the run, copied
// so that mpb's render goroutine reads it without p.mu. p.mu is held.
func (p *progress) etaPlan() etaPlan {
	return etaPlan{levels: p.levels, requests: p.requests, index: p.index, doneBefore: p.doneBefore, runStarted: p.runStarted}
}

// etaPlan is the run's plan and progress when a level started.
type etaPlan struct {
	levels, requests, index, doneBefore int
	runStarted                          time.Time
}

// eta is the time left: over the whole run where its requests are
// planned ("run ETA 1m4s": its pace so far, from the first level's
// start, against the requests of every level), else the level's alone
// (levelStarted, done of total).
func (e etaPlan) eta(now, levelStarted time.Time, done, total int) string {
	if e.requests > 0 && e.levels > 0 && e.index <= e.levels {
		return "run " + eta(now.Sub(e.runStarted), e.doneBefore+done, e.requests)
	}
	return eta(now.Sub(levelStarted), done, total)
}
func (p *progress) close() {
	if p.p != nil {
		p.p.Wait()
	}
}

// levelName names level l of a sweep of method m as its lines do:
// "users 5" (people), "rate=2/s", "trace (mean 1.5/s)" or "c=5".
func levelName(l load.Level, m load.Method) string {
	switch {
	case m == load.Users:
		return fmt.Sprintf("users %d", l.Concurrency)
	case load.Arrival(l.Arrival) == load.Trace:
		return fmt.Sprintf("trace (mean %.3g/s)", l.Rate)
	case l.Rate > 0:
		return fmt.Sprintf("rate=%.4g/s", l.Rate)
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
