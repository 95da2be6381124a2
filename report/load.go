package report

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/filecap"
	"github.com/servebench/servebench/record"
	"github.com/servebench/servebench/summary"
)

// ReadSources reads the inputs named by paths, in order. A ".jsonl" (or
// ".ndjson") file is a records file of `servebench run`: its document is
// rebuilt from the per-request records (summary.Document), so a report can
// be re-made without the server. Any other file is a result document. A
// file that cannot be read gives a *document.DecodeError naming the file
// and the JSON path or line of the bad value.
func ReadSources(paths []string) ([]Source, error) { return ReadSourcesWith(paths, summary.Options{}) }

// ReadSourcesWith is ReadSources with the options records files are
// summarized with (report --slo: goodput against its budget).
func ReadSourcesWith(paths []string, opts summary.Options) ([]Source, error) {
	out := make([]Source, 0, len(paths))
	for _, p := range paths {
		var doc *document.Document
		var err error
		if IsRecordsFile(p) {
			doc, err = readRecords(p, opts)
		} else {
			doc, err = readDocument(p)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Source{File: p, Doc: doc})
	}
	return out, nil
}

// readDocument reads a result document: servebench's, or a foreign
// tool's result file (IsVLLMResult) read as one.
func readDocument(path string) (*document.Document, error) {
	data, err := filecap.ReadFile(path, filecap.Document, "a result document")
	if err == nil && IsVLLMResult(data) {
		return ReadVLLM(path, data)
	}
	return document.ReadFile(path)
}

// IsRecordsFile reports whether path names a JSON Lines records file.
func IsRecordsFile(path string) bool {
	return strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".ndjson")
}

// readRecords streams the records file at path through a summary.Builder
// (record.Scan) with opts: memory holds what the summaries need, never the
// file's lines. A last line the file ends inside of (a crash, a full disk)
// is left out with a warning; any other bad line is an error naming it.
func readRecords(path string, opts summary.Options) (*document.Document, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &document.DecodeError{File: path, Msg: "cannot read: " + msg}
	}
	defer f.Close()
	b := summary.NewBuilder(opts)
	lines, runLines := 0, 0
	cut, err := record.Scan(f, func(l record.Line) {
		lines++
		if l.Header != nil || l.Result != nil {
			runLines++
		}
		b.Add(l)
	})
	if err != nil {
		return nil, &document.DecodeError{File: path, Msg: "not a records file: " + err.Error()}
	}
	if runLines == 0 {
		return nil, &document.DecodeError{File: path, Msg: "no records in the file"}
	}
	doc := b.Document()
	if cut != nil {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("line %d is cut short (the file ends inside it, as a crash or a full disk leaves it) and was left out; the %d complete lines before it are used (%v)",
			cut.Line, lines, cut.Err))
	}
	return &doc, nil
}
