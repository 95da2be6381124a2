package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/safetext"
)

// hostileDoc is a result document whose strings carry what a hostile
// server or file can put there: ESC sequences, NUL, a C1 CSI, DEL and the
// bidirectional override U+202E, in the label, model, backend, scenario,
// runtime, GPU name and warnings.
func hostileDoc(t *testing.T) (path string, doc map[string]any) {
	t.Helper()
	evil := func(s string) string { return s + "\x1b[2J\x00\u009b31m\x7f\u202egpj.exe" }
	doc = map[string]any{
		"gpu":      evil("RTX"),
		"runtime":  evil("vLLM 0.9"),
		"warnings": []string{evil("document warning")},
		"runs": []map[string]any{{
			"label": evil("run"), "backend": evil("vllm"), "model": evil("model"), "scenario": evil("chat"),
			"prompt_tokens": 32, "max_tokens": 128, "started_at": "2026-01-01 00:00 UTC", "gpu": evil("GPU"), "gpu_gib": 16,
			"kv_cache": map[string]any{},
			"warnings": []string{evil("run warning")},
			"levels": []map[string]any{{
				"concurrency": 1, "requests": 4, "errors": 0, "throughput_tok_s": 100.5, "ttft_p50_ms": 12.5, "ttft_p95_ms": 20,
				"tpot_p50_ms": 5, "peak_vram_gib": nil, "peak_kv_cache_usage": nil, "preemptions": nil, "mean_prompt_tokens": 32,
				"warnings": []string{evil("level warning")},
			}},
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, doc
}

// rawHazards lists the control characters and bidirectional overrides
// left raw in s.
func rawHazards(s string) []string {
	var out []string
	for _, r := range s {
		if safetext.Hazard(r) && r != '\n' && r != '\t' {
			out = append(out, string(safetext.Line(string(r))))
		}
	}
	return out
}

// TestReportNeutralisesControlCharacters (item 16): strings
// with ESC, NUL, C1, DEL and U+202E from a document reach no output
// format raw. The human formats show visible escapes (\x1b, \u202e); JSON
// stays valid, escapes them, and decodes to the same strings; CSV keeps
// its formula guard; the charts' SVG stays well-formed XML.
func TestReportNeutralisesControlCharacters(t *testing.T) {
	in, _ := hostileDoc(t)
	for _, format := range []string{"table", "markdown", "csv", "json", "html", "gobench"} {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := run(t, "report", in, "--format", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if bad := rawHazards(stdout); len(bad) > 0 {
				t.Errorf("stdout keeps raw %v:\n%q", bad, stdout)
			}
			if bad := rawHazards(stderr); len(bad) > 0 {
				t.Errorf("stderr keeps raw %v:\n%q", bad, stderr)
			}
			switch format {
			case "markdown": // backslashes escaped: renders as \x1b[2J
				if !strings.Contains(stdout, `\\x1b\[2J`) || !strings.Contains(stdout, `\\u202egpj.exe`) {
					t.Errorf("markdown does not show the controls as visible escapes:\n%s", stdout)
				}
			case "table", "html", "csv":
				if !strings.Contains(stdout, `\x1b[2J`) || !strings.Contains(stdout, `\u202egpj.exe`) {
					t.Errorf("%s does not show the controls as visible escapes:\n%s", format, stdout)
				}
			case "json":
				var back struct {
					Runs []struct {
						Label string `json:"label"`
					} `json:"runs"`
				}
				if err := json.Unmarshal([]byte(stdout), &back); err != nil {
					t.Fatalf("JSON output is not valid: %v", err)
				}
				if want := "run\x1b[2J\x00\u009b31m\x7f\u202egpj.exe"; len(back.Runs) != 1 || back.Runs[0].Label != want {
					t.Errorf("JSON label decodes to %q, want %q", back.Runs[0].Label, want)
				}
			}
		})
	}
	t.Run("charts", func(t *testing.T) {
		dir := t.TempDir()
		if code, _, stderr := run(t, "report", in, "--charts", dir); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		svg, err := os.ReadFile(filepath.Join(dir, "throughput.svg"))
		if err != nil {
			t.Fatal(err)
		}
		if bad := rawHazards(string(svg)); len(bad) > 0 {
			t.Errorf("SVG keeps raw %v", bad)
		}
		if err := xmlWellFormed(svg); err != nil {
			t.Errorf("SVG is not well-formed XML: %v", err)
		}
	})
	t.Run("error line", func(t *testing.T) {
		_, _, stderr := run(t, "report", filepath.Join(t.TempDir(), "no\x1b[2Jsuch\u202e.json"))
		if bad := rawHazards(stderr); len(bad) > 0 || !strings.Contains(stderr, `no\x1b[2Jsuch\u202e.json`) {
			t.Errorf("error line %q keeps raw %v", stderr, bad)
		}
	})
	t.Run("csv formula guard kept", func(t *testing.T) {
		path, doc := hostileDoc(t)
		doc["runs"].([]map[string]any)[0]["label"] = "=HYPERLINK(\"x\")\x1b"
		b, _ := json.Marshal(doc)
		os.WriteFile(path, b, 0o644)
		_, stdout, _ := run(t, "report", path, "--format", "csv")
		if !strings.Contains(stdout, `'=HYPERLINK(""x"")\x1b`) {
			t.Errorf("CSV lost the formula guard:\n%s", stdout)
		}
	})
}

// TestReportAbsurdLatencies (item 1): a level whose TTFT is
// 1e308 ms (or another value no axis can span) renders HTML and charts in
// bounded time and memory, the tables show "—" for it, and the report
// warns. Before the fix the log axis's tick loop ran until memory ran
// out.
func TestReportAbsurdLatencies(t *testing.T) {
	cases := []struct {
		name   string
		level  map[string]any
		absurd string
	}{
		{"1e308 TTFT", map[string]any{"ttft_p50_ms": 1e308, "ttft_p95_ms": 1e308}, "ttft_p50_ms"},
		{"max float throughput", map[string]any{"throughput_tok_s": 1.7976931348623157e308}, "throughput_tok_s"},
		{"negative huge and tiny", map[string]any{"ttft_p50_ms": -1e308, "ttft_p95_ms": 1e-300, "tpot_p50_ms": -1e300}, "ttft_p50_ms"},
		{"negative KV usage", map[string]any{"peak_kv_cache_usage": -1e308, "peak_vram_gib": 1e308}, "peak_vram_gib"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, doc := hostileDoc(t)
			lv := doc["runs"].([]map[string]any)[0]["levels"].([]map[string]any)
			second := map[string]any{"concurrency": 4, "requests": 4, "errors": 0, "throughput_tok_s": 300, "ttft_p50_ms": 30, "ttft_p95_ms": 40, "tpot_p50_ms": 6}
			for k, v := range tc.level {
				lv[0][k] = v
			}
			doc["runs"].([]map[string]any)[0]["levels"] = append(lv, second)
			b, _ := json.Marshal(doc)
			os.WriteFile(path, b, 0o644)
			dir := t.TempDir()
			start := time.Now()
			code, stdout, stderr := run(t, "report", path, "--format", "html", "--charts", dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// The defect was a tick loop that never ended (and ran out of
			// memory): any bound that a finite render meets on a starved
			// machine tells them apart. The PNG charts go through headless
			// Chromium, which took 45 s here beside two busy loops.
			if el := time.Since(start); el > 4*time.Minute {
				t.Errorf("report took %s", el)
			}
			if len(stdout) > 1<<20 {
				t.Errorf("HTML is %d bytes: the axis was not clamped", len(stdout))
			}
			if strings.Contains(stdout, "000000000000000000000") {
				t.Error("HTML prints an absurd value in full")
			}
			code, table, _ := run(t, "report", path)
			if code != 0 || !strings.Contains(table, "out of range") || !strings.Contains(table, tc.absurd) {
				t.Errorf("table does not warn about %s being out of range:\n%s", tc.absurd, table)
			}
		})
	}
}

// xmlWellFormed decodes b token by token.
func xmlWellFormed(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
