package stats

import (
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

// people counts the conversations of a level of sessions (run --users,
// a multi-turn level): the distinct sessions its counted turns belong to,
// and when each repeat's counted turns were sent.
type people struct {
	sessions map[int]struct{}
	sends    map[int]*sendSpan // by repeat
}

// sendSpan is the first and last send of one repeat's counted turns.
type sendSpan struct {
	first, last int64
	n           int
}

func (p *people) add(r *record.Result) {
	if r.Session == nil {
		return
	}
	if p.sessions == nil {
		p.sessions, p.sends = map[int]struct{}{}, map[int]*sendSpan{}
	}
	p.sessions[*r.Session] = struct{}{}
	sp := p.sends[r.Repeat]
	if sp == nil {
		p.sends[r.Repeat] = &sendSpan{first: r.StartNS, last: r.StartNS, n: 1}
		return
	}
	sp.first, sp.last, sp.n = min(sp.first, r.StartNS), max(sp.last, r.StartNS), sp.n+1
}

// fill sets the level's Conversations and MessageRate, when it holds
// sessions. The message rate is the arrival rate of Little's law: the
// counted turns' sends per second between each repeat's first and last
// send ((n−1) gaps over that span), not the counted turns over the wall
// time, whose end waits for the longest answer still streaming when the
// level stopped sending and so reads low by up to a long answer's E2E.
// A level whose sends span no time falls back to its wall time.
func (p *people) fill(l *document.Level) {
	if len(p.sessions) == 0 {
		return
	}
	n := len(p.sessions)
	l.Conversations = &n
	var gaps int
	var span int64
	for _, sp := range p.sends {
		gaps += sp.n - 1
		span += sp.last - sp.first
	}
	switch {
	case span > 0 && gaps > 0:
		r := float64(gaps) / (float64(span) / 1e9)
		l.MessageRate = &r
	case l.WallSeconds != nil && *l.WallSeconds > 0:
		r := float64(l.Requests) / *l.WallSeconds
		l.MessageRate = &r
	}
}
