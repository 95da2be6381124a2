package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/servebench/servebench/backend"
)

// DatasetSpec says how a dataset's rows become requests.
type DatasetSpec struct {
	// MaxTokens is the output tokens every request asks for.
	MaxTokens int
	// Seed seeds the shuffle and is sent as each request's seed.
	Seed int64
	// Shuffle draws rows in an order shuffled by Seed instead of file
	// order.
	Shuffle bool
	// PromptTokens, when positive, keeps only rows whose prompt is within
	// ±DatasetTolerance of it; rows are never cut to fit.
	PromptTokens int
	// Need is how many requests the run will ask for (all levels and
	// warm-ups): rows are examined until that many are usable, and a run
	// that needs more than the file holds reuses them (one note).
	Need int
}

// DatasetTolerance is how far a row's prompt may be from
// DatasetSpec.PromptTokens, as a fraction of it.
const DatasetTolerance = 0.10

// DatasetSource prepares the requests of a prompt dataset (run
// --dataset): request seq sends usable row seq mod the usable rows, in
// file order or shuffled, each with its own messages and images and
// Spec.MaxTokens output tokens. Its texts are the user's: they reach no
// report, and records only with --records-text.
type DatasetSource struct {
	d      *Dataset
	spec   DatasetSpec
	usable []int // indices into d.Rows, in send order
	notes  []string
}

// NewDatasetSource returns the source of d's rows. With a prompt-length
// target it counts rows' prompts with the server's tokenizer (the text of
// the row's messages, without the chat template), or at 4 characters per
// token where the server has none, until spec.Need rows are usable.
func NewDatasetSource(ctx context.Context, d *Dataset, spec DatasetSpec, client backend.Client) (*DatasetSource, error) {
	s := &DatasetSource{d: d, spec: spec}
	order := make([]int, len(d.Rows))
	for i := range order {
		order[i] = i
	}
	if spec.Shuffle {
		r := rand.New(rand.NewPCG(uint64(spec.Seed), 0xda7a5e7))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	if d.Skipped > 0 {
		s.notes = append(s.notes, fmt.Sprintf("dataset %s: %d malformed rows skipped (--skip-bad-rows)", d.File, d.Skipped))
	}
	if spec.PromptTokens <= 0 {
		s.usable = order
	} else if err := s.filter(ctx, order, client); err != nil {
		return nil, err
	}
	if len(s.usable) == 0 {
		return nil, fmt.Errorf("dataset %s: no row within ±%.0f%% of --prompt-tokens %d", d.File, DatasetTolerance*100, spec.PromptTokens)
	}
	if spec.Need > len(s.usable) {
		s.notes = append(s.notes, fmt.Sprintf("dataset %s: the run asks for %d requests and %d rows are usable: rows are reused from the first once they run out", d.File, spec.Need, len(s.usable)))
	}
	return s, nil
}

// filter keeps the rows of order whose prompt is within the tolerance of
// the target, examining them in order until spec.Need are kept.
func (s *DatasetSource) filter(ctx context.Context, order []int, client backend.Client) error {
	lo := float64(s.spec.PromptTokens) * (1 - DatasetTolerance)
	hi := float64(s.spec.PromptTokens) * (1 + DatasetTolerance)
	estimated, skipped, examined := false, 0, 0
	for _, i := range order {
		if s.spec.Need > 0 && len(s.usable) >= s.spec.Need {
			break
		}
		examined++
		text := flatRow(&s.d.Rows[i])
		n, err := client.Tokenize(ctx, text)
		switch {
		case errors.Is(err, backend.ErrUnsupported):
			n, estimated = (len(text)+3)/4, true
		case err != nil:
			return fmt.Errorf("dataset %s: tokenize row of line %d: %w", s.d.File, s.d.Rows[i].Line, err)
		}
		if float64(n) < lo || float64(n) > hi {
			skipped++
			continue
		}
		s.usable = append(s.usable, i)
	}
	how := "counted by the server's tokenizer (message texts, without the chat template)"
	if estimated {
		how = "estimated at 4 characters per token (the server has no tokenizer endpoint)"
	}
	s.notes = append(s.notes, fmt.Sprintf("dataset %s: %d of %d rows examined were outside ±%.0f%% of --prompt-tokens %d and skipped; lengths %s",
		s.d.File, skipped, examined, DatasetTolerance*100, s.spec.PromptTokens, how))
	return nil
}

// flatRow is a row's messages as one text, for counting its tokens.
func flatRow(r *DatasetRow) string {
	return backend.FlatPrompt(&backend.Request{Prompt: r.Prompt, History: r.History})
}

// Notes are findings for the run's warnings: rows skipped, rows reused.
func (s *DatasetSource) Notes() []string { return s.notes }

// Usable is the number of rows the source sends before reusing any.
func (s *DatasetSource) Usable() int { return len(s.usable) }

// Items implements load.Source.
func (s *DatasetSource) Items(_ context.Context, seq0, n int) ([]Item, error) {
	items := make([]Item, n)
	for k := range items {
		row := &s.d.Rows[s.usable[mod(seq0+k, len(s.usable))]]
		items[k] = Item{Request: backend.Request{
			Prompt: row.Prompt, History: row.History, Images: row.Images,
			MaxTokens: s.spec.MaxTokens, Seed: s.spec.Seed,
		}}
	}
	return items, nil
}
