package cli

import (
	"context"
	"flag"
	"path/filepath"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/workload"
)

// `servebench run`'s own prompts: a prompt dataset (--dataset,
// --dataset-format, --dataset-shuffle, --skip-bad-rows) sent instead of
// synthetic prompts, and --records-text, which alone lets prompt and
// answer texts into the records.

// datasetFlags are the raw values of the dataset flags.
type datasetFlags struct {
	file, format     *string
	shuffle, skipBad *bool
	recordsText      *bool
}

// defineDatasetFlags adds the dataset flags to run's flags.
func defineDatasetFlags(fs *flag.FlagSet) datasetFlags {
	return datasetFlags{
		file:        fs.String("dataset", "", "send the prompts of `FILE`: ShareGPT JSON, or JSON Lines with \"prompt\" or OpenAI \"messages\" (rows may carry image paths or data: URLs); rows in file order, reused from the first when a run needs more; never cut (with --prompt-tokens, rows outside ±10% are skipped)"),
		format:      fs.String("dataset-format", "auto", "layout of --dataset: auto, sharegpt, jsonl-prompt or jsonl-messages"),
		shuffle:     fs.Bool("dataset-shuffle", false, "draw --dataset's rows in an order shuffled by --seed instead of file order"),
		skipBad:     fs.Bool("skip-bad-rows", false, "leave --dataset's malformed rows out (counted in a warning) instead of stopping at the first"),
		recordsText: fs.Bool("records-text", false, "write each request's prompt and answer texts into --records (off: no text of a prompt or answer reaches any output)"),
	}
}

// datasetExcludes are the flags that make their own prompts, which a
// dataset replaces.
var datasetExcludes = []string{"trace", "mix", "shared-prefix-tokens", "prefix-groups", "image-size", "image-format"}

// datasetConfig reads the dataset flags into cfg.workloadConfig after
// the workload step: the file is read (and every row checked) now, so a
// malformed row is a usage error before anything is sent. --records-text
// is an output flag (outputs reads it).
func (f *runFlags) datasetConfig(cfg *runConfig, set map[string]bool) error {
	df := f.dataset
	if *df.file == "" {
		for _, name := range []string{"dataset-format", "dataset-shuffle", "skip-bad-rows"} {
			if set[name] {
				return configf("--%s applies only with --dataset", name)
			}
		}
		return nil
	}
	for _, name := range datasetExcludes {
		if set[name] {
			return configf("--%s does not apply with --dataset (the dataset's rows are the prompts)", name)
		}
	}
	if cfg.Scenario == workload.Multiturn {
		return configf("--scenario multiturn does not apply with --dataset (each row is one request with its own messages)")
	}
	format, err := workload.ParseDatasetFormat(*df.format)
	if err != nil {
		return configf("--dataset-format: %v", err)
	}
	d, err := workload.ReadDataset(*df.file, workload.DatasetOptions{Format: format, SkipBad: *df.skipBad})
	if err != nil {
		return configf("--dataset: %v", err)
	}
	cfg.Dataset, cfg.DatasetShuffle = d, *df.shuffle
	// The scenario's prompt length is not a filter: only an explicit
	// --prompt-tokens is.
	cfg.DatasetPromptTokens = 0
	if set["prompt-tokens"] {
		cfg.DatasetPromptTokens = cfg.PromptTokens
	}
	cfg.PromptTokens = cfg.DatasetPromptTokens
	return nil
}

// datasetSource prepares the dataset's requests, for as many as the
// sweep will send (its levels and warm-ups).
func datasetSource(ctx context.Context, cfg runConfig, client backend.Client) (runSource, error) {
	spec := workload.DatasetSpec{MaxTokens: cfg.MaxTokens, Seed: cfg.Seed, Shuffle: cfg.DatasetShuffle,
		PromptTokens: cfg.DatasetPromptTokens, Need: plannedRequests(cfg.Method, cfg.levels(), cfg.Warmup)}
	s, err := workload.NewDatasetSource(ctx, cfg.Dataset, spec, client)
	if err != nil {
		return runSource{}, err
	}
	return runSource{requests: s, notes: s.Notes()}, nil
}

// plannedRequests is how many requests levels send under method m,
// warm-ups included (a pool level's are at least its concurrency:
// load.Method.Warmups).
func plannedRequests(m load.Method, levels []load.Level, warmup int) int {
	n := 0
	for _, l := range levels {
		n += m.Total(l) + m.Warmups(l, warmup)
	}
	return n
}

// datasetInfo is the run's dataset as its records header names it; nil
// without --dataset.
func datasetInfo(cfg runConfig) *record.DatasetInfo {
	d := cfg.Dataset
	if d == nil {
		return nil
	}
	return &record.DatasetInfo{File: filepath.Base(d.File), Format: string(d.Format), Rows: len(d.Rows), SkippedRows: d.Skipped, Shuffled: cfg.DatasetShuffle}
}
