package workload

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/trace"
)

// TraceSource prepares the requests of a replayed trace (run --trace): one
// per row, each with its row's prompt and output lengths and images, in
// the trace's order and time. Prompts are unique per request like every
// other workload's, except where the trace says requests share:
//
//   - A session (rows naming one session, in turn order) is a
//     conversation: its first turn is due at its row's arrival, and each
//     later turn carries the conversation so far (earlier messages and the
//     server's real answers) and a new user message, sent when the
//     previous answer has come and the row's think time (think_ms) has
//     passed, or else at the row's arrival (at once when the answer came
//     after it). A later row's input_tokens is the whole prompt, as the
//     published traces count it: its new message is input_tokens − the
//     previous row's input_tokens − its output_tokens tokens long (at
//     least MinUserTokens).
//   - Rows naming a prefix_group begin with that group's shared prefix,
//     a system prompt of Spec.SharedPrefixTokens tokens built by the
//     grouped Builder (prefix.go), their whole prompt still of the row's
//     length; a session's prefix is its first turn's.
//   - A Mooncake row that lists hash_ids has its prompt built block by
//     block, each block's text a function of its id only, so rows that
//     list the same leading ids share that prefix (blocks of
//     trace.MooncakeBlockTokens tokens; their length is modelled from the
//     calibration's tokens per character, so such prompts are near, not
//     exactly at, their length). Rows with the same first block are one
//     prefix group in the records. A session's later turns ignore their
//     ids: the conversation is their prefix.
//
// Every request meant to share (sessions, prefix groups, hash_ids) leaves
// the server's prompt cache on (backend.Request.ReusePrefix).
type TraceSource struct {
	b, grouped *Builder
	rows       []trace.Row
	arrivals   []traceArrival
	blocks     *Prompts
	// groups numbers the shared prefixes the records name: prefix_group
	// names ("g:" + name) first, then first hash_ids blocks ("h:" + id),
	// each in order of first arrival.
	groups map[string]int
	notes  []string
}

// traceArrival is one arrival of a trace: a single row, or a session's
// rows in turn order.
type traceArrival struct {
	rows    []*trace.Row
	session bool
}

// NewTraceSource returns the source of t's rows. b builds the rows without
// a shared prefix, and the new messages of sessions' later turns; grouped,
// which may be nil when t names no prefix group, builds those that name
// one (a Builder of TraceGroupSpec). Their Specs give the seed and the
// image size and format; b's PromptTokens and MaxTokens should be t's
// medians (TraceSpec), where b's calibration is most exact. Calibrate
// both first: the error is a grouped row that leaves no room for a user
// message beside the prefix, as the server counts it.
func NewTraceSource(b, grouped *Builder, t *trace.Trace) (*TraceSource, error) {
	arrivals, err := traceArrivals(t)
	if err != nil {
		return nil, err
	}
	s := &TraceSource{b: b, grouped: grouped, rows: t.Rows, arrivals: arrivals, blocks: NewPrompts(b.spec.Seed ^ 0x6b10c5), groups: map[string]int{}}
	s.numberGroups()
	if err := s.checkRoom(t.File); err != nil {
		return nil, err
	}
	s.notes = traceNotes(t, arrivals)
	return s, nil
}

// numberGroups numbers the named prefix groups, then the first blocks of
// hash_ids, in order of first arrival.
func (s *TraceSource) numberGroups() {
	for _, r := range s.rows {
		if r.PrefixGroup != "" {
			if k := "g:" + r.PrefixGroup; !hasKey(s.groups, k) {
				s.groups[k] = len(s.groups)
			}
		}
	}
	for _, r := range s.rows {
		if len(r.HashIDs) > 0 {
			if k := "h:" + strconv.Itoa(r.HashIDs[0]); !hasKey(s.groups, k) {
				s.groups[k] = len(s.groups)
			}
		}
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// checkRoom checks every row that begins with a named group's prefix
// against the prefix's cost as the grouped Builder measured it.
func (s *TraceSource) checkRoom(file string) error {
	if s.grouped == nil || s.grouped.mode == Unenforced {
		return nil
	}
	for _, a := range s.arrivals {
		r := a.rows[0]
		if r.PrefixGroup != "" && r.Images == 0 && r.InputTokens-s.grouped.prefix.cost < MinUserTokens {
			return fmt.Errorf("%s:%d: input_tokens %d leaves no room for a user message beside the %d-token shared prefix of prefix_group %q, which this server counts as %d prompt tokens (lower --shared-prefix-tokens)",
				file, r.Line, r.InputTokens, s.grouped.spec.SharedPrefixTokens, r.PrefixGroup, s.grouped.prefix.cost)
		}
	}
	return nil
}

// Notes are the run warnings the replay owes its reader: what reading the
// trace skipped, and where the replay departs from the rows.
func (s *TraceSource) Notes() []string { return s.notes }

// TraceSpec is the Spec of a trace's Builder: scenario text, the trace's
// median prompt and output lengths (the lengths the calibration aims at),
// and the seed and images of base.
func TraceSpec(t *trace.Trace, base Spec) Spec {
	in := make([]int, len(t.Rows))
	out := make([]int, len(t.Rows))
	for i, r := range t.Rows {
		in[i], out[i] = r.InputTokens, r.OutputTokens
	}
	base.Scenario = Text
	base.PromptTokens, base.MaxTokens = median(in), median(out)
	return base
}

// TraceGroupSpec is the Spec of the Builder of a trace's rows that name a
// prefix_group: as TraceSpec over those rows (sessions' first turns and
// single requests), with one shared prefix of prefixTokens tokens per
// group name. ok is false when the trace names no group.
func TraceGroupSpec(t *trace.Trace, base Spec, prefixTokens int) (spec Spec, ok bool) {
	var in, out []int
	names := map[string]bool{}
	for _, r := range groupedRows(t) {
		in, out = append(in, r.InputTokens), append(out, r.OutputTokens)
		names[r.PrefixGroup] = true
	}
	if len(in) == 0 {
		return base, false
	}
	base.Scenario = Text
	base.PromptTokens, base.MaxTokens = median(in), median(out)
	base.SharedPrefixTokens, base.PrefixGroups = prefixTokens, len(names)
	return base, true
}

// TracePrefixTokens is the shared prefix length of a trace's prefix
// groups when run --shared-prefix-tokens does not give one: half the
// shortest prompt that begins with one (a session's first turn or a
// single request), so every such prompt keeps room for its own text; 0
// when the trace names no group.
func TracePrefixTokens(t *trace.Trace) int {
	if r := TraceShortestGrouped(t); r != nil {
		return r.InputTokens / 2
	}
	return 0
}

// TraceShortestGrouped is the row of t with the shortest prompt that
// begins with a prefix group's prefix, nil when none does: what
// --shared-prefix-tokens must leave room in.
func TraceShortestGrouped(t *trace.Trace) *trace.Row {
	rows := groupedRows(t)
	if len(rows) == 0 {
		return nil
	}
	return slices.MinFunc(rows, func(a, b *trace.Row) int { return cmp.Compare(a.InputTokens, b.InputTokens) })
}

// groupedRows are the rows whose prompt begins with a named group's
// prefix: the first turns of sessions and the single requests that name a
// prefix_group (a session's later turns carry its first turn's prefix in
// their conversation).
func groupedRows(t *trace.Trace) []*trace.Row {
	arrivals, err := traceArrivals(t)
	if err != nil {
		return nil
	}
	var out []*trace.Row
	for _, a := range arrivals {
		if a.rows[0].PrefixGroup != "" {
			out = append(out, a.rows[0])
		}
	}
	return out
}

// TraceLevel is what a replay of t plans: its number of sessions (rows
// naming one session are one, whatever their count) and its arrivals'
// mean rate in arrivals/s, (n − 1) / span over the single requests and
// the sessions' first turns (0 when they span no time). The error names a
// session that lists a turn twice.
func TraceLevel(t *trace.Trace) (sessions int, rate float64, err error) {
	arrivals, err := traceArrivals(t)
	if err != nil {
		return 0, 0, err
	}
	for _, a := range arrivals {
		if a.session {
			sessions++
		}
	}
	if span := arrivals[len(arrivals)-1].rows[0].At - arrivals[0].rows[0].At; span > 0 {
		rate = float64(len(arrivals)-1) / span.Seconds()
	}
	return sessions, rate, nil
}

// traceArrivals groups t's rows into arrivals, in order of arrival (of a
// session's first turn): rows naming a session are that session's turns,
// in turn order (by arrival where the trace gives no turn); every other
// row is a single request.
func traceArrivals(t *trace.Trace) ([]traceArrival, error) {
	var out []traceArrival
	bySession := map[string]int{}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Session == "" {
			out = append(out, traceArrival{rows: []*trace.Row{r}})
			continue
		}
		j, ok := bySession[r.Session]
		if !ok {
			j = len(out)
			bySession[r.Session] = j
			out = append(out, traceArrival{session: true})
		}
		out[j].rows = append(out[j].rows, r)
	}
	for i := range out {
		a := &out[i]
		if !a.session {
			continue
		}
		slices.SortStableFunc(a.rows, func(x, y *trace.Row) int { return cmp.Compare(x.Turn, y.Turn) })
		for k := 1; k < len(a.rows); k++ {
			if prev, r := a.rows[k-1], a.rows[k]; r.Turn > 0 && r.Turn == prev.Turn {
				return nil, &trace.ParseError{File: t.File, Line: r.Line, Err: fmt.Errorf("session %q lists turn %d twice (line %d too)", r.Session, r.Turn, prev.Line)}
			}
		}
	}
	slices.SortStableFunc(out, func(x, y traceArrival) int { return cmp.Compare(x.rows[0].At, y.rows[0].At) })
	return out, nil
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Items prepares the requests of rows 0 … n−1, numbered seq0 on, each a
// single request: for a trace without sessions (a trace with sessions is
// prepared by Arrivals).
func (s *TraceSource) Items(ctx context.Context, seq0, n int) ([]Item, error) {
	if n > len(s.rows) {
		return nil, fmt.Errorf("trace has %d rows, %d requests asked for", len(s.rows), n)
	}
	items := make([]Item, n)
	for i := range items {
		row := &s.rows[i]
		it, err := s.row(ctx, seq0+i, row)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", row.Line, err)
		}
		items[i] = it
	}
	return items, nil
}

// Arrivals prepares the trace's rows as the arrivals of its level: single
// requests and sessions, in order of arrival; sessions numbered id0 on,
// requests seq0 on (a session's turns one after the other). n is the
// level's planned session count, which must be the trace's (TraceLevel).
// It is load's SessionSource.
func (s *TraceSource) Arrivals(ctx context.Context, id0, seq0, n int) ([]Arrival, error) {
	out := make([]Arrival, len(s.arrivals))
	seq, id := seq0, id0
	for i, a := range s.arrivals {
		out[i].Seq = seq
		if !a.session {
			it, err := s.row(ctx, seq, a.rows[0])
			if err != nil {
				return nil, fmt.Errorf("trace line %d: %w", a.rows[0].Line, err)
			}
			out[i].Item = it
			seq++
			continue
		}
		ss, err := s.session(ctx, id, seq, a.rows)
		if err != nil {
			return nil, err
		}
		out[i].Session = ss
		seq += len(a.rows)
		id++
	}
	if id-id0 != n {
		return nil, fmt.Errorf("trace has %d sessions, the level planned %d", id-id0, n)
	}
	return out, nil
}

// session prepares the session of rows (in turn order), numbered id, its
// requests seq on.
func (s *TraceSource) session(ctx context.Context, id, seq int, rows []*trace.Row) (*Session, error) {
	ss := &Session{ID: id, timed: true, turns: make([]Item, len(rows))}
	first, err := s.row(ctx, seq, rows[0])
	if err != nil {
		return nil, fmt.Errorf("trace line %d: %w", rows[0].Line, err)
	}
	first.Request.ReusePrefix = true
	ss.turns[0] = first
	for k := 1; k < len(rows); k++ {
		r, prev := rows[k], rows[k-1]
		text, err := s.b.messageText(ctx, seq+k, followupTokens(prev, r))
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", r.Line, err)
		}
		it := laterTurn(first, text, r.OutputTokens)
		if err := s.b.addImages(&it, seq+k, r.Images); err != nil {
			return nil, fmt.Errorf("trace line %d: %w", r.Line, err)
		}
		it.Due, it.Trace = r.At, r
		ss.turns[k] = it
	}
	return ss, nil
}

// followupTokens is the length of a session's new user message in row r,
// which follows row prev: r's whole prompt less prev's prompt and answer
// (at least MinUserTokens).
func followupTokens(prev, r *trace.Row) int {
	return max(r.InputTokens-prev.InputTokens-prev.OutputTokens, MinUserTokens)
}

// WarmupItems prepares n warm-up requests shaped like the trace's first
// rows (cycling through them), without their times, shared prefixes or
// conversations: the rows themselves are replayed once, counted, and
// warm-ups must not fill the prefix cache the replay measures.
func (s *TraceSource) WarmupItems(ctx context.Context, seq0, n int) ([]Item, error) {
	items := make([]Item, n)
	for i := range items {
		r := &s.rows[i%len(s.rows)]
		it, err := s.b.shaped(ctx, seq0+i, Shape{PromptTokens: r.InputTokens, MaxTokens: r.OutputTokens, Images: r.Images}, seq0+i)
		if err != nil {
			return nil, err
		}
		items[i] = it
	}
	return items, nil
}

// row prepares the request of row r, numbered seq, as a single request or
// a session's first turn: due at the row's arrival, with its group's
// shared prefix or its hash_ids blocks.
func (s *TraceSource) row(ctx context.Context, seq int, r *trace.Row) (Item, error) {
	sh := Shape{PromptTokens: r.InputTokens, MaxTokens: r.OutputTokens, Images: r.Images}
	var it Item
	var err error
	switch {
	case r.PrefixGroup != "" && s.grouped != nil:
		it, err = s.grouped.shaped(ctx, seq, sh, s.groups["g:"+r.PrefixGroup])
	case len(r.HashIDs) > 0 && s.b.mode != Unenforced:
		it = Item{Request: backend.Request{MaxTokens: sh.MaxTokens, Seed: s.b.spec.Seed, ReusePrefix: true}, ExpectedPromptTokens: sh.PromptTokens}
		it.Request.Prompt = s.blockText(seq, r.InputTokens, r.HashIDs)
		g := s.groups["h:"+strconv.Itoa(r.HashIDs[0])]
		it.PrefixGroup = &g
		err = s.b.addImages(&it, seq, sh.Images)
	default:
		it, err = s.b.shaped(ctx, seq, sh, seq)
	}
	it.Due, it.Trace = r.At, r
	return it, err
}

// blockText is a prompt of about tokens tokens made of the blocks ids
// name, in order: block i is the first MooncakeBlockTokens tokens (fewer
// for the last) of the text of id ids[i], the same in every request that
// lists it; when the ids cover fewer tokens than the prompt, request
// seq's own text follows. The server's template tokens (the calibration's
// fixed part) come off the end.
func (s *TraceSource) blockText(seq, tokens int, ids []int) string {
	b := s.b
	chars := func(n int) int { return max(int(math.Round(float64(n)/b.perChar)), 1) }
	remaining := tokens - int(math.Round(b.fixed))
	var parts []string
	for _, id := range ids {
		if remaining <= 0 {
			break
		}
		n := min(trace.MooncakeBlockTokens, remaining)
		parts = append(parts, s.blocks.Text(id, chars(n)))
		remaining -= n
	}
	if remaining > 0 || len(parts) == 0 {
		parts = append(parts, b.prompts.Text(seq, chars(max(remaining, 1))))
	}
	return strings.Join(parts, " ")
}

// traceNotes are the run warnings a replay of t owes its reader: what
// reading it skipped, and where the replay departs from the rows.
func traceNotes(t *trace.Trace, arrivals []traceArrival) []string {
	notes := slices.Clone(t.Notes)
	var sessions, turns, short, lone int
	var firstShort *trace.Row
	for _, a := range arrivals {
		if !a.session {
			if a.rows[0].Turn > 0 {
				lone++
			}
			continue
		}
		sessions++
		turns += len(a.rows)
		for k := 1; k < len(a.rows); k++ {
			if prev, r := a.rows[k-1], a.rows[k]; r.InputTokens-prev.InputTokens-prev.OutputTokens < MinUserTokens {
				short++
				if firstShort == nil {
					firstShort = r
				}
			}
		}
	}
	if sessions > 0 {
		notes = append(notes, fmt.Sprintf("trace: %d sessions (%d requests) replayed as conversations: each later turn sends the conversation so far with the server's real answers, so its prompt is the server's, near the row's input_tokens when the answers have their rows' lengths", sessions, turns))
	}
	if short > 0 {
		notes = append(notes, fmt.Sprintf("trace: %d later turns (the first at line %d) give an input_tokens below the previous turn's prompt and answer; their new messages are %d tokens (input_tokens is the whole prompt, conversation included)", short, firstShort.Line, MinUserTokens))
	}
	if lone > 0 {
		notes = append(notes, fmt.Sprintf("trace: %d rows give a turn but no session; each is replayed as a single request", lone))
	}
	return notes
}
