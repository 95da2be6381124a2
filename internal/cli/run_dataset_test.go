package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// datasetFixture is a dataset fixture of package workload (written for
// its tests: three JSON Lines prompts, the second with a data: URL image).
var datasetFixture = filepath.Join(repoRoot, "workload", "testdata", "dataset", "prompts.jsonl")

// TestRunDatasetAgainstSimServe sends a dataset's rows to `sim serve`
// (vLLM's personality, whose tokenizer counts a token per word and 8 for
// the chat template): five requests wrap around the three rows in file
// order, each prompt as the row wrote it; the texts reach the records only
// with --records-text, and the report never.
func TestRunDatasetAgainstSimServe(t *testing.T) {
	_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM, Spec: sim.Spec{GPU: "H100 80GB", Model: "qwen2.5-vl-7b"}})
	tok, err := backend.New(backend.Config{Kind: backend.VLLM, BaseURL: url, Model: "qwen2.5-vl-7b"})
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{"Explain prefix caching in one sentence.", "What colour is this?", "List three uses of a benchmark."}
	for _, withText := range []bool{false, true} {
		dir := t.TempDir()
		report, recs := filepath.Join(dir, "report.json"), filepath.Join(dir, "records.jsonl")
		args := []string{"run", "--backend", "vllm", "--url", url, "--model", "qwen2.5-vl-7b",
			"--dataset", datasetFixture, "--concurrency", "1", "--requests", "5", "--warmup", "0", "--max-tokens", "4",
			"--gpu", "none", "--out", report, "--records", recs, "--quiet"}
		if withText {
			args = append(args, "--records-text")
		}
		if _, stderr, err := cliRun(context.Background(), args...); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		f := readRecords(t, recs)
		if len(f.Results) != 5 {
			t.Fatalf("%d results, want 5", len(f.Results))
		}
		for i, r := range f.Results {
			row := rows[i%3]
			own, err := tok.Tokenize(context.Background(), row)
			if err != nil {
				t.Fatal(err)
			}
			// The chat template adds 8 tokens (simserve/tokenizer.go);
			// the image row's image adds its own.
			wantTokens := own + 8
			if !r.OK() || r.PromptTokens == nil || (i%3 != 1 && *r.PromptTokens != wantTokens) || (i%3 == 1 && *r.PromptTokens <= wantTokens) {
				t.Errorf("request %d: ok %v (%s), prompt tokens %v; want %d (row %q)", i, r.OK(), r.Error, ptrStr(r.PromptTokens), wantTokens, row)
			}
			if withText && (r.PromptText != row || r.AnswerText == "") {
				t.Errorf("request %d: prompt_text %q, answer_text %q; want %q and the answer", i, r.PromptText, r.AnswerText, row)
			}
		}
		doc := readDoc(t, report)
		run := doc.Runs[0]
		if run.Dataset == nil || run.Dataset.File != "prompts.jsonl" || run.Dataset.Format != "jsonl-prompt" || run.Dataset.Rows != 3 {
			t.Errorf("run.dataset = %+v", run.Dataset)
		}
		if !slices.ContainsFunc(run.Warnings, func(w string) bool { return strings.Contains(w, "rows are reused") }) {
			t.Errorf("warnings %q lack the wrap-around note", run.Warnings)
		}
		for path, mayHold := range map[string]bool{report: false, recs: withText} {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), "prefix caching"); got != mayHold {
				t.Errorf("%s holds a prompt's text: %v, want %v", filepath.Base(path), got, mayHold)
			}
		}
	}
}

func TestRunDatasetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(repoRoot, "workload", "testdata", "dataset", "bad-row.jsonl")
	base := []string{"run", "--backend", "vllm", "--url", "http://127.0.0.1:9", "--model", "m"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", bad}, "bad-row.jsonl:3: "},
		{[]string{"--dataset", filepath.Join(dir, "none.jsonl")}, "--dataset: open"},
		{[]string{"--dataset", datasetFixture, "--dataset-format", "csv"}, `unknown dataset format "csv"`},
		{[]string{"--dataset", datasetFixture, "--dataset-format", "sharegpt"}, "a ShareGPT file is a JSON array"},
		{[]string{"--dataset", datasetFixture, "--mix", "text:1"}, "--mix does not apply with --dataset"},
		{[]string{"--dataset", datasetFixture, "--scenario", "multiturn"}, "multiturn does not apply with --dataset"},
		{[]string{"--dataset-shuffle"}, "--dataset-shuffle applies only with --dataset"},
		{[]string{"--skip-bad-rows"}, "--skip-bad-rows applies only with --dataset"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := cliRun(context.Background(), append(slices.Clone(base), tc.args...)...)
			if err == nil || ExitCode(err, new(strings.Builder)) != 2 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v; want one line, exit 2, with %q", err, tc.want)
			}
		})
	}
}

func ptrStr(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
