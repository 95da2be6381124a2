package workload

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/trace"
)

// TraceSource prepares the requests of a replayed trace (run --trace): one
// per row, in the trace's order, each due at its row's arrival (Item.Due)
// with the row's prompt and output lengths and images. Prompts are unique
// per request like every other workload's, except where a Mooncake row
// lists hash_ids: its prompt is then built block by block, each block's
// text a function of its id only, so rows that list the same leading ids
// share that prefix as the trace says (blocks of
// trace.MooncakeBlockTokens tokens; their length is modelled from the
// calibration's tokens per character, so such prompts are near, not
// exactly at, their length).
//
// A row's session, turn and prefix group are kept in Item.Trace; this
// source sends every row as an independent request at its own time (see
// Notes).
type TraceSource struct {
	b      *Builder
	rows   []trace.Row
	blocks *Prompts
}

// NewTraceSource returns the source of t's rows, built by b; b's Spec
// gives the seed and the image size and format, and its PromptTokens and
// MaxTokens should be t's medians (TraceSpec), where b's calibration is
// most exact. Calibrate b before Items.
func NewTraceSource(b *Builder, t *trace.Trace) *TraceSource {
	return &TraceSource{b: b, rows: t.Rows, blocks: NewPrompts(b.spec.Seed ^ 0x6b10c5)}
}

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

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Items prepares the requests of rows 0 … n−1, numbered seq0 on.
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
		it.Due, it.Trace = row.At, row
		items[i] = it
	}
	return items, nil
}

// WarmupItems prepares n warm-up requests shaped like the trace's first
// rows (cycling through them), without their times: the rows themselves
// are replayed once, counted.
func (s *TraceSource) WarmupItems(ctx context.Context, seq0, n int) ([]Item, error) {
	items := make([]Item, n)
	for i := range items {
		row := s.rows[i%len(s.rows)]
		row.HashIDs = nil // warm-ups must not fill the prefix cache the replay measures
		it, err := s.row(ctx, seq0+i, &row)
		if err != nil {
			return nil, err
		}
		items[i] = it
	}
	return items, nil
}

func (s *TraceSource) row(ctx context.Context, seq int, r *trace.Row) (Item, error) {
	sh := Shape{PromptTokens: r.InputTokens, MaxTokens: r.OutputTokens, Images: r.Images}
	if len(r.HashIDs) == 0 || s.b.mode == Unenforced {
		return s.b.shaped(ctx, seq, sh)
	}
	it := Item{Request: backend.Request{MaxTokens: sh.MaxTokens, Seed: s.b.spec.Seed}, ExpectedPromptTokens: sh.PromptTokens}
	it.Request.Prompt = s.blockText(seq, r.InputTokens, r.HashIDs)
	return it, s.b.addImages(&it, seq, sh.Images)
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

// TraceNotes are the run warnings a replay of t owes its reader: what the
// trace holds that this replay does not reproduce, and what reading it
// skipped.
func TraceNotes(t *trace.Trace) []string {
	notes := slices.Clone(t.Notes)
	var sessions, groups int
	for _, r := range t.Rows {
		if r.Session != "" || r.Turn > 0 {
			sessions++
		}
		if r.PrefixGroup != "" {
			groups++
		}
	}
	if sessions > 0 {
		notes = append(notes, fmt.Sprintf("trace: %d rows name a session or turn; each is replayed as an independent request at its own time with a prompt of its own length (the conversation is not carried from turn to turn)", sessions))
	}
	if groups > 0 {
		notes = append(notes, fmt.Sprintf("trace: %d rows name a prefix_group; their prompts do not share a prefix yet (each is unique from its first word)", groups))
	}
	return notes
}
