package cli

import (
	"context"
	"time"

	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simrun"
	"github.com/servebench/servebench/workload"
)

// A simulated level starts on a fresh server. run, find and capacity
// with --backend sim, and plan --users, run each level, and each further
// pass of a level, on a new simulated server (freshServers) rather than
// one after another on one: a level's figures are then a function of the
// server, the workload, the seed, its load and its pass alone, not of
// the levels a sweep or a search ran before it (their engine state —
// caches, queues —, their virtual time, the random draws they consumed).
// So capacity's search gives a load the same verdict whether it reached
// it early or late, and plan --users, which asks the same search about
// its N, gets the verdict capacity's search gives a probe at N.
//
// Every draw of a level derives from passSeed(--seed, pass) and the
// level's own numbering, which starts afresh: the server's send delays
// and the prompts (keyed by the request's sequence number), the people's
// conversations and think times (keyed by their number), and the users
// level's start offsets (keyed by its load and pass). A rate level's
// schedule is keyed by its level key too (load.NewPacer), which for rate
// is its place in the sweep, as run --duration plans its requests. The
// server's clock carries on where the last level's stopped, so that the
// records of a run keep one timeline.

// passSeed is the seed of pass pass of a simulated level whose run is
// seeded with seed: the run's own for a level's first pass, and another
// for each repeat, so that a repeat draws other send delays,
// conversations and think times.
func passSeed(seed int64, pass int) int64 { return seed + int64(pass) }

// freshServers makes the fresh simulated server of each level of a
// sweep (see above).
type freshServers struct {
	cfg sim.Config
	opt simrun.Options
	// people is the sweep's model of people (nil outside the users
	// method), whose seed each pass derives.
	people *workload.People
	// next is the clock time the next server starts at: where the last
	// one stopped.
	next time.Time
}

// newFreshServers readies fresh servers of cfg for the levels of a sweep
// seeded with opt.Seed, their clock starting where after (the server
// that calibrated the workload) stopped; people is the sweep's
// PeopleSource.
func newFreshServers(cfg sim.Config, opt simrun.Options, people load.PeopleSource, after *sim.Virtual) *freshServers {
	f := &freshServers{cfg: cfg, opt: opt, next: after.Now()}
	f.people, _ = people.(*workload.People)
	return f
}

// ready points sw at a fresh server for level l: its client, clock and
// observer, the pass's seed for the sweep's schedules and people, and
// the numbering of requests and sessions from 0. It returns the server,
// for done.
func (f *freshServers) ready(sw *load.Sweep, l load.Level) (*sim.Virtual, error) {
	seed := passSeed(f.opt.Seed, l.Pass)
	opt := f.opt
	opt.Seed, opt.Base = seed, f.next
	v, err := simrun.New(f.cfg, opt)
	if err != nil {
		return nil, err // the calibration server of the same cfg was made: not a usage error
	}
	sw.Client, sw.Clock, sw.Observe = v.Client(), v, []load.Observer{v.Observer()}
	sw.Seed, sw.FirstSeq, sw.FirstSession = seed, 0, 0
	if f.people != nil {
		p := *f.people
		p.Seed = seed
		sw.People = &p
	}
	return v, nil
}

// doLevels runs levels on sw: for a simulated sweep (fresh non-nil)
// each on a fresh server, one Do each, stopping at the first that did
// not complete; otherwise all in one Do on the sweep's server.
func doLevels(ctx context.Context, sw *load.Sweep, fresh *freshServers, levels []load.Level) (bool, error) {
	if fresh == nil {
		sw.Levels = levels
		return sw.Do(ctx)
	}
	for _, l := range levels {
		v, err := fresh.ready(sw, l)
		if err != nil {
			return false, err
		}
		sw.Levels = []load.Level{l}
		complete, err := sw.Do(ctx)
		fresh.next = v.Now()
		if err != nil || !complete {
			return complete, err
		}
	}
	return ctx.Err() == nil, nil
}
