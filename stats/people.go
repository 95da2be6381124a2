package stats

import (
	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/record"
)

// people counts the conversations of a level of sessions (run --users,
// a multi-turn level): the distinct sessions its counted turns belong to.
type people struct {
	sessions map[int]struct{}
}

func (p *people) add(r *record.Result) {
	if r.Session == nil {
		return
	}
	if p.sessions == nil {
		p.sessions = map[int]struct{}{}
	}
	p.sessions[*r.Session] = struct{}{}
}

// fill sets the level's Conversations and MessageRate (its counted turns
// over its wall time), when it holds sessions.
func (p *people) fill(l *document.Level) {
	if len(p.sessions) == 0 {
		return
	}
	n := len(p.sessions)
	l.Conversations = &n
	if l.WallSeconds != nil && *l.WallSeconds > 0 {
		r := float64(l.Requests) / *l.WallSeconds
		l.MessageRate = &r
	}
}
