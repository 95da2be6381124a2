package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/servebench/servebench/document"
	"github.com/servebench/servebench/internal/ptr"
	"github.com/servebench/servebench/internal/safetext"
)

// Merged returns the set as one result document of the shapes of examples/
// (document.Document), so that `report --format json` merges files into a
// document `report` reads again.
// Sweep runs keep their levels (merged, sorted); batch records carry their
// run label; what report found (merge conflicts, derived fields that do not
// recompute) is added to the warnings of the run, record or document.
// Document-wide fields (gpu, runtime, profile, method) are kept where the
// sources agree on them.
func (s *Set) Merged() *document.Document {
	out := &document.Document{Warnings: s.Warnings, Calibration: s.Calibration}
	for _, r := range s.Runs {
		switch r.Kind {
		case KindSweep:
			out.Runs = append(out.Runs, *r.Sweep)
		case KindBatch:
			out.Records = append(out.Records, r.Records...)
		}
	}
	for i, src := range s.Sources {
		d := src.Doc
		if i == 0 {
			out.GPU, out.GPUGiB, out.Runtime, out.Profile, out.Method, out.Planner = d.GPU, d.GPUGiB, d.Runtime, d.Profile, d.Method, d.Planner
			out.RunDates = append(out.RunDates, d.RunDates...)
			out.Complete = d.Complete
			continue
		}
		out.RunDates = append(out.RunDates, d.RunDates...)
		if !ptr.Equal(out.GPU, d.GPU) {
			out.GPU = nil
		}
		if out.GPUGiB != nil && (d.GPUGiB == nil || *d.GPUGiB != *out.GPUGiB) {
			out.GPUGiB = nil
		}
		if !ptr.Equal(out.Runtime, d.Runtime) {
			out.Runtime = nil
		}
		if out.Method != d.Method {
			out.Method = ""
		}
		if d.Planner != nil && out.Planner == nil {
			out.Planner = d.Planner
		}
		if d.Complete != nil && !*d.Complete {
			out.Complete = d.Complete
		}
	}
	if len(s.Sources) > 1 {
		// Profiles of different files need not match; keep none rather
		// than one that describes only some records.
		out.Profile = nil
	}
	return out
}

// WriteJSON writes the merged document of s (Merged) as JSON; the capacity
// answer for a latency budget is added by slo.WriteJSON.
func WriteJSON(w io.Writer, s *Set) error { return EncodeJSON(w, s.Merged()) }

// EncodeJSON writes v as `report --format json` writes its document: one
// JSON value, indented by one space, and a newline. Control characters and
// bidirectional overrides in strings are written as \uXXXX escapes
// (safetext.JSON): the document decodes to the same strings, and a
// terminal or editor showing it shows no raw control.
func EncodeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(safetext.JSON(buf.Bytes()))
	return err
}
