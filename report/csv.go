package report

import (
	"encoding/csv"

	"github.com/servebench/servebench/document"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvHeader names the CSV columns; units are in the names, as in
// examples/multi-backend-sweep.json.
var csvHeader = []string{
	"file", "label", "kind", "backend", "workload", "model", "concurrency",
	"requests", "errors", "throughput_tok_s", "per_request_tok_s",
	"ttft_p50_ms", "ttft_p95_ms", "tpot_p50_ms", "batch_mean_tpot_ms",
	"peak_vram_gib", "peak_kv_cache_usage", "preemptions", "repeat_tok_s",
	"simulated",
}

// csvFigures are the figure table's CSV columns appended after
// csvHeader's: every one not already there, in the table's order.
func csvFigures() []*document.FigureSpec {
	var out []*document.FigureSpec
	figs := document.Figures()
	for i := range figs {
		if f := &figs[i]; f.Is(document.InCSV) && f.Key != "" && f.Value != nil && !slices.Contains(csvHeader, string(f.Key)) {
			out = append(out, f)
		}
	}
	return out
}

// WriteCSV writes one row per run and concurrency level with full
// precision: csvHeader's columns (simulated is "true" for a run the
// simulator predicted, so a spreadsheet of shared rows still says so) (the examples' figures, which batch
// records have too), then every other figure of the figure table that
// shows in CSV (the latency means and percentiles, ttft_mean_ms …
// e2e_p99_ms, and any added later). A missing value is an empty cell, never 0; repeat_tok_s lists
// the per-repeat throughputs separated by spaces. Text cells are guarded
// against formula injection (csvText).
func WriteCSV(w io.Writer, s *Set) error {
	cw := csv.NewWriter(w)
	header := slices.Clone(csvHeader)
	extra := csvFigures()
	for _, f := range extra {
		header = append(header, string(f.Key))
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range s.Runs {
		for _, p := range r.Points {
			samples := ""
			for i, v := range p.Samples {
				if i > 0 {
					samples += " "
				}
				samples += csvFloat(&v)
			}
			row := []string{
				csvText(r.Files[0]), csvText(r.Label), string(r.Kind), csvText(r.Backend), csvText(r.Workload), csvText(r.Model), strconv.Itoa(p.Concurrency),
				csvInt(p.Requests), csvInt(p.Errors), csvFloat(p.ThroughputTokS), csvFloat(p.PerRequestTokS),
				csvFloat(p.TTFTP50Ms), csvFloat(p.TTFTP95Ms), csvFloat(p.TPOTP50Ms), csvFloat(p.BatchTPOTMs),
				csvFloat(p.PeakVRAMGiB), csvFloat(p.PeakKVCacheUsage), csvFloat(p.Preemptions), samples,
				strconv.FormatBool(r.Simulated()),
			}
			for _, f := range extra {
				var v *float64
				if p.Level != nil {
					v = f.Value(p.Level)
				}
				row = append(row, csvFloat(v))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText makes a text cell that comes from a file name, a label or a
// server (model, backend, workload) safe: control characters and
// bidirectional overrides become visible escapes (Clean), and the cell is
// guarded against spreadsheet formula injection (OWASP "CSV Injection"):
// a cell starting with =, +, -, @, a tab or a carriage return gets a
// leading single quote, so that a spreadsheet shows it as text instead of
// evaluating it. A cell that is a number (-1.5) is left as it is.
func csvText(s string) string {
	s = Clean(s)
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// csvFloat is *v in its shortest exact form, and "" (an empty cell) for nil.
func csvFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// csvInt is *v, and "" (an empty cell) for nil.
func csvInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}
